-- deny_shell: a policy, the Lua twin of ../plugins/deny_shell.js. It refuses
-- dangerous shell commands before they run. A denial's info carries a code
-- for programs and, as info.reason, the rule's id. Patterns catch the usual
-- accidents, not a determined adversary: for that, run the shell tool in a
-- sandbox.
--
-- Lua patterns have no alternation, look-ahead or back-reference, so each
-- rule is a function that answers what the JavaScript rule's regular
-- expression answers (its test()), written next to it.
local dsh = require("dsh")
local secrets = require("lib.secrets")

local W = "[A-Za-z0-9_]" -- \w
local B = "%f[A-Za-z0-9_]" -- \b before a word character
local E = "%f[^A-Za-z0-9_]" -- \b after a word character (or at the end)

-- Whether text has a match of pattern starting at or after init for which
-- ok(start, end, captures...) holds.
local function any_match(text, pattern, ok, init)
  init = init or 1
  while true do
    local r = { text:find(pattern, init) }
    if not r[1] then return false end
    if ok(unpack(r)) then return true end
    init = r[1] + 1
  end
end

-- Whether position i of text ends a token: the end, a space, ; & or |
-- ((?=\s|$|;|&|\|)).
local function ends_token(text, i)
  return i > #text or text:find("^[%s;&|]", i) ~= nil
end

-- rm's targets, as (?:\/\*?|~\/?|\$HOME\/?|--no-preserve-root).
local RM_TARGETS = { "/*", "/", "~/", "~", "$HOME/", "$HOME", "--no-preserve-root" }

-- \brm\s+(?:-[\w-]*\s+)*?(?:-\w*[rR]\w*|--recursive)\s+(?:-[\w-]*\s+)*
-- (?:\/\*?|~\/?|\$HOME\/?|--no-preserve-root)(?=\s|$|;|&|\|): after rm, a run of
-- flags ("-…" words, each followed by spaces), one of them recursive, then a
-- target that ends its token.
local function rm_root(command)
  return any_match(command, B .. "rm%s+", function(_, e)
    local pos, recursive = e + 1, false
    while true do
      if recursive then
        for _, target in ipairs(RM_TARGETS) do
          if command:sub(pos, pos + #target - 1) == target and ends_token(command, pos + #target) then return true end
        end
      end
      local flag = command:match("^%-[A-Za-z0-9_%-]*", pos)
      if not flag then return false end
      local after = command:match("^%s+()", pos + #flag)
      if not after then return false end -- a flag is followed by spaces
      if flag == "--recursive" or flag:find("^%-" .. W .. "*[rR]" .. W .. "*$") then recursive = true end
      pos = after
    end
  end)
end

-- \b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b: the first of
-- | ; & after the word is a pipe into (sudo) a shell.
local function pipe_to_shell(command)
  local function into_shell(_, e)
    local s, sep = command:match("()([|;&])", e + 1)
    if sep ~= "|" then return false end
    local pos = command:match("^%s*()", s + 1)
    for _, at in ipairs({ pos, command:match("^sudo%s+()", pos) }) do
      for _, shell in ipairs({ "sh", "bash", "zsh", "dash", "ksh", "fish" }) do
        if command:find("^" .. shell .. E, at) then return true end
      end
    end
    return false
  end
  return any_match(command, B .. "curl" .. E, into_shell) or any_match(command, B .. "wget" .. E, into_shell)
end

-- \bmkfs(?:\.\w+)?\b: mkfs as a word (mkfs.ext4 too: mkfs ends a word before the dot).
local function mkfs(command)
  return command:find(B .. "mkfs" .. E) ~= nil
end

-- \bdd\b[^;&|]*\bof=\/dev\/(?!null\b|zero\b|stdout\b|stderr\b): after the word dd
-- and before the next ; & or |, an of= onto a device other than those four.
local function dd_device(command)
  return any_match(command, B .. "dd" .. E, function(_, e)
    local stop = command:find("[;&|]", e + 1) or #command + 1
    return any_match(command, B .. "of=/dev/", function(s, f)
      if s >= stop then return false end
      for _, dev in ipairs({ "null", "zero", "stdout", "stderr" }) do
        if command:find("^" .. dev .. E, f + 1) then return false end
      end
      return true
    end, e + 1)
  end)
end

-- >\s*\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*
local function device_write(command)
  return any_match(command, ">%s*/dev/()", function(_, _, at)
    for _, disk in ipairs({ "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk" }) do
      if command:sub(at, at + #disk - 1) == disk then return true end
    end
    return false
  end)
end

-- (\w+|:)\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}\s*;\s*\1: a function (any tail of a
-- word, or :) that pipes itself into itself in the background, then is called.
local function fork_bomb(command)
  return any_match(command, "()%s*%(%)", function(s, e)
    local names = {}
    if command:sub(s - 1, s - 1) == ":" then
      names[1] = ":"
    else
      local first = s
      while first > 1 and command:sub(first - 1, first - 1):find(W) do first = first - 1 end
      for i = first, s - 1 do names[#names + 1] = command:sub(i, s - 1) end
    end
    for _, name in ipairs(names) do
      local n = name:gsub("%p", "%%%0")
      if command:find("^%s*{%s*" .. n .. "%s*|%s*" .. n .. "%s*&%s*}%s*;%s*" .. n, e + 1) then return true end
    end
    return false
  end)
end

-- (?:^|[;&|]\s*|\bsudo\s+)(?:shutdown|reboot|halt|poweroff)\b: the word
-- starts the text, follows ; & or |, or follows sudo.
local function shutdown(command)
  for _, word in ipairs({ "shutdown", "reboot", "halt", "poweroff" }) do
    if any_match(command, word .. E, function(s)
      local before = command:sub(1, s - 1)
      return s == 1 or before:find("[;&|]%s*$") ~= nil or before:find(B .. "sudo%s+$") ~= nil
    end) then
      return true
    end
  end
  return false
end

local RULES = {
  { id = "rm-root", why = "recursive removal of /, ~ or $HOME", test = rm_root },
  { id = "pipe-to-shell", why = "piping a download into a shell", test = pipe_to_shell },
  { id = "mkfs", why = "formatting a file system", test = mkfs },
  { id = "dd-device", why = "dd writing to a device", test = dd_device },
  { id = "device-write", why = "redirecting output onto a disk device", test = device_write },
  { id = "fork-bomb", why = "a fork bomb", test = fork_bomb },
  { id = "shutdown", why = "shutting the machine down", test = shutdown },
}

dsh.on("tools/pre-execute", function(exec, next)
  -- The name first: other tools' arguments are never read.
  if exec.name == "shell" then
    local args = exec.arguments
    local command = type(args) == "table" and args.command
    if type(command) == "string" then
      -- JavaScript's \s also takes Unicode spaces: as ASCII spaces, %s takes them too.
      command = secrets.ascii_spaces(command)
      for _, rule in ipairs(RULES) do
        if rule.test(command) then
          return {
            kind = "deny",
            reason = "shell command refused: " .. rule.why,
            info = { name = "PolicyDenied", code = "SHELL_DENIED", reason = rule.id },
          }
        end
      end
    end
  end
  return next()
end)
