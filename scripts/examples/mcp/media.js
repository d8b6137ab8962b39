// The MCP conformance suite's audio and mixed-content fixtures
// (tools-call-audio, tools-call-mixed-content), in JavaScript: a render may
// return audio blocks ({type: "audio", data, mimeType}) and embedded
// resources ({type: "resource", resource: {uri, mimeType, text}}), which
// `dsh serve` maps to MCP AudioContent and EmbeddedResource.
const { defineTool, tools } = require("dsh");

// A WAV file of eight silent 16-bit samples at 8 kHz.
const SILENT_WAV =
  "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";
// A 1x1 red pixel PNG.
const RED_PIXEL_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

tools.register(defineTool({
  name: "test_audio_content",
  description: "Return a short silent WAV (MCP conformance fixture).",
  parameters: {},
  output: {
    schema: { type: "string" },
    render: (_args, data) => [{ type: "audio", data, mimeType: "audio/wav" }],
  },
  execute: async () => SILENT_WAV,
}));

tools.register(defineTool({
  name: "test_multiple_content_types",
  description: "Return text, an image and a resource (MCP conformance fixture).",
  parameters: {},
  output: {
    schema: { type: "string" },
    render: (_args, text) => [
      { type: "text", text },
      { type: "image", data: RED_PIXEL_PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  },
  execute: async () => "Multiple content types test:",
}));
