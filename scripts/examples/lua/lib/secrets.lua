-- Shared helpers for the secret-handling policies (redact_tokens.lua,
-- audit_log.lua): the Lua twin of ../plugins/lib/secrets.ts. Files under
-- lib/ are modules to require, never loaded as plugins.
local M = {}

local W = "[A-Za-z0-9_]" -- a JavaScript \w
local B = "%f[A-Za-z0-9_]" -- \b before a word character
local E = "%f[^A-Za-z0-9_]" -- \b after a word character

local function rep(class, n) return string.rep(class, n) .. class .. "*" end

-- The patterns of secrets.ts as Lua patterns. A regexp alternation is a
-- list of patterns (the leftmost match wins, then the first in the list);
-- keep (capture 1), when present, is a prefix left in place. \s is ASCII
-- whitespace here, where JavaScript also takes Unicode spaces.
local TOKENS = {
  { kind = "private-key", alts = { "%-%-%-%-%-BEGIN [A-Z ]*PRIVATE KEY%-%-%-%-%-.-%-%-%-%-%-END [A-Z ]*PRIVATE KEY%-%-%-%-%-" } },
  -- sk-(?:ant-|proj-)?[\w-]{20,}: the prefixes are in the class, so the
  -- match is always sk- and the whole run.
  { kind = "api-key", alts = { B .. "sk%-" .. rep("[A-Za-z0-9_%-]", 20) } },
  { kind = "github-token", alts = {
    B .. "gh[pousr]_" .. rep("[A-Za-z0-9]", 36) .. E,
    B .. "github_pat_" .. rep(W, 22),
  } },
  { kind = "aws-access-key", alts = { B .. "A[KS]IA" .. string.rep("[0-9A-Z]", 16) .. E } },
  { kind = "aws-secret-key", alts = {
    "([aA][wW][sS]_[sS][eE][cC][rR][eE][tT]_[aA][cC][cC][eE][sS][sS]_[kK][eE][yY]%s*[=:]%s*[\"']?)" .. string.rep("[A-Za-z0-9/+=]", 40),
  } },
  { kind = "slack-token", alts = { B .. "xox[abprs]%-" .. rep("[A-Za-z0-9%-]", 10) } },
  { kind = "bearer-token", alts = { "(" .. B .. "Bearer%s+)" .. rep("[A-Za-z0-9._~+/%-]", 16) .. "=*" } },
}

-- replace_all replaces every match of alts in text, left to right as a
-- global regexp does, by repl(keep); it returns the text and the count.
local function replace_all(text, alts, repl)
  local out, pos, count = {}, 1, 0
  local found = {} -- per alternative: { start, end, keep } of its next match at or after pos, or false
  while true do
    local best
    for i, p in ipairs(alts) do
      local f = found[i]
      if f == nil or (f and f[1] < pos) then
        local s, e, keep = text:find(p, pos)
        f = s and { s, e, keep } or false
        found[i] = f
      end
      if f and (not best or f[1] < best[1]) then best = f end
    end
    if not best then break end
    out[#out + 1] = text:sub(pos, best[1] - 1)
    out[#out + 1] = repl(best[3])
    count = count + 1
    pos = best[2] + 1
  end
  if count == 0 then return text, 0 end
  out[#out + 1] = text:sub(pos)
  return table.concat(out), count
end

--- Replaces every token in text by [REDACTED:<kind>]; returns the text and how many.
function M.redact_text(text)
  local count = 0
  for _, t in ipairs(TOKENS) do
    local n
    text, n = replace_all(text, t.alts, function(keep)
      return (type(keep) == "string" and keep or "") .. "[REDACTED:" .. t.kind .. "]"
    end)
    count = count + n
  end
  return text, count
end

local ARRAY = getmetatable(require("dsh").array {})

--- redact_text applied to every string of a JSON value (a fresh copy, with
--- arrays and objects marked as they were); returns the value and the count.
function M.redact_json(value)
  local dsh = require("dsh")
  local count = 0
  local function walk(v)
    if type(v) == "string" then
      local text, n = M.redact_text(v)
      count = count + n
      return text
    end
    if type(v) ~= "table" then return v end
    local out = {}
    for k, x in pairs(v) do out[k] = walk(x) end
    if getmetatable(v) == ARRAY or (getmetatable(v) == nil and #v > 0) then return dsh.array(out) end
    return dsh.object(out)
  end
  local redacted = walk(value)
  return redacted, count
end

--- The length of s in UTF-16 code units, as JavaScript's length.
function M.utf16_len(s)
  local n = 0
  for i = 1, #s do
    local b = s:byte(i)
    if b < 0x80 or b >= 0xC0 then n = n + (b >= 0xF0 and 2 or 1) end
  end
  return n
end

--- The first n UTF-16 code units of s, as JavaScript's slice(0, n); a cut
--- through a surrogate pair leaves U+FFFD, as the lone surrogate becomes in Go.
function M.utf16_prefix(s, n)
  local units, i = 0, 1
  while i <= #s do
    local b = s:byte(i)
    local len = b < 0x80 and 1 or b < 0xE0 and 2 or b < 0xF0 and 3 or 4
    local w = len == 4 and 2 or 1
    if units + w > n then
      if units < n then return s:sub(1, i - 1) .. "\239\191\189" end
      return s:sub(1, i - 1)
    end
    units = units + w
    i = i + len
  end
  return s
end

return M
