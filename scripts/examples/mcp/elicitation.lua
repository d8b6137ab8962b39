-- The MCP conformance suite's enum elicitation fixture
-- (elicitation-sep1330-enums), in Lua: a body's exec.elicit(message, schema)
-- puts a form to the user of the calling client, blocking the body's
-- coroutine (never the host) until the answer, {action = ..., content = ...}.
local dsh = require("dsh")

local function options(prefix, titles)
  local out = {}
  for i, title in ipairs(titles) do
    out[i] = { const = prefix .. i, title = title }
  end
  return out
end

dsh.tools.register(dsh.define_tool {
  name = "test_elicitation_sep1330_enums",
  description = "Ask for a form with every kind of enum (MCP conformance fixture).",
  parameters = {},
  output = {
    schema = { type = "string" },
    render = function(args, value) return { { type = "text", text = value } } end,
  },
  execute = function(args, exec)
    local answer = exec.elicit("Pick your options", {
      type = "object",
      properties = {
        untitledSingle = { type = "string", enum = { "option1", "option2", "option3" } },
        titledSingle = { type = "string", oneOf = options("value", { "First Option", "Second Option", "Third Option" }) },
        legacyEnum = {
          type = "string",
          enum = { "opt1", "opt2", "opt3" },
          enumNames = { "Option One", "Option Two", "Option Three" },
        },
        untitledMulti = { type = "array", items = { type = "string", enum = { "option1", "option2", "option3" } } },
        titledMulti = { type = "array", items = { anyOf = options("value", { "First Choice", "Second Choice", "Third Choice" }) } },
      },
    })
    local picked = {}
    for k in pairs(answer.content or {}) do picked[#picked + 1] = k end
    table.sort(picked)
    return "Elicitation completed: action=" .. answer.action .. ", fields=" .. table.concat(picked, ",")
  end,
})
