-- deny_shell: a policy. Shell commands that remove recursively, format disks
-- or pipe a download into a shell are denied with a coded denial; anything
-- else goes on down the chain.
local dsh = require("dsh")

local dangerous = {
  { pattern = "%f[%w]rm%s+%-[%w]*[rR][%w]*f", why = "rm -rf is not allowed here" },
  { pattern = "%f[%w]rm%s+%-[%w]*f[%w]*[rR]", why = "rm -rf is not allowed here" },
  { pattern = "%f[%w]mkfs", why = "formatting a file system is not allowed here" },
  { pattern = "%f[%w]dd%s+.*of=/dev/", why = "writing to a device is not allowed here" },
  { pattern = "curl[^|]*|%s*%a*sh%f[%W]", why = "piping a download into a shell is not allowed here" },
  { pattern = "wget[^|]*|%s*%a*sh%f[%W]", why = "piping a download into a shell is not allowed here" },
}

dsh.on("tools/pre-execute", function(exec, next)
  local args = exec.arguments
  local command = type(args) == "table" and args.command
  if exec.name == "shell" and type(command) == "string" then
    for _, rule in ipairs(dangerous) do
      if command:find(rule.pattern) then
        return {
          kind = "deny",
          reason = rule.why,
          info = { name = "PolicyDenied", code = "SHELL_DENIED" },
        }
      end
    end
  end
  return next()
end)
