-- protect_secrets: a policy in two parts. A guard refuses any call whose
-- path argument names a secrets file (.env, private keys, credentials);
-- a post-execute listener blocks results whose text carries what looks like
-- a secret, so it never reaches the model.
local dsh = require("dsh")

local secret_files = {
  "^%.env$", "^%.env%.", "%.pem$", "%.key$", "^id_rsa", "^id_ed25519", "^credentials", "%.netrc$",
}

local function basename(path)
  return path:match("([^/\\]+)$") or path
end

local function is_secret_file(path)
  local name = basename(path)
  for _, p in ipairs(secret_files) do
    if name:find(p) then return true end
  end
  return false
end

dsh.tools.guard(function(exec)
  local args = exec.arguments
  if type(args) ~= "table" then return nil end
  for _, key in ipairs({ "path", "file", "from", "to" }) do
    local v = args[key]
    if type(v) == "string" and is_secret_file(v) then
      return "reading or writing " .. basename(v) .. " is not allowed: it holds secrets"
    end
  end
  return nil
end)

local secret_text = {
  "%-%-%-%-%-BEGIN [%u ]*PRIVATE KEY%-%-%-%-%-",
  "AKIA%u%u%u%u%u%u%u%u%u%u%u%u%u%u%u%u",
  "ghp_%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w",
  "sk%-%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w%w",
}

local function leaks(content)
  for _, block in ipairs(content) do
    if block.type == "text" then
      for _, p in ipairs(secret_text) do
        if block.text:find(p) then return true end
      end
    end
  end
  return false
end

dsh.on("tools/post-execute", function(exec, result, next)
  if leaks(result.content) then
    dsh.log.warn("blocked a result that looked like it held a secret", { tool = exec.name, callId = exec.callId })
    return {
      kind = "block",
      feedback = { { type = "text", text = "The result was withheld: it looked like it contained a secret." } },
    }
  end
  return next()
end)
