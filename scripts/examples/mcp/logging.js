// The MCP conformance suite's logging fixture (tools-call-with-logging):
// three log.info lines about 50 ms apart. Under `dsh serve`, a script's log
// lines during a call reach the calling client as notifications/message, at
// the level it set (logging/setLevel).
const { defineTool, tools, log } = require("dsh");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

tools.register(defineTool({
  name: "test_tool_with_logging",
  description: "Log three messages while running (MCP conformance fixture).",
  parameters: {},
  output: {
    schema: { type: "string" },
    render: (_args, value) => [{ type: "text", text: value }],
  },
  async execute() {
    log.info("Tool execution started");
    await sleep(50);
    log.info("Tool processing data");
    await sleep(50);
    log.info("Tool execution completed");
    return "Logging test completed";
  },
}));
