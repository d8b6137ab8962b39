-- redact_tokens: a policy, the Lua twin of ../plugins/redact_tokens.ts. It
-- keeps credentials (API keys such as sk-…, GitHub tokens ghp_…, AWS keys,
-- bearer tokens, private keys) out of what the model sees. It runs after the
-- other post-execute listeners and redacts their decision.
--
-- A success whose value holds a token gets a redacted value: the engine
-- re-validates it and re-renders content and meta from it, so the model's
-- text and the user's card agree. Otherwise only the content is redacted
-- (a failure's, or text a renderer made from the arguments).
local dsh = require("dsh")
local secrets = require("lib.secrets")

-- A replacement decision, carrying over the decision's contexts.
local function replace(d, fields)
  fields.additionalContexts = d.additionalContexts
  return fields
end

dsh.on("tools/post-execute", function(exec, result, next)
  local d = next()
  if d.kind == "block" then
    local content, n = secrets.redact_json(d.feedback)
    return n > 0 and replace(d, { kind = "block", feedback = content }) or d
  end
  if d.value ~= nil then
    local value, n = secrets.redact_json(d.value)
    return n > 0 and replace(d, { kind = "accept", value = value }) or d
  end
  if d.content ~= nil then
    local content, n = secrets.redact_json(d.content)
    return n > 0 and replace(d, { kind = "accept", content = content }) or d
  end
  if not result.isError then
    local value, n = secrets.redact_json(result.value)
    if n > 0 then return replace(d, { kind = "accept", value = value }) end
  end
  local content, n = secrets.redact_json(result.content)
  return n > 0 and replace(d, { kind = "accept", content = content }) or d
end)
