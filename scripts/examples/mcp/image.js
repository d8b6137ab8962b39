// The MCP conformance suite's image fixture (tools-call-image), in
// JavaScript: a render that returns an image block with base64 data and a
// mimeType, which `dsh serve` maps to MCP ImageContent.
const { defineTool, tools } = require("dsh");

// A 1x1 red pixel PNG.
const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

tools.register(defineTool({
  name: "test_image_content",
  description: "Return a 1x1 red PNG image (MCP conformance fixture).",
  parameters: {},
  output: {
    schema: { type: "string" },
    render: (_args, data) => [{ type: "image", data, mimeType: "image/png" }],
  },
  execute: async () => RED_PIXEL_PNG,
}));
