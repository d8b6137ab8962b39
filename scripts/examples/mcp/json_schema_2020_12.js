// The MCP conformance suite's JSON Schema 2020-12 fixture
// (json-schema-2020-12): a raw definition, whose input schema ($schema,
// $defs, $ref, additionalProperties) is served in tools/list as written.
// Raw parameters are not validated by dsh; the tool echoes its arguments.
const { tools } = require("dsh");

tools.register({
  name: "json_schema_2020_12_tool",
  description: "Tool with JSON Schema 2020-12 features",
  parameters: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    $defs: {
      address: {
        type: "object",
        properties: { street: { type: "string" }, city: { type: "string" } },
      },
    },
    properties: {
      name: { type: "string" },
      address: { $ref: "#/$defs/address" },
    },
    additionalProperties: false,
  },
  output: {
    schema: { type: "string" },
    render: (_args, value) => [{ type: "text", text: value }],
  },
  execute: async (args) => JSON.stringify(args),
});
