-- A policy for TestMCPNpm, the Lua twin of deny_write.js: refuse the
-- imported filesystem server's write_file, with a reason that names this
-- plugin's language.
local dsh = require("dsh")

dsh.on("tools/pre-execute", function(exec, next)
  if exec.name == "fs__write_file" then
    return {
      kind = "deny",
      reason = "fs__write_file is read-only here (Lua policy)",
      info = { name = "PolicyDenied", code = "READ_ONLY" },
    }
  end
  return next()
end)
