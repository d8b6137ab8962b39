-- repeat_reminder: a policy, the Lua twin of ../plugins/repeat_reminder.js.
-- When the model makes the same call again and again (same tool, same
-- arguments in any key order), remind it after the 3rd, 5th and 8th
-- identical call with a context message attached to that result.
local dsh = require("dsh")

local REMIND_AT = { [3] = true, [5] = true, [8] = true }
local MAX_KEYS = 1000 -- calls remembered, least recently used forgotten first
local ARRAY = getmetatable(dsh.array {})

-- The calls remembered: key → identical calls so far, and a doubly linked
-- list of keys, least recently used first.
local counts, size = {}, 0
local prev, nxt = {}, {}
local head, tail

local function unlink(key)
  local p, n = prev[key], nxt[key]
  if p then nxt[p] = n else head = n end
  if n then prev[n] = p else tail = p end
  prev[key], nxt[key] = nil, nil
end

local function push(key)
  prev[key] = tail
  if tail then nxt[tail] = key else head = key end
  tail = key
end

-- A text with object keys sorted at every level: equal arguments, equal text.
local function canonical(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v) end
  if t == "number" then return string.format("%.17g", v) end
  if t == "boolean" then return tostring(v) end
  if t ~= "table" then return "null" end -- nil, dsh.null
  local parts = {}
  if getmetatable(v) == ARRAY or (getmetatable(v) == nil and #v > 0) then
    for i = 1, #v do parts[i] = canonical(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = tostring(k) end
  table.sort(keys)
  for i, k in ipairs(keys) do parts[i] = string.format("%q", k) .. ":" .. canonical(v[k]) end
  return "{" .. table.concat(parts, ",") .. "}"
end

-- A random version 4 UUID: context messages need an id.
local function uuid()
  local hex = {}
  for i = 1, 32 do hex[i] = math.random(0, 15) end
  hex[13] = 4
  hex[17] = 8 + hex[17] % 4
  for i = 1, 32 do hex[i] = string.format("%x", hex[i]) end
  local s = table.concat(hex)
  return s:sub(1, 8) .. "-" .. s:sub(9, 12) .. "-" .. s:sub(13, 16) .. "-" .. s:sub(17, 20) .. "-" .. s:sub(21)
end

dsh.on("tools/post-execute", function(exec, result, next)
  local decision = next()
  local key = (exec.agent and exec.agent.id or "") .. "\0" .. exec.name .. "\0" .. canonical(exec.arguments)
  local n = (counts[key] or 0) + 1
  if counts[key] then unlink(key) else size = size + 1 end
  counts[key] = n
  push(key)
  if size > MAX_KEYS then
    local oldest = head
    unlink(oldest)
    counts[oldest] = nil
    size = size - 1
  end
  if not REMIND_AT[n] then return decision end
  local reminder = {
    id = uuid(),
    role = "user",
    content = { {
      type = "text",
      text = "Reminder: you have called " .. exec.name .. " " .. n .. " times with exactly these arguments. " ..
        "Repeating it will not change the result: use what you already have, or try something else.",
    } },
    source = { kind = "plugin", plugin = "repeat_reminder.lua" },
  }
  local out = {}
  for k, v in pairs(decision) do out[k] = v end
  local contexts = dsh.array {}
  for i, m in ipairs(decision.additionalContexts or {}) do contexts[i] = m end
  contexts[#contexts + 1] = reminder
  out.additionalContexts = contexts
  return out
end)
