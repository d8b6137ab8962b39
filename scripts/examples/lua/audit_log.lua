-- audit_log: an observer, the Lua twin of ../plugins/audit_log.js. One
-- structured log line per finished tool call, into the host's log (slog),
-- tagged with this plugin. Arguments are logged redacted and shortened.
local dsh = require("dsh")
local secrets = require("lib.secrets")

local MAX_ARGS = 200 -- characters (UTF-16 code units, as in JavaScript) of the arguments' JSON kept

local ARRAY = getmetatable(dsh.array {})

-- JSON text as JSON.stringify writes it, except that Lua tables do not keep
-- the order of keys: object members come in sorted key order.
local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }

local function quote(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == "\127" then return c end
    return escapes[c] or string.format("\\u%04x", c:byte())
  end) .. '"'
end

local function number(n)
  if n == math.floor(n) and math.abs(n) < 1e21 then return string.format("%.0f", n) end
  for p = 15, 17 do
    local s = string.format("%." .. p .. "g", n)
    if tonumber(s) == n then return s end
  end
  return string.format("%.17g", n)
end

local function stringify(v)
  local t = type(v)
  if t == "string" then return quote(v) end
  if t == "number" then return number(v) end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" then return "null" end -- dsh.null
  local parts = {}
  if getmetatable(v) == ARRAY or (getmetatable(v) == nil and #v > 0) then
    for i = 1, #v do parts[i] = stringify(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = quote(k) .. ":" .. stringify(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

dsh.on("tools/result", function(exec, result)
  local args = "(not JSON)"
  if exec.arguments ~= nil then args = (secrets.redact_text(stringify(exec.arguments))) end
  if secrets.utf16_len(args) > MAX_ARGS then args = secrets.utf16_prefix(args, MAX_ARGS) .. "…" end
  local fields = { tool = exec.name, callId = exec.callId, args = args, outcome = result.isError and "error" or "ok" }
  if exec.rootCallId ~= exec.callId then fields.rootCallId = exec.rootCallId end
  if exec.agent then fields.agent = exec.agent.id end
  if result.isError then
    if result.error.info then fields.code = result.error.info.code end
    fields.error = (secrets.redact_text(result.error.message))
    dsh.log.warn("tool call failed", fields)
  else
    dsh.log.info("tool call", fields)
  end
end)
