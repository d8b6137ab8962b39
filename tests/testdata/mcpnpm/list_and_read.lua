-- A run_code program for TestMCPNpm, the Lua twin of list_and_read.ts: list
-- a directory and read a file of the imported filesystem server (two calls
-- overlapped), then try the write the policy denies and catch its
-- ToolCallError. DIR is replaced by the served directory, as a string
-- literal.
local dir = DIR
local got = tools.gather(
  function() return tools.fs__list_directory{path = dir .. "/docs"} end,
  function() return tools.fs__read_text_file{path = dir .. "/docs/a.txt"} end
)
local listing, file = got[1], got[2]
local ok, e = pcall(tools.fs__write_file, {path = dir .. "/new.txt", content = "written"})
local denied = null
if not ok then
  if not ToolCallError.is(e) then error(e) end
  denied = {isToolCallError = tostring(e) == e.message, toolName = e.toolName, message = e.message}
end
local entries = array()
for line in listing.content:gmatch("[^\n]+") do entries[#entries + 1] = line end
table.sort(entries)
return {entries = entries, text = file.content, denied = denied}
