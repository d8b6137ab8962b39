-- Shared helpers for the secret-handling policies (protect_secrets.lua,
-- redact_tokens.lua, audit_log.lua; deny_shell.lua uses ascii_spaces): the
-- Lua twin of ../plugins/lib/secrets.ts. Files under lib/ are modules to
-- require, never loaded as plugins.
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

-- Text that every token above holds, whatever the rest of the token: a text
-- holding none of these (the common case) has no token, so redact_text
-- leaves it alone at once instead of searching it for each pattern; one that
-- holds one goes through the patterns as before. secrets.ts's HINT is the
-- same test as one regular expression (Lua patterns have no alternation).
local HINTS = {
  "-----BEGIN ", "sk%-", "gh[pousr]_", "github_pat_", "A[KS]IA",
  "[aA][wW][sS]_[sS][eE][cC][rR][eE][tT]_[aA][cC][cC][eE][sS][sS]_[kK][eE][yY]", "xox[abprs]%-", "Bearer",
}

--- Whether text may hold a token: false means it holds none.
local function may_hold_token(text)
  for i = 1, #HINTS do
    if text:find(HINTS[i]) then return true end
  end
  return false
end

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
  if not may_hold_token(text) then return text, 0 end
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

-- Whether f holds for some string of a JSON value (keys left out).
local function any_string(v, f)
  if type(v) == "string" then return f(v) end
  if type(v) ~= "table" then return false end
  for _, x in pairs(v) do
    if any_string(x, f) then return true end
  end
  return false
end

--- redact_text applied to every string of a JSON value (a fresh copy, with
--- arrays and objects marked as they were); returns the value and the count.
--- With nothing to redact, the value returned is value itself (count 0).
function M.redact_json(value)
  -- Nothing to copy when no string of value may hold a token: callers use
  -- the copy only when the count is positive.
  if not any_string(value, may_hold_token) then return value, 0 end
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

-- Files that hold credentials, by name (secrets.ts's SECRET_NAMES). Templates
-- such as .env.example are meant to be shared and stay readable.
local SECRET_NAMES = { -- ^\.env$, ^id_(rsa|dsa|ecdsa|ed25519)$, ^\.(netrc|pgpass|npmrc|pypirc)$, ^credentials(\.json)?$
  [".env"] = true, id_rsa = true, id_dsa = true, id_ecdsa = true, id_ed25519 = true,
  [".netrc"] = true, [".pgpass"] = true, [".npmrc"] = true, [".pypirc"] = true,
  credentials = true, ["credentials.json"] = true,
}
local SECRET_EXTENSIONS = { ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore" } -- \.(pem|key|p12|pfx|jks|keystore)$
local ENV_TEMPLATES = { example = true, sample = true, template = true, dist = true }

-- Whether a name matches ^\.env\.(?!example$|sample$|template$|dist$).+ : a
-- dot suffix that is not a template's, starting with a character that a
-- JavaScript . takes (in dsh's JavaScript, any but \n and \r).
local function is_env_variant(name)
  if name:sub(1, 5) ~= ".env." then return false end
  local rest = name:sub(6)
  return rest ~= "" and not ENV_TEMPLATES[rest] and not rest:find("^[\n\r]")
end

--- Whether path (or glob pattern) names a secret file by its last segment.
function M.is_secret_path(path)
  local name = path:gsub("[/\\]+$", ""):match("[^/\\]*$")
  if SECRET_NAMES[name] or is_env_variant(name) then return true end
  for _, ext in ipairs(SECRET_EXTENSIONS) do
    if name:sub(-#ext) == ext then return true end
  end
  return false
end

-- The Unicode spaces of JavaScript's \s (U+00A0, U+1680, U+2000–U+200A,
-- U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF) in UTF-8. Lua's %s is
-- JavaScript's \s on ASCII (space, \t, \n, \v, \f, \r).
local JS_SPACES = { ["\194\160"] = " ", ["\225\154\128"] = " ", ["\226\128\168"] = " ", ["\226\128\169"] = " ",
  ["\226\128\175"] = " ", ["\226\129\159"] = " ", ["\227\128\128"] = " ", ["\239\187\191"] = " " }
for b = 128, 138 do JS_SPACES["\226\128" .. string.char(b)] = " " end

--- s with the Unicode spaces of JavaScript's \s turned into ASCII spaces, so
--- that %s takes every character \s takes. Use it only where a space's
--- width does not matter (tests, splitting), never on text kept.
function M.ascii_spaces(s)
  if not s:find("[\128-\255]") then return s end
  return (s:gsub("[\192-\255][\128-\191]*", JS_SPACES))
end

return M
