// The MCP conformance suite's elicitation fixtures (tools-call-elicitation,
// elicitation-sep1034-defaults), in JavaScript: a body's
// `await exec.elicit(message, schema)` puts a form to the user of the
// calling client and resolves to {action, content}. A client without the
// elicitation capability makes it reject, so the call fails.
const { defineTool, tools } = require("dsh");

const render = (_args, value) => [{ type: "text", text: value }];

tools.register(defineTool({
  name: "test_elicitation",
  description: "Ask the user for a username and an email (MCP conformance fixture).",
  parameters: { message: { type: "string", required: true, description: "The message to show the user" } },
  output: { schema: { type: "string" }, render },
  async execute(args, exec) {
    const { action, content } = await exec.elicit(args.message, {
      type: "object",
      properties: {
        username: { type: "string", description: "User's response" },
        email: { type: "string", description: "User's email address" },
      },
      required: ["username", "email"],
    });
    return `User response: action=${action}, content=${JSON.stringify(content ?? {})}`;
  },
}));

tools.register(defineTool({
  name: "test_elicitation_sep1034_defaults",
  description: "Ask for a form whose fields all have defaults (MCP conformance fixture).",
  parameters: {},
  output: { schema: { type: "string" }, render },
  async execute(_args, exec) {
    const { action, content } = await exec.elicit("Please review your details", {
      type: "object",
      properties: {
        name: { type: "string", default: "John Doe" },
        age: { type: "integer", default: 30 },
        score: { type: "number", default: 95.5 },
        status: { type: "string", enum: ["active", "inactive", "pending"], default: "active" },
        verified: { type: "boolean", default: true },
      },
    });
    return `Elicitation completed: action=${action}, content=${JSON.stringify(content ?? {})}`;
  },
}));
