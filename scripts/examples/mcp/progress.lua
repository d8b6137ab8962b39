-- The MCP conformance suite's progress fixture (tools-call-with-progress):
-- 0, 50 and 100 of 100. Under `dsh serve`, a body's exec.progress reaches
-- the calling client as notifications/progress when its request carried a
-- progress token, and is ignored otherwise.
local dsh = require("dsh")

dsh.tools.register(dsh.define_tool {
  name = "test_tool_with_progress",
  description = "Report progress 0, 50 and 100 of 100 (MCP conformance fixture).",
  parameters = {},
  output = {
    schema = { type = "string" },
    render = function(args, value) return { { type = "text", text = value } } end,
  },
  execute = function(args, exec)
    exec.progress(0, 100)
    exec.progress(50, 100, "halfway")
    exec:progress(100, 100, "done")
    return "Progress test completed"
  end,
})
