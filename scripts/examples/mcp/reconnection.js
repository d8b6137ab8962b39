// The MCP conformance suite's SSE polling fixture (server-sse-polling): a
// call that outlives the HTTP response stream it started on. Served with
// `dsh serve --http ADDR --http-poll-after PERIOD` (PERIOD well under the
// half second this tool takes), the server closes the call's stream after
// PERIOD with a retry delay, the client reconnects with Last-Event-ID, and
// the result reaches it on the resumed stream.
const { defineTool, tools } = require("dsh");

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

tools.register(defineTool({
  name: "test_reconnection",
  description: "Answer after half a second, past the server's poll period (MCP conformance fixture).",
  parameters: {},
  output: {
    schema: { type: "string" },
    render: (_args, value) => [{ type: "text", text: value }],
  },
  async execute() {
    await sleep(500);
    return "Reconnection test completed";
  },
}));
