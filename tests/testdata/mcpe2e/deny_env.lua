-- A policy for TestMCPE2E, the Lua twin of deny_env.js, in front of the
-- imported servers served by dsh serve over HTTP: refuse
-- server-everything's get-env (it would show the server's environment to
-- the model), allow every other call.
local dsh = require("dsh")

dsh.on("tools/pre-execute", function(exec, next)
  if exec.name == "ev__get-env" then
    return {
      kind = "deny",
      reason = "ev__get-env would show the server's environment (Lua policy)",
      info = { name = "PolicyDenied", code = "ENV_HIDDEN" },
    }
  end
  return next()
end)
