-- word_count: count the words of a text. A Lua tool plugin: dsh runs it in
-- gopher-lua, one sandboxed state per instance.
local dsh = require("dsh")

dsh.tools.register(dsh.define_tool {
  name = "word_count",
  description = "Count the words in a text.",
  parameters = {
    text = { type = "string", required = true, description = "The text to count." },
    unique = { type = "boolean", description = "Count distinct words only (case-insensitive)." },
  },
  output = {
    schema = {
      type = "object",
      additionalProperties = false,
      properties = { words = { type = "integer", required = true } },
    },
    render = function(args, value)
      return { { type = "text", text = value.words .. " words" } }
    end,
  },
  is_concurrency_safe = function() return true end,
  timeout_ms = 2000,
  execute = function(args, exec)
    local n, seen = 0, {}
    for word in args.text:gmatch("%S+") do
      if args.unique then
        word = word:lower()
        if not seen[word] then
          seen[word] = true
          n = n + 1
        end
      else
        n = n + 1
      end
    end
    return { words = n }
  end,
  present_call = function(args)
    return { card = "generic", title = "Count words", kind = "read" }
  end,
})
