-- protect_secrets: a guard, the Lua twin of ../plugins/protect_secrets.js.
-- No tool may touch secret files (.env, *.pem, id_rsa, …) by path. Guards
-- only deny, and see the arguments only: content that leaks through other
-- ways (a grep over a whole tree) is redact_tokens.lua's business.
local dsh = require("dsh")
local secrets = require("lib.secrets")

-- Arguments that name files or file patterns, in any tool.
local PATH_KEYS = { "path", "include", "pattern", "cwd" }

dsh.tools.guard(function(exec)
  local args = exec.arguments
  if type(args) ~= "table" then return nil end
  for _, key in ipairs(PATH_KEYS) do
    local value = args[key]
    -- grep's pattern is a regular expression, not a file name.
    if type(value) == "string" and not (exec.name == "grep" and key == "pattern") and secrets.is_secret_path(value) then
      return exec.name .. " may not touch " .. value .. ": it is a secret file"
    end
  end
  -- A shell command mentioning a secret file by name ("cat .env"): its words
  -- as command.split(/[\s;&|<>()'"`=]+/) makes them.
  if exec.name == "shell" and type(args.command) == "string" then
    for word in secrets.ascii_spaces(args.command):gmatch("[^%s;&|<>()'\"`=]+") do
      if secrets.is_secret_path(word) then return "shell may not touch " .. word .. ": it is a secret file" end
    end
  end
  return nil
end)
