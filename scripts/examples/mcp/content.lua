-- The MCP conformance suite's text and error fixtures (tools-call-simple-text,
-- tools-call-error), in Lua. Serve this directory with
--   dsh --scripts scripts/examples/mcp --approve allow serve --http 127.0.0.1:8080
-- and run `conformance server --url http://127.0.0.1:8080/mcp` against it
-- (tests/mcp_conformance_test.go).
local dsh = require("dsh")

-- test_simple_text returns one text block.
dsh.tools.register(dsh.define_tool {
  name = "test_simple_text",
  description = "Return a simple text response (MCP conformance fixture).",
  parameters = {},
  output = {
    schema = { type = "string" },
    render = function(args, value) return { { type = "text", text = value } } end,
  },
  execute = function(args) return "This is a simple text response for testing." end,
})

-- test_error_handling always fails: a tool failure reaches the client as a
-- result with isError and the message as its text.
dsh.tools.register(dsh.define_tool {
  name = "test_error_handling",
  description = "Always fail (MCP conformance fixture).",
  parameters = {},
  output = {
    schema = { type = "string" },
    render = function(args, value) return { { type = "text", text = value } } end,
  },
  execute = function(args)
    error("This tool intentionally returns an error for testing", 0)
  end,
})

-- test_embedded_resource returns a text resource, which reaches the client
-- as an MCP EmbeddedResource.
dsh.tools.register(dsh.define_tool {
  name = "test_embedded_resource",
  description = "Return an embedded text resource (MCP conformance fixture).",
  parameters = {},
  output = {
    schema = { type = "string" },
    render = function(args, value)
      return { {
        type = "resource",
        resource = { uri = "test://embedded-resource", mimeType = "text/plain", text = value },
      } }
    end,
  },
  execute = function(args) return "This is an embedded resource content." end,
})
