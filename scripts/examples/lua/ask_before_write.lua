-- ask_before_write: a policy, the Lua twin of ../plugins/ask_before_write.js.
-- Every write_file call asks the user first (through the approval service: a
-- terminal prompt, an MCP elicitation). A denial from a later listener wins
-- over the question.
local dsh = require("dsh")
local secrets = require("lib.secrets")

dsh.on("tools/pre-execute", function(exec, next)
  local decision = next()
  if exec.name ~= "write_file" or decision.kind ~= "allow" then return decision end
  local args = exec.arguments
  if type(args) ~= "table" then return decision end
  local path, content = args.path, args.content
  if type(path) ~= "string" or type(content) ~= "string" then return decision end -- invalid: the tool refuses it
  return {
    kind = "ask",
    -- Also the denial's message when nobody can be asked.
    reason = "writing " .. path .. " needs approval",
    -- Characters as JavaScript counts them (UTF-16 code units).
    displayReason = "Write " .. secrets.utf16_len(content) .. " characters to " .. path .. "?",
  }
end)
