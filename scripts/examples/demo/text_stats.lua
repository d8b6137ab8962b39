-- text_stats: lines, words and characters of a text. The demo's Lua tool,
-- loaded beside the JavaScript and TypeScript examples (make demo passes
-- this folder as a second --scripts): the same pipeline, policies and cards.
local dsh = require("dsh")

dsh.tools.register(dsh.define_tool {
  name = "text_stats",
  description = "Count the lines, words and characters of a text.",
  parameters = { text = { type = "string", required = true, description = "The text to measure." } },
  output = {
    schema = {
      type = "object",
      additionalProperties = false,
      properties = {
        lines = { type = "integer", required = true },
        words = { type = "integer", required = true },
        chars = { type = "integer", required = true },
      },
    },
    render = function(args, value)
      return { { type = "text", text = string.format("%d lines, %d words, %d characters",
        value.lines, value.words, value.chars) } }
    end,
  },
  is_concurrency_safe = function() return true end,
  execute = function(args)
    local lines = 0
    for _ in (args.text .. "\n"):gmatch("([^\n]*)\n") do lines = lines + 1 end
    local words = 0
    for _ in args.text:gmatch("%S+") do words = words + 1 end
    return { lines = lines, words = words, chars = #args.text }
  end,
  present_call = function(args)
    return { card = "generic", title = "Text stats (Lua)", kind = "read" }
  end,
})
