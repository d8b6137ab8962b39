package lua_test

// Every item of the dsh module in Lua (docs/plugins.md) exercised
// from a script, with exact results.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

func TestAPIDefineTool(t *testing.T) {
	e := load(t, map[string]string{"dt.lua": `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "typed",
  description = "typed parameters",
  parameters = {
    path = { type = "string", required = true, description = "a path" },
    color = { type = "string", enum = { "red", "green" } },
    n = { type = "integer" },
    config = { type = "object", additionalProperties = true, properties = { host = { type = "string", required = true } } },
    tags = { type = "array", items = { type = "string" } },
  },
  output = {
    schema = { type = "object", additionalProperties = false, properties = { path = { type = "string" }, extra = { type = "integer" } } },
    render = function(args, value) return { { type = "text", text = "path=" .. value.path } } end,
  },
  execute = function(args)
    if args.path == "bad-type" then return { path = 42 } end
    if args.path == "bad-key" then return { path = "p", other = 1 } end
    if args.path == "fn" then return function() end end
    if args.path == "nil" then return nil end
    return { path = args.path }
  end,
})
`})
	noDiags(t, e)
	cases := []struct{ name, args, want string }{
		{"valid arguments", `{"path":"a.txt","color":"red","n":3,"config":{"host":"h","port":1},"tags":["x"]}`,
			`{"isError":false,"value":{"path":"a.txt"},"content":[{"type":"text","text":"path=a.txt"}]}`},
		{"extra keys at the root are allowed", `{"path":"a","zzz":true}`,
			`{"isError":false,"value":{"path":"a"},"content":[{"type":"text","text":"path=a"}]}`},
		{"a missing required property", `{}`,
			hosttest.Failure(`invalid arguments: missing required property "path"`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"a value outside the enum", `{"path":"a","color":"blue"}`,
			hosttest.Failure(`invalid arguments: "color" must be one of ["red","green"]`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"several violations joined by ; in sorted key order", `{"path":1,"n":1.5,"config":{},"tags":["a",2]}`,
			hosttest.Failure(`invalid arguments: missing required property "config.host"; "n" must be an integer; "path" must be a string; "tags[1]" must be a string`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"output of the wrong type", `{"path":"bad-type"}`,
			hosttest.Failure(`tool "typed" returned invalid output: "value.path" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output with an undeclared key", `{"path":"bad-key"}`,
			hosttest.Failure(`tool "typed" returned invalid output: "value.other" is not a declared property (additionalProperties: false)`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output that is a function", `{"path":"fn"}`,
			hosttest.Failure(`tool "typed" returned invalid output: value is not lossless JSON`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output that is nil", `{"path":"nil"}`,
			hosttest.Failure(`tool "typed" returned invalid output: value is not lossless JSON`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { hosttest.Want(t, e.call(t, "typed", args(t, c.args)), c.want) })
	}
	t.Run("arguments that are not an object", func(t *testing.T) {
		hosttest.Want(t, e.run(t, context.Background(), engine.Input{Name: "typed", Arguments: "nope"}),
			hosttest.Failure(`invalid arguments: "arguments" must be an object`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
	})
	t.Run("the compiled parameters are what the model sees, properties in sorted order", func(t *testing.T) {
		list, err := e.svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("schemas %d", len(list))
		}
		hosttest.Want(t, marshal(t, list[0].JSON()), `{"name":"typed","description":"typed parameters","parameters":{"type":"object","properties":{"color":{"type":"string","enum":["red","green"]},"config":{"type":"object","additionalProperties":true,"properties":{"host":{"type":"string"}},"required":["host"]},"n":{"type":"integer"},"path":{"type":"string","description":"a path"},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"]}}`)
	})
}

func TestAPIDefineToolAtTopLevel(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"timeout_ms 0", `local dsh = require("dsh")
local def = dsh.define_tool { name = "x", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function() return {} end }, timeout_ms = 0, execute = function() return "" end }
`, `p.lua:2: defineTool(x): timeoutMs must be a positive finite number`},
		{"timeout_ms math.huge", `local dsh = require("dsh")

dsh.define_tool { name = "x", description = "", parameters = {}, output = { schema = { type = "string" }, render = function() return {} end }, timeout_ms = math.huge, execute = function() return "" end }
`, `p.lua:3: defineTool(x): timeoutMs must be a positive finite number`},
		{"timeout_ms 0/0", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = {}, output = { schema = { type = "string" }, render = function() return {} end }, timeout_ms = 0/0, execute = function() return "" end }
`, `p.lua:2: defineTool(x): timeoutMs must be a positive finite number`},
		{"a parameter object without additionalProperties", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = { cfg = { type = "object" } },
  output = { schema = { type = "string" }, render = function() return {} end }, execute = function() return "" end }
`, `p.lua:2: tool "x": parameters: unsupported JSON schema: parameters.cfg.additionalProperties must be explicitly true or false`},
		{"an output spec with an unknown type", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = {},
  output = { schema = { type = "tuple" }, render = function() return {} end }, execute = function() return "" end }
`, `p.lua:2: tool "x": output.schema: unsupported JSON schema: schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf`},
		{"a required that is not true", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = { a = { type = "string", required = false } },
  output = { schema = { type = "string" }, render = function() return {} end }, execute = function() return "" end }
`, `p.lua:2: tool "x": parameters: unsupported JSON schema: parameters.a.required must be true when present`},
		{"a const outside its enum (raw assertion)", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = {},
  output = { schema = { type = "string", enum = { "a" }, const = "b" }, render = function() return {} end }, execute = function() return "" end }
`, `p.lua:2: tool "x": output.schema: unsupported JSON schema: schema.const must be one of schema.enum when both are declared`},
		{"no output", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = {}, execute = function() return "" end }
`, `p.lua:2: tool "x" must declare output { schema, render, presentationMeta? }`},
		{"a parameter spec that is not lossless", `local dsh = require("dsh")
dsh.define_tool { name = "x", description = "", parameters = { a = { type = "string", default = 0/0 } },
  output = { schema = { type = "string" }, render = function() return {} end }, execute = function() return "" end }
`, `p.lua:2: parameters.a.default: NaN is not lossless JSON`},
		{"no options table", `local dsh = require("dsh")
dsh.define_tool("x")
`, `p.lua:2: dsh.define_tool(options) needs an options table`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := load(t, map[string]string{"p.lua": c.src})
			got := e.diagnostics()
			if len(got) != 1 || got[0] != c.want {
				t.Errorf("diagnostics %q\nwant        %q", got, c.want)
			}
			if len(e.loaded) != 0 {
				t.Errorf("the plugin loaded")
			}
		})
	}
	t.Run("the JsonSchemaError can be caught with its name and code", func(t *testing.T) {
		e := load(t, map[string]string{"p.lua": `local dsh = require("dsh")
local ok, err = pcall(dsh.define_tool, { name = "x", description = "", parameters = { a = { type = "nope" } },
  output = { schema = { type = "string" }, render = function() return {} end }, execute = function() return "" end })
local caught = { ok = ok, name = err.name, code = err.code, message = err.message, text = tostring(err), concat = "caught: " .. err }
local ok2, err2 = pcall(dsh.define_tool, { name = "x", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function() return {} end }, timeout_ms = -5, execute = function() return "" end })
local timeout = { ok = ok2, name = err2.name, message = err2.message, meta = getmetatable(err2) }
dsh.tools.register(dsh.define_tool { name = "caught", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end }, execute = function() return { caught = caught, timeout = timeout } end })
`})
		noDiags(t, e)
		hosttest.Want(t, e.value(t, "caught", nil), `{"caught":{"code":"UNSUPPORTED_SCHEMA","concat":"caught: tool \"x\": parameters: unsupported JSON schema: parameters.a.type must be string/number/integer/boolean/null/array/object/json, or use oneOf","message":"tool \"x\": parameters: unsupported JSON schema: parameters.a.type must be string/number/integer/boolean/null/array/object/json, or use oneOf","name":"JsonSchemaError","ok":false,"text":"tool \"x\": parameters: unsupported JSON schema: parameters.a.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"},"timeout":{"message":"defineTool(x): timeoutMs must be a positive finite number","meta":"dsh.error","name":"Error","ok":false}}`)
	})
}

func TestAPIDefineToolCallbacks(t *testing.T) {
	e := load(t, map[string]string{"cb.lua": `
local dsh = require("dsh")
local seen = {}
dsh.tools.register(dsh.define_tool {
  name = "full", description = "every callback", parameters = { mode = { type = "string", required = true } },
  output = {
    schema = { type = "string" },
    render = function(args, value) return { { type = "text", text = args.mode .. ":" .. value } } end,
    presentation_meta = function(args, value) return { mode = args.mode, length = #value } end,
  },
  is_concurrency_safe = function(args) seen[#seen + 1] = "classify " .. args.mode; return args.mode == "read" end,
  present_call = function(args) return { card = "generic", title = "Full " .. args.mode, kind = "read" } end,
  present_result = function(args, r) return { card = "generic", title = (r.isError and "failed " or "done ") .. r.content[1].text } end,
  project_content = function(exec, result) if exec.arguments.mode == "project" then return { { type = "text", text = "projected" } } end end,
  finalize_content = function(exec, result) seen[#seen + 1] = "finalize " .. tostring(result.isError); return nil end,
  timeout_ms = 1500,
  execute = function(args) return "v-" .. args.mode end,
})
dsh.tools.register { name = "seen", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local s = seen; seen = dsh.array {}; return s end }
`})
	noDiags(t, e)
	def := e.svc.Global().Get("full")
	t.Run("the definition carries the timeout and the callbacks", func(t *testing.T) {
		if def.Timeout.Milliseconds() != 1500 {
			t.Errorf("timeout %v", def.Timeout)
		}
		if def.IsConcurrencySafe == nil || def.PresentCall == nil || def.PresentResult == nil || def.FinalizeContent == nil || def.ProjectContent == nil || def.Output.PresentationMeta == nil {
			t.Errorf("a callback is missing: %+v", def)
		}
	})
	t.Run("a success carries the meta and runs the finalizer", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "full", args(t, `{"mode":"x"}`)), `{"isError":false,"value":"v-x","content":[{"type":"text","text":"x:v-x"}],"meta":{"length":3,"mode":"x"}}`)
		hosttest.Want(t, e.call(t, "full", args(t, `{"mode":"project"}`)), `{"isError":false,"value":"v-project","content":[{"type":"text","text":"projected"}],"meta":{"length":9,"mode":"project"}}`)
		hosttest.Want(t, e.value(t, "seen", nil), `["finalize false","finalize false"]`)
	})
	t.Run("the classifier sees the arguments and only true means parallel", func(t *testing.T) {
		mode := func(m any) engine.Mode {
			return e.svc.Global().ExecutionMode(engine.Input{Name: "full", Arguments: dsl.NewObject(dsl.Member{Key: "mode", Value: m})})
		}
		if m := mode("read"); m != engine.Parallel {
			t.Errorf("read: %v", m)
		}
		if m := mode("write"); m != engine.Exclusive {
			t.Errorf("write: %v", m)
		}
		if m := mode(5); m != engine.Exclusive {
			t.Errorf("invalid arguments: %v", m)
		}
		hosttest.Want(t, e.value(t, "seen", nil), `["classify read","classify write"]`)
	})
	t.Run("the presenters get typed arguments and return views", func(t *testing.T) {
		a := args(t, `{"mode":"m"}`)
		v := def.PresentCall(a)
		if v == nil || v.Title != "Full m" || v.Card != "generic" {
			t.Errorf("present_call %+v", v)
		}
		if def.PresentCall(args(t, `{}`)) != nil {
			t.Error("present_call got invalid arguments")
		}
		rv := def.PresentResult(a, engine.ResultSummary{Content: []engine.Block{engine.Text("it")}})
		if rv == nil || rv.Title != "done it" {
			t.Errorf("present_result %+v", rv)
		}
	})
}

func TestAPIRegisterRaw(t *testing.T) {
	e := load(t, map[string]string{"raw.lua": `
local dsh = require("dsh")
local dispose = dsh.tools.register {
  name = "raw", description = "a raw definition",
  parameters = { type = "object", properties = { path = { type = "string" } }, required = { "path" } },
  output = { schema = { type = "object", properties = { got = {} } }, render = function(args, value) return { { type = "text", text = "got" } } end },
  execute = function(args) if args.bad ~= nil then return args.bad end return { got = args } end,
}
dsh.tools.register {
  name = "raw_dispose", description = "", parameters = { type = "object" },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() local kind = type(dispose); dispose(); dispose(); return kind .. ":" .. tostring(dsh.tools.get("raw")) end,
}
`})
	noDiags(t, e)
	t.Run("arguments are not validated", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "raw", args(t, `{"path":5}`)), `{"isError":false,"value":{"got":{"path":5}},"content":[{"type":"text","text":"got"}]}`)
		hosttest.Want(t, e.call(t, "raw", args(t, `{}`)), `{"isError":false,"value":{"got":{}},"content":[{"type":"text","text":"got"}]}`)
	})
	t.Run("the output schema is enforced", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "raw", args(t, `{"bad":5}`)),
			hosttest.Failure(`tool "raw" returned invalid output: "value" must be an object`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	})
	t.Run("the raw parameters are projected as given, keys sorted", func(t *testing.T) {
		list, _ := e.svc.Global().Schemas()
		hosttest.Want(t, marshal(t, list[0].JSON()), `{"name":"raw","description":"a raw definition","parameters":{"properties":{"path":{"type":"string"}},"required":["path"],"type":"object"}}`)
	})
	t.Run("the disposer removes the tool and is idempotent", func(t *testing.T) {
		hosttest.Want(t, e.value(t, "raw_dispose", nil), `"function:nil"`)
		hosttest.Want(t, e.call(t, "raw", nil), hosttest.Failure(`unknown tool "raw"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	})
}

func TestAPIRegisterWhen(t *testing.T) {
	e := load(t, map[string]string{"when.lua": `
local dsh = require("dsh")
local active, asked = true, {}
local function def(name)
  return dsh.define_tool { name = name, description = "", parameters = {},
    output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
    execute = function() return name end }
end
dsh.tools.register(def("cond"), { when = function(ctx)
  asked[#asked + 1] = ctx.modelSelection or "none"
  return active and not ctx.signal.aborted()
end })
dsh.tools.register(def("switch"))
dsh.tools.register { name = "toggle", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function(args) active = args.on; local a = asked; asked = dsh.array {}; return a end }
`})
	noDiags(t, e)
	ctx := context.Background()
	t.Run("without a tool set a conditional tool is unavailable", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "cond", nil), hosttest.Failure(`unknown tool "cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.call(t, "switch", nil), success("switch"))
	})
	t.Run("with a set resolved while the condition holds it runs", func(t *testing.T) {
		set, err := e.svc.Global().Resolve(ctx, "model-a")
		if err != nil {
			t.Fatal(err)
		}
		hosttest.Want(t, e.run(t, ctx, engine.Input{Name: "cond", ToolSet: set}), success("cond"))
		hosttest.Want(t, e.value(t, "toggle", args(t, `{"on":false}`)), `["model-a"]`)
	})
	t.Run("with a set resolved while it does not hold it is unknown", func(t *testing.T) {
		set, err := e.svc.Global().Resolve(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		hosttest.Want(t, e.run(t, ctx, engine.Input{Name: "cond", ToolSet: set}), hosttest.Failure(`unknown tool "cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.value(t, "toggle", args(t, `{"on":true}`)), `["none"]`)
	})
}

func TestAPIGuard(t *testing.T) {
	e := load(t, map[string]string{"g.lua": echo + `
local guarded = {}
dsh.tools.guard(function(exec) guarded[#guarded + 1] = exec.name; return nil end)
dsh.tools.guard(function(exec) if exec.arguments.text == "secret" then return "secrets stay home" end end)
dsh.tools.guard(function(exec) if exec.arguments.text == "empty" then return "" end end)
dsh.tools.guard(function(exec) if exec.arguments.text == "number" then return 42 end end)
dsh.tools.register { name = "guarded", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function() local g = guarded; guarded = dsh.array {}; return g end }
`})
	noDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"hi"}`)), success("hi"))
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"secret"}`)), hosttest.Failure("secrets stay home", ""))
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"empty"}`)), hosttest.Failure("a guard returned an empty denial reason", ""))
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"number"}`)), hosttest.Failure("a guard must return a denial reason string or nil", ""))
	hosttest.Want(t, e.call(t, "ghost", nil), hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	hosttest.Want(t, e.value(t, "guarded", nil), `["echo","echo","echo","echo","ghost","guarded"]`)
}

func TestAPIScopes(t *testing.T) {
	e := load(t, map[string]string{"scopes.lua": `
local dsh = require("dsh")
local tools = dsh.tools
local function def(name, desc)
  return dsh.define_tool { name = name, description = desc or "", parameters = { q = { type = "string" } },
    output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
    execute = function(args, exec) return name .. " for " .. (exec.agent and exec.agent.id or "nobody") end }
end
tools.register(def("secret", "a secret tool"))
tools.register(def("open"))
local worker = tools.scope("worker")
worker.restrict { deny = { "secret" } }
worker.register(def("mine", "the worker's own"))
worker.register(def("open", "the worker's open"))
local function names(list) local out = {} for k, s in ipairs(list) do out[k] = s.name end return out end
tools.register { name = "views", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function()
    local g = tools.get("secret")
    g.name = "changed" -- a fresh copy: the registry is not affected
    return {
      global = { secret = tools.get("secret"), copy = g.name, mine = tools.get("mine") == nil, schemas = names(tools.schemas()) },
      worker = { secret = worker.get("secret") == nil, mine = worker.get("mine"), open = worker.get("open").description, schemas = names(worker.schemas()) },
      other = { schemas = names(tools.scope("other").schemas()) },
      missing = tools.get("nope") == nil,
    }
  end }
`})
	noDiags(t, e)
	worker, other := e.agents.Agent("worker"), e.agents.Agent("other")
	unknown := func(name string) string {
		return hosttest.Failure(`unknown tool "`+name+`"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL"))
	}
	t.Run("a restricted tool is unknown for that agent only", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "secret", nil), unknown("secret"))
		hosttest.Want(t, e.callAs(t, nil, "secret", nil), success("secret for nobody"))
		hosttest.Want(t, e.callAs(t, other, "secret", nil), success("secret for other"))
	})
	t.Run("a scoped tool is visible only to its agent", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "mine", nil), success("mine for worker"))
		hosttest.Want(t, e.callAs(t, nil, "mine", nil), unknown("mine"))
		hosttest.Want(t, e.callAs(t, other, "mine", nil), unknown("mine"))
	})
	t.Run("a scoped tool shadows the global one for its agent", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "open", nil), success("open for worker"))
		hosttest.Want(t, e.callAs(t, other, "open", nil), success("open for other"))
		hosttest.Want(t, e.callAs(t, worker, "open", args(t, `{"q":1}`)), hosttest.Failure(`invalid arguments: "q" must be a string`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
	})
	t.Run("get and schemas are copies of each scope's view", func(t *testing.T) {
		hosttest.Want(t, e.value(t, "views", nil), `{"global":{"copy":"changed","mine":true,"schemas":["secret","open","views"],"secret":{"description":"a secret tool","name":"secret","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}}},"missing":true,"other":{"schemas":["secret","open","views"]},"worker":{"mine":{"description":"the worker's own","name":"mine","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}},"open":"the worker's open","schemas":["open","views","mine"],"secret":true}}`)
	})
}

// execPlugin registers probe (reports the execution it sees), composite
// (calls probe twice and ghost once through tools.call) and tokens (compares
// the parent tokens probe saw).
const execPlugin = `
local dsh = require("dsh")
local tools = dsh.tools
local parents = {}
local function attempt(f) local ok, err = pcall(f) if ok then return "no error" end return tostring(err) end
tools.register(dsh.define_tool {
  name = "probe", description = "", parameters = { deep = { type = "object", additionalProperties = true } },
  output = { schema = { type = "json" }, render = function(a, v) return { { type = "text", text = "probed " .. v.callId } } end },
  execute = function(args, exec)
    parents[#parents + 1] = exec.parent or false
    return {
      callId = exec.callId, rootCallId = exec.rootCallId, name = exec.name, arguments = exec.arguments,
      agent = exec.agent or "nil", parent = exec.parent and type(exec.parent) or "nil",
      sameAsArgs = exec.arguments == args,
      assignCallId = attempt(function() exec.callId = "forged" end),
      addKey = attempt(function() exec.extra = 1 end),
      rawset = attempt(function() rawset(exec, "callId", "forged") end),
      meta = getmetatable(exec), setmeta = attempt(function() setmetatable(exec, {}) end),
      unknown = exec.nope == nil,
      signal = { type(exec.signal.aborted), exec.signal.aborted(), exec.signal:aborted(), exec.signal.reason() == nil },
      bodyOnly = { type(exec.defer_context), type(exec.conclude_turn) },
      text = tostring(exec),
    }
  end,
})
tools.register(dsh.define_tool {
  name = "composite", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return { { type = "text", text = "composed" } } end },
  execute = function(args, exec)
    local first = tools.call("probe", { deep = { a = 1 } }, exec)
    local second = tools.call("probe", {}, exec)
    local ghost = tools.call("ghost", {}, exec)
    local ok, outside = pcall(tools.call, "probe", {}, { callId = "forged" })
    return { first = first, second = second, ghost = ghost, outside = outside.message, own = exec.parent == nil }
  end,
})
tools.register(dsh.define_tool {
  name = "tokens", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function()
    local p = parents
    parents = {}
    return { n = #p, firstTwoSame = p[1] == p[2], meta = getmetatable(p[1]), text = tostring(p[1]),
      nextCallDiffers = p[3] ~= p[1], nextTwoSame = p[3] == p[4] }
  end,
})
`

func TestAPIExecution(t *testing.T) {
	e := load(t, map[string]string{"exec.lua": execPlugin})
	noDiags(t, e)
	e.agents.SetParent("child", "boss")
	child := e.agents.Agent("child")
	ctx := context.Background()
	probe := func(id, root, a, agent, parent string) string {
		return `{"addKey":"exec.lua:16: execution objects are read-only","agent":` + agent + `,"arguments":` + a + `,"assignCallId":"exec.lua:15: execution objects are read-only","bodyOnly":["function","function"],"callId":"` + id + `","meta":"dsh.execution","name":"probe","parent":"` + parent + `","rawset":"exec.lua:17: bad argument #1 to rawset (table expected, got userdata)","rootCallId":"` + root + `","sameAsArgs":true,"setmeta":"exec.lua:18: bad argument #1 to setmetatable (table expected, got userdata)","signal":["function",false,false,true],"text":"execution ` + id + `","unknown":true}`
	}
	t.Run("a top-level call's execution object", func(t *testing.T) {
		got := e.run(t, ctx, engine.Input{CallID: "call-9", RootCallID: "root-1", Name: "probe", Agent: child, Arguments: args(t, `{"deep":{"k":[1]}}`)})
		hosttest.Want(t, got, `{"isError":false,"value":`+probe("call-9", "root-1", `{"deep":{"k":[1]}}`, `{"id":"child","parent":{"id":"boss"}}`, "nil")+`,"content":[{"type":"text","text":"probed call-9"}]}`)
	})
	t.Run("rootCallId defaults to callId and agent is nil without one", func(t *testing.T) {
		got := e.run(t, ctx, engine.Input{CallID: "solo", Name: "probe"})
		hosttest.Want(t, got, `{"isError":false,"value":`+probe("solo", "solo", `{}`, `"nil"`, "nil")+`,"content":[{"type":"text","text":"probed solo"}]}`)
		e.value(t, "tokens", nil) // forget these parents
	})
	t.Run("tools.call makes nested calls with the parent's ids, agent and token", func(t *testing.T) {
		got := e.run(t, ctx, engine.Input{CallID: "outer", RootCallID: "root-7", Name: "composite", Agent: child})
		// Results handed to Lua come back with their keys sorted.
		nested := func(id, a string) string {
			return `{"content":[{"text":"probed ` + id + `","type":"text"}],"isError":false,"value":` + probe(id, "root-7", a, `{"id":"child","parent":{"id":"boss"}}`, "userdata") + `}`
		}
		hosttest.Want(t, got, `{"isError":false,"value":{"first":`+nested("outer:call:1", `{"deep":{"a":1}}`)+
			`,"ghost":{"content":[{"text":"Error: unknown tool \"ghost\"","type":"text"}],"error":{"info":{"code":"UNKNOWN_TOOL","name":"ToolNotFoundError"},"message":"unknown tool \"ghost\""},"isError":true}`+
			`,"outside":"tools.call(name, args, parent_exec) needs the execution of the call it is made from","own":true`+
			`,"second":`+nested("outer:call:2", `{}`)+`},"content":[{"type":"text","text":"composed"}]}`)
	})
	t.Run("exec.parent is the same userdata for the same parent", func(t *testing.T) {
		e.value(t, "tokens", nil)
		e.run(t, ctx, engine.Input{CallID: "a", Name: "composite"})
		e.run(t, ctx, engine.Input{CallID: "b", Name: "composite"})
		hosttest.Want(t, e.value(t, "tokens", nil), `{"firstTwoSame":true,"meta":"dsh.token","n":4,"nextCallDiffers":true,"nextTwoSame":true,"text":"token"}`)
	})
}

func TestAPIPreExecute(t *testing.T) {
	e := load(t, map[string]string{"pre.lua": echo + `
local nexts = {}
dsh.on("tools/pre-execute", function(exec, next)
  local text = exec.arguments.text
  if text == "allow" then return { kind = "allow" } end
  if text == "deny" then return { kind = "deny", reason = "no echo today", info = { name = "PolicyDenied", code = "DENIED" } } end
  if text == "deny-plain" then return { kind = "deny", reason = "plainly not" } end
  if text == "ask" then return { kind = "ask" } end
  if text == "ask-reason" then return { kind = "ask", reason = "needs approval", displayReason = "shown" } end
  if text == "cancel" then return { kind = "cancel" } end
  if text == "no-reason" then return { kind = "deny" } end
  if text == "extra-key" then return { kind = "allow", reason = "x" } end
  if text == "not-table" then return "allow" end
  if text == "nothing" then next() return end
  if text == "function" then return { kind = function() end } end
  if text == "throw" then error("permission hook broke") end
  if text == "throw-level0" then error("permission hook broke", 0) end
  if text == "coded" then error({ name = "HarnessError", code = "DENIED", message = "coded veto" }) end
  if text == "table-error" then error({ why = "no message" }) end
  if text == "number-error" then error(42) end
  local d = next()
  nexts[#nexts + 1] = d
  return d
end)
dsh.tools.register { name = "nexts", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local n = nexts; nexts = dsh.array {}; return n end }
`})
	noDiags(t, e)
	abd := hosttest.Failure("tool call aborted before dispatch", hosttest.Info("AbortError", "ABORTED_BEFORE_DISPATCH"))
	cases := []struct{ text, want string }{
		{"allow", success("allow")},
		{"pass", success("pass")},
		{"deny", hosttest.Failure("no echo today", hosttest.Info("PolicyDenied", "DENIED"))},
		{"deny-plain", hosttest.Failure("plainly not", "")},
		{"ask", hosttest.Failure(`tool "echo" requires approval (not yet supported)`, "")},
		{"ask-reason", hosttest.Failure("needs approval", "")},
		{"cancel", abd},
		{"no-reason", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: "deny" needs a reason string`, "")},
		{"extra-key", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: "allow" does not take "reason"`, "")},
		{"not-table", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: a decision must be an object`, "")},
		{"nothing", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: it returned nil (return next() to pass the call on)`, "")},
		{"function", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: decision.kind: a function is not lossless JSON`, "")},
		{"throw", hosttest.Failure("permission hook broke", "")},
		{"throw-level0", hosttest.Failure("permission hook broke", "")},
		{"coded", hosttest.Failure("coded veto", hosttest.Info("HarnessError", "DENIED"))},
		{"table-error", hosttest.Failure("(error object is a table value)", "")},
		{"number-error", hosttest.Failure("42", "")},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			hosttest.Want(t, e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: c.text})), c.want)
		})
	}
	t.Run("next() returns the default decision", func(t *testing.T) {
		// the "pass" call's, then the nexts call's own
		hosttest.Want(t, e.value(t, "nexts", nil), `[{"kind":"allow"},{"kind":"allow"}]`)
	})
}

func TestAPIExecuteWrapper(t *testing.T) {
	e := load(t, map[string]string{"wrap.lua": echo + `
local notes = {}
dsh.tools.register(dsh.define_tool {
  name = "thrower", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() error({ name = "HarnessError", code = "BOOM", message = "kaboom" }) end,
})
dsh.on("tools/execute", function(exec, next)
  if exec.name == "thrower" then notes.thrown = next() return notes.thrown end
  if exec.name ~= "echo" then return next() end
  local text = exec.arguments.text
  if text == "short" then return { isError = false, value = "from wrapper", content = { { type = "text", text = "ignored" } }, meta = { ignored = true } } end
  if text == "short-bad" then return { isError = false, value = 42, content = {} } end
  if text == "failure" then return { isError = true, error = { message = "wrapped failure", info = { name = "HarnessError", code = "WRAPPER_FAILURE" } },
    content = { { type = "text", text = "custom" } }, meta = { m = 1 } } end
  if text == "throw" then error("wrapper broke") end
  if text == "not-result" then return 5 end
  if text == "nothing" then next() return end
  if text == "unchanged" then local r = next(); notes.unchanged = { isError = r.isError, value = r.value }; return r end
  if text == "copied" then local r = next(); return { isError = r.isError, value = r.value .. "!", content = r.content } end
  return next()
end)
dsh.tools.register { name = "notes", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local n = notes; notes = {}; return n end }
`})
	noDiags(t, e)
	call := func(text string) string {
		return e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	t.Run("returning next()'s result unchanged", func(t *testing.T) {
		hosttest.Want(t, call("unchanged"), success("unchanged"))
		hosttest.Want(t, e.value(t, "notes", nil), `{"unchanged":{"isError":false,"value":"unchanged"}}`)
	})
	t.Run("a short-circuit success is re-rendered from its value", func(t *testing.T) {
		hosttest.Want(t, call("short"), success("from wrapper"))
		hosttest.Want(t, call("copied"), success("copied!"))
		hosttest.Want(t, call("short-bad"), hosttest.Failure(`tool "echo" returned invalid output: "value" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	})
	t.Run("a wrapper failure is kept with its content and meta", func(t *testing.T) {
		hosttest.Want(t, call("failure"), `{"isError":true,"error":{"message":"wrapped failure","info":{"name":"HarnessError","code":"WRAPPER_FAILURE"}},"content":[{"type":"text","text":"custom"}],"meta":{"m":1}}`)
	})
	t.Run("a throwing or malformed wrapper", func(t *testing.T) {
		hosttest.Want(t, call("throw"), hosttest.Failure("wrapper broke", ""))
		hosttest.Want(t, call("not-result"), hosttest.Failure("tools/execute wrapper returned 5, not a result object", ""))
		hosttest.Want(t, call("nothing"), hosttest.Failure("tools/execute wrapper returned nil, not a result (return next() to pass the call on)", ""))
	})
	t.Run("next() returns a thrown body as a normalized error", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "thrower", nil), hosttest.Failure("kaboom", hosttest.Info("HarnessError", "BOOM")))
		hosttest.Want(t, e.value(t, "notes", nil), `{"thrown":{"content":[{"text":"Error: kaboom","type":"text"}],"error":{"info":{"code":"BOOM","name":"HarnessError"},"message":"kaboom"},"isError":true}}`)
	})
}

func TestAPIPostExecute(t *testing.T) {
	e := load(t, map[string]string{"post.lua": echo + `
local seen = {}
local function ctx(text) return { id = "ctx-" .. text, role = "user", content = { { type = "text", text = text } }, source = { kind = "plugin", plugin = "post.lua" } } end
dsh.on("tools/post-execute", function(exec, result, next)
  if exec.name == "seen" then return next() end
  seen[#seen + 1] = { isError = result.isError, value = result.value or dsh.null }
  local text = exec.arguments.text
  if text == "content" then return { kind = "accept", content = { { type = "text", text = "replaced" } } } end
  if text == "no-content" then return { kind = "accept", content = {} } end
  if text == "value" then return { kind = "accept", value = "new value", additionalContexts = { ctx("after") } } end
  if text == "bad-value" then return { kind = "accept", value = 7 } end
  if text == "both" then return { kind = "accept", value = "v", content = {} } end
  if text == "block" then return { kind = "block", feedback = { { type = "text", text = "blocked by policy" }, { type = "reasoning", text = "why" } } } end
  if text == "block-empty" then return { kind = "block", feedback = {} } end
  if text == "block-ctx" then return { kind = "block", feedback = { { type = "text", text = "no" } }, additionalContexts = { ctx("blocked") } } end
  if text == "unknown" then return { kind = "acept" } end
  if text == "throw" then error("post hook broke") end
  return next()
end)
dsh.tools.register { name = "seen", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local s = seen; seen = {}; return s end }
`})
	noDiags(t, e)
	call := func(text string) string {
		return ids(e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text})))
	}
	cases := []struct{ text, want string }{
		{"plain", success("plain")},
		{"content", `{"isError":false,"value":"content","content":[{"type":"text","text":"replaced"}]}`},
		{"no-content", `{"isError":false,"value":"no-content","content":[]}`},
		{"value", `{"isError":false,"value":"new value","content":[{"type":"text","text":"new value"}],"additionalContexts":[{"id":"ctx-after","role":"user","content":[{"type":"text","text":"after"}],"source":{"kind":"plugin","plugin":"post.lua"}}]}`},
		{"bad-value", hosttest.Failure(`tool "echo" returned invalid output: "value" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"both", hosttest.Failure("tools/post-execute accept decision cannot replace both value and content", "")},
		{"block", `{"isError":true,"error":{"message":"blocked by policy\n[reasoning content]"},"content":[{"type":"text","text":"blocked by policy"},{"type":"reasoning","text":"why"}]}`},
		{"block-empty", `{"isError":true,"error":{"message":"tool result blocked by post-execute policy"},"content":[]}`},
		{"block-ctx", `{"isError":true,"error":{"message":"no"},"content":[{"type":"text","text":"no"}],"additionalContexts":[{"id":"ctx-blocked","role":"user","content":[{"type":"text","text":"blocked"}],"source":{"kind":"plugin","plugin":"post.lua"}}]}`},
		{"unknown", hosttest.Failure(`tools/post-execute listener returned an invalid decision: unknown kind "acept"`, "")},
		{"throw", hosttest.Failure("post hook broke", "")},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) { hosttest.Want(t, call(c.text), c.want) })
	}
	t.Run("post-execute saw each result", func(t *testing.T) {
		var w []string
		for _, c := range cases {
			w = append(w, `{"isError":false,"value":"`+c.text+`"}`)
		}
		hosttest.Want(t, e.value(t, "seen", nil), "["+strings.Join(w, ",")+"]")
		hosttest.Want(t, e.call(t, "ghost", nil), hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.value(t, "seen", nil), `[{"isError":true,"value":null}]`)
	})
}

func TestAPIObservers(t *testing.T) {
	logs := &logBuffer{}
	e := load(t, map[string]string{"obs.lua": echo + `
local results, changes = {}, {}
dsh.on("tools/change", function(c) changes[#changes + 1] = c end)
dsh.on("tools/result", function(exec, r)
  local texts = {}
  for k, b in ipairs(r.content) do texts[k] = b.text end
  results[#results + 1] = exec.callId .. " " .. exec.name .. " " .. tostring(r.isError) .. " " .. table.concat(texts, "|")
end)
dsh.on("tools/result", function() error("observer broke") end)
dsh.tools.register { name = "results", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local r = results; results = dsh.array {}; return r end }
dsh.tools.register { name = "changes", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local c = changes; changes = dsh.array {}; return c end }
`}, func(h *lua.Host, _ *engine.Service) { h.Logger = logs.logger() })
	noDiags(t, e)
	ctx := context.Background()
	t.Run("tools/result sees every call once, whatever its outcome", func(t *testing.T) {
		e.value(t, "results", nil)
		e.run(t, ctx, engine.Input{CallID: "r1", Name: "echo", Arguments: args(t, `{"text":"hi"}`)})
		e.run(t, ctx, engine.Input{CallID: "r2", Name: "echo", Arguments: args(t, `{}`)})
		e.run(t, ctx, engine.Input{CallID: "r3", Name: "ghost"})
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		e.run(t, cancelled, engine.Input{CallID: "r4", Name: "echo", Arguments: args(t, `{"text":"x"}`)})
		e.run(t, ctx, engine.Input{CallID: "r5", Name: "echo", Arguments: dsl.NewObject(dsl.Member{Key: "f", Value: func() {}})})
		hosttest.Want(t, e.value(t, "results", nil), `["v1 results false ","r1 echo false hi","r2 echo true Error: invalid arguments: missing required property \"text\"","r3 ghost true Error: unknown tool \"ghost\"","r4 echo true Error: tool call aborted before dispatch","r5 echo true Error: tool execution arguments must be losslessly JSON-serializable"]`)
		if n := strings.Count(logs.String(), `"error":"observer broke"`); n != 7 {
			t.Errorf("%d warnings of the failing observer in:\n%s", n, logs.String())
		}
	})
	t.Run("tools/change sees tools registered and disposed later from Go", func(t *testing.T) {
		e.value(t, "changes", nil)
		d, err := e.svc.Global().Register(shellTool())
		if err != nil {
			t.Fatal(err)
		}
		d()
		worker := e.agents.Agent("worker")
		ws := e.svc.Scope(worker)
		if _, err := ws.Register(shellTool()); err != nil {
			t.Fatal(err)
		}
		lift, err := ws.Restrict(engine.Filter{Deny: []string{"echo"}})
		if err != nil {
			t.Fatal(err)
		}
		lift()
		ws.Dispose()
		hosttest.Want(t, e.value(t, "changes", nil), `[{"kind":"register","name":"shell"},{"kind":"dispose","name":"shell"},{"agent":"worker","kind":"register","name":"shell"},{"agent":"worker","kind":"restrict"},{"agent":"worker","kind":"lift"},{"agent":"worker","kind":"dispose","name":"shell"}]`)
	})
}

func TestAPIChangeListenerHearsTheRegistrationsOfItsOwnPlugin(t *testing.T) {
	e := load(t, map[string]string{"self.lua": `
local dsh = require("dsh")
local heard, dispose = {}, nil
dsh.on("tools/change", function(c) heard[#heard + 1] = c.kind .. ":" .. (c.name or "") end)
local function def(name)
  return { name = name, description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
    execute = function() return name end }
end
dsh.tools.register(def("base"))
dsh.tools.register { name = "churn", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function()
    dispose = dsh.tools.register(def("late"))
    dsh.tools.scope("worker").restrict { deny = { "base" } }
    dispose()
    local h = heard
    heard = dsh.array {}
    return h
  end }
`})
	noDiags(t, e)
	// The commit's own registrations first: the listener is committed before them.
	hosttest.Want(t, e.value(t, "churn", nil), `["register:base","register:churn","register:late","restrict:","dispose:late"]`)
}

func TestAPIListenerOrder(t *testing.T) {
	e := load(t, map[string]string{"order.lua": echo + `
local order = {}
local function push(s) order[#order + 1] = s end
for _, spec in ipairs({ { "a" }, { "b" }, { "c", { prepend = true } }, { "d", { prepend = true } }, { "e", { prepend = false } } }) do
  local name, opts = spec[1], spec[2]
  dsh.on("tools/pre-execute", function(exec, next)
    if exec.name ~= "echo" then return next() end
    push("pre:" .. name); local d = next(); push("pre:" .. name .. ":after"); return d
  end, opts)
  dsh.on("tools/execute", function(exec, next)
    if exec.name ~= "echo" then return next() end
    push("execute:" .. name); local r = next(); push("execute:" .. name .. ":after"); return r
  end, opts)
  dsh.on("tools/post-execute", function(exec, r, next)
    if exec.name ~= "echo" then return next() end
    push("post:" .. name); local d = next(); push("post:" .. name .. ":after"); return d
  end, opts)
end
dsh.tools.guard(function(exec) if exec.name == "echo" then push("guard") end end)
dsh.tools.register { name = "order", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local o = order; order = dsh.array {}; return o end }
`})
	noDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"hi"}`)), success("hi"))
	var w []string
	for _, stage := range []string{"pre", "execute", "post"} {
		names := []string{"d", "c", "a", "b", "e"}
		for _, n := range names {
			w = append(w, `"`+stage+":"+n+`"`)
		}
		for k := len(names) - 1; k >= 0; k-- {
			w = append(w, `"`+stage+":"+names[k]+`:after"`)
		}
		if stage == "pre" {
			w = append(w, `"guard"`)
		}
	}
	hosttest.Want(t, e.value(t, "order", nil), "["+strings.Join(w, ",")+"]")
}

func TestAPIDispatchLog(t *testing.T) {
	e := load(t, map[string]string{"dlog.lua": `
local dsh = require("dsh")
dsh.on("tools/ptc-dispatch-log", function(entry, next)
  local content = next()
  content[#content + 1] = { type = "text", text = table.concat({ "outer", entry.subCallId, entry.name, tostring(entry.isError), tostring(entry.exec == nil), entry.agent.id }, " ") }
  return content
end)
dsh.on("tools/ptc-dispatch-log", function(entry, next)
  local content = next()
  table.insert(content, 1, { type = "text", text = "first" })
  return content
end, { prepend = true })
`})
	noDiags(t, e)
	got := e.svc.DispatchLogContent(context.Background(), &engine.DispatchLogEntry{Agent: e.agents.Agent("worker"), SubCallID: "c1:ptc:1", Name: "echo", Content: []engine.Block{engine.Text("hi")}})
	hosttest.Want(t, marshal(t, engine.ContentJSON(got)), `[{"type":"text","text":"first"},{"type":"text","text":"hi"},{"type":"text","text":"outer c1:ptc:1 echo false true worker"}]`)
}

func TestAPIDeferContextAndConcludeTurn(t *testing.T) {
	e := load(t, map[string]string{"sub/ctx.lua": `
local dsh = require("dsh")
local kept
dsh.tools.register(dsh.define_tool {
  name = "ctx", description = "", parameters = { mode = { type = "string" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args, exec)
    exec.defer_context { content = { { type = "text", text = "remember this" } } }
    if args.mode == "full" then exec:defer_context { id = "m-2", role = "user", content = { { type = "text", text = "second" } }, source = { kind = "user" } } end
    if args.mode == "conclude" or args.mode == "conclude-throw" then exec.conclude_turn() end
    if args.mode == "throw" or args.mode == "conclude-throw" then error("after deferring") end
    if args.mode == "bad" then exec.defer_context { content = "not blocks" } end
    if args.mode == "keep" then kept = exec end
    if args.mode == "stale" then kept.defer_context { content = {} } end
    return "done"
  end,
})
`})
	noDiags(t, e)
	first := `{"id":"<id>","role":"user","content":[{"type":"text","text":"remember this"}],"source":{"kind":"plugin","plugin":"sub/ctx.lua"}}`
	call := func(mode string) string {
		return ids(e.call(t, "ctx", dsl.NewObject(dsl.Member{Key: "mode", Value: mode})))
	}
	hosttest.Want(t, call("one"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`]}`)
	hosttest.Want(t, call("full"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`,{"id":"m-2","role":"user","content":[{"type":"text","text":"second"}],"source":{"kind":"user"}}]}`)
	hosttest.Want(t, call("conclude"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`],"concludesTurn":true}`)
	t.Run("contexts survive a throwing body, conclusion does not", func(t *testing.T) {
		w := `{"isError":true,"error":{"message":"after deferring"},"content":[{"type":"text","text":"Error: after deferring"}],"additionalContexts":[` + first + `]}`
		hosttest.Want(t, call("throw"), w)
		hosttest.Want(t, call("conclude-throw"), w)
	})
	t.Run("a bad message throws in the body", func(t *testing.T) {
		got := call("bad")
		if !strings.HasPrefix(got, `{"isError":true,"error":{"message":"`) || !strings.Contains(got, `"additionalContexts":[`+first+`]`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("an execution object kept past its call refuses to act", func(t *testing.T) {
		call("keep")
		hosttest.Want(t, call("stale"), `{"isError":true,"error":{"message":"this execution object is no longer live (its call has settled)"},"content":[{"type":"text","text":"Error: this execution object is no longer live (its call has settled)"}],"additionalContexts":[`+first+`]}`)
	})
	t.Run("the message ids are fresh UUIDs", func(t *testing.T) {
		a, b := e.call(t, "ctx", nil), e.call(t, "ctx", nil)
		if !uuid.MatchString(a) || a == b {
			t.Errorf("ids: %s / %s", a, b)
		}
	})
}

func TestAPILogging(t *testing.T) {
	logs := &logBuffer{}
	e := load(t, map[string]string{"logs.lua": `
local dsh = require("dsh")
dsh.log.info("loading", { n = 1 })
dsh.tools.register(dsh.define_tool {
  name = "talk", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function()
    print("hello", 42, 1.5, { a = 1 }, nil, true, dsh.null, print, setmetatable({}, { __tostring = function() error("never called") end }))
    dsh.log.debug("dbg")
    dsh.log.warn("careful", { k = "v", nested = { x = { 1 } } })
    dsh.log.error("bad", { code = 7 })
    dsh.log.info({ not_a = "string" })
    return "said"
  end,
})
`}, func(h *lua.Host, _ *engine.Service) { h.Logger = logs.logger() })
	noDiags(t, e)
	hosttest.Want(t, e.value(t, "talk", nil), `"said"`)
	w := []string{
		`{"level":"INFO","msg":"loading","plugin":"logs.lua","n":1}`,
		`{"level":"INFO","msg":"hello 42 1.5 {\"a\":1} nil true null function table","plugin":"logs.lua"}`,
		`{"level":"DEBUG","msg":"dbg","plugin":"logs.lua"}`,
		`{"level":"WARN","msg":"careful","plugin":"logs.lua","k":"v","nested":{"x":[1]}}`,
		`{"level":"ERROR","msg":"bad","plugin":"logs.lua","code":7}`,
		`{"level":"INFO","msg":"{\"not_a\":\"string\"}","plugin":"logs.lua"}`,
	}
	hosttest.Want(t, logs.String(), strings.Join(w, "\n")+"\n")
}

func TestAPIValues(t *testing.T) {
	e := load(t, map[string]string{"values.lua": `
local dsh = require("dsh")
local cases = {
  null = function() return dsh.null end,
  empty = function() return {} end,
  empty_array = function() return dsh.array {} end,
  empty_object = function() return dsh.object {} end,
  array = function() return { 1, 2, "three", true, dsh.null } end,
  object = function() return { b = 1, a = { 2.5, -3 } } end,
  numbered_object = function() return dsh.object { "x", "y" } end,
  round_trip = function(args) return args.echo end,
  mixed = function() return { 1, 2, x = 3 } end,
  sparse = function() return { 1, nil, 3 } end,
  holes = function() local t = { } t[1] = 1 t[3] = 3 return t end,
  nan = function() return { n = 0/0 } end,
  huge = function() return { n = math.huge } end,
  neg_huge = function() return -math.huge end,
  neg_zero = function() return -0.0 end,
  big = function() return 1e300 end,
  integral = function() return { 3.0, 2^53 } end,
  fn = function() return { f = print } end,
  coroutine = function() return coroutine.create(function() end) end,
  metatable = function() return setmetatable({ a = 1 }, { __index = function() return "x" end }) end,
  pairs_trap = function() return setmetatable({}, { __pairs = function() error("ran __pairs") end }) end,
  cycle = function() local t = {} t.self = t return t end,
  shared = function() local s = { 1 } return { a = s, b = s } end,
  bool_key = function() return { [true] = 1 } end,
  bad_utf8 = function() return "\255" end,
  marked_array_with_key = function() local t = dsh.array { 1 } t.x = 2 return t end,
  mark_a_protected = function() local ok, err = pcall(dsh.array, setmetatable({}, {})) return err.message end,
  deep = function() local v = 1 for _ = 1, 10000 do v = { v } end return v end,
}
dsh.tools.register {
  name = "value", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function(args) return cases[args.case](args) end,
}
dsh.tools.register {
  name = "array_schema", description = "", parameters = { type = "object" },
  output = { schema = { type = "object", properties = { list = { type = "array" }, map = { type = "object" } } }, render = function() return {} end },
  execute = function() return { list = {}, map = {} } end,
}
dsh.tools.register {
  name = "meta", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function() return { getmetatable(dsh.null), tostring(dsh.null), getmetatable(dsh.array {}), getmetatable(dsh.object {}), getmetatable("") } end,
}
`})
	noDiags(t, e)
	invalid := hosttest.Failure(`tool "value" returned invalid output: value is not lossless JSON`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))
	ok := func(v string) string { return `{"isError":false,"value":` + v + `,"content":[]}` }
	cases := []struct{ name, args, want string }{
		{"dsh.null is JSON null", `{"case":"null"}`, ok(`null`)},
		{"an empty table is an object", `{"case":"empty"}`, ok(`{}`)},
		{"dsh.array{} is an empty array", `{"case":"empty_array"}`, ok(`[]`)},
		{"dsh.object{} is an empty object", `{"case":"empty_object"}`, ok(`{}`)},
		{"a sequence is an array", `{"case":"array"}`, ok(`[1,2,"three",true,null]`)},
		{"string keys make an object, keys sorted", `{"case":"object"}`, ok(`{"a":[2.5,-3],"b":1}`)},
		{"a table marked as an object keeps integer keys as strings", `{"case":"numbered_object"}`, ok(`{"1":"x","2":"y"}`)},
		{"values from JSON remember [] and {}", `{"case":"round_trip","echo":{"a":[],"o":{},"n":null,"list":[{}]}}`, ok(`{"a":[],"list":[{}],"n":null,"o":{}}`)},
		{"mixed keys are not lossless", `{"case":"mixed"}`, invalid},
		{"a nil hole is not lossless", `{"case":"sparse"}`, invalid},
		{"a missing index is not lossless", `{"case":"holes"}`, invalid},
		{"0/0 is not lossless", `{"case":"nan"}`, invalid},
		{"math.huge is not lossless", `{"case":"huge"}`, invalid},
		{"-math.huge is not lossless", `{"case":"neg_huge"}`, invalid},
		{"-0 is not lossless", `{"case":"neg_zero"}`, invalid},
		{"1e300 is fine", `{"case":"big"}`, ok(`1e+300`)},
		{"integral numbers print without .0", `{"case":"integral"}`, ok(`[3,9007199254740992]`)},
		{"a function is not lossless", `{"case":"fn"}`, invalid},
		{"a coroutine is not lossless", `{"case":"coroutine"}`, invalid},
		{"a table with __index is not lossless and __index never runs", `{"case":"metatable"}`, invalid},
		{"a table with __pairs is not lossless and __pairs never runs", `{"case":"pairs_trap"}`, invalid},
		{"a cycle is not lossless", `{"case":"cycle"}`, invalid},
		{"a shared table is copied", `{"case":"shared"}`, ok(`{"a":[1],"b":[1]}`)},
		{"a boolean key is not lossless", `{"case":"bool_key"}`, invalid},
		{"invalid UTF-8 is not lossless", `{"case":"bad_utf8"}`, invalid},
		{"a marked array with a string key is not lossless", `{"case":"marked_array_with_key"}`, invalid},
		{"a table with a metatable cannot be marked", `{"case":"mark_a_protected"}`, ok(`"dsh.array/dsh.object cannot mark a table that has a metatable"`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { hosttest.Want(t, e.call(t, "value", args(t, c.args)), c.want) })
	}
	t.Run("a 10,000-deep table crosses", func(t *testing.T) {
		got := e.call(t, "value", args(t, `{"case":"deep"}`))
		if !strings.HasPrefix(got, `{"isError":false,"value":[[[[`) || strings.Count(got, "[") != 10001 {
			t.Errorf("got %.200s", got)
		}
	})
	t.Run("the schema makes an empty table an array where it says array", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "array_schema", nil), `{"isError":false,"value":{"list":[],"map":{}},"content":[]}`)
	})
	t.Run("the marks and dsh.null are protected", func(t *testing.T) {
		hosttest.Want(t, e.value(t, "meta", nil), `["dsh.null","dsh.null","dsh.array","dsh.object","protected"]`)
	})
}

func TestAPIModules(t *testing.T) {
	files := map[string]string{
		"lib/util.lua": `
local M = { counter = { n = 0 } }
function M.shout(s) return s:upper() .. "!" end
return M
`,
		"lib/side.lua":    `require("dsh").tools.register { name = "side_tool", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end }, execute = function() return 1 end }`,
		"lib/broken.lua":  `error("a lib file ran as a plugin")`,
		"lib/deep/x.lua":  `error("a nested lib file ran as a plugin")`,
		"lib/fails.lua":   "local x = 1\nerror(\"module failed\")\n",
		"_private.lua":    `error("an underscore file ran as a plugin")`,
		"helpers/fmt.lua": `local util = require("lib.util") return { wrap = function(s) return "[" .. util.shout(s) .. "]" end }`,
		"req.lua": `
local dsh = require("dsh")
local util = require("lib.util")
local again = require("lib.util")
local fmt = require("helpers.fmt")
util.counter.n = util.counter.n + 1
dsh.tools.register(dsh.define_tool {
  name = "req", description = "", parameters = { text = { type = "string", required = true } },
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function(args) return { shout = util.shout(args.text), wrap = fmt.wrap(args.text), cached = util == again, counter = again.counter.n } end,
})
`,
		"bad/escape.lua":  "local dsh = require(\"dsh\")\n\nrequire(\"..outside\")\n",
		"bad/missing.lua": "require(\"lib.nope\")\n",
		"bad/fails.lua":   "local dsh = require(\"dsh\")\nrequire(\"lib.fails\")\n",
		"bad/os.lua":      "require(\"os\")\n",
		"bad/io.lua":      "local x = require(\"io\")\n",
	}
	e := load(t, files)
	t.Run("modules under lib and other folders work with require", func(t *testing.T) {
		hosttest.Want(t, e.value(t, "req", args(t, `{"text":"hi"}`)), `{"cached":true,"counter":1,"shout":"HI!","wrap":"[HI!]"}`)
	})
	t.Run("lib files and _files are not plugins", func(t *testing.T) {
		if e.svc.Global().Get("side_tool") != nil {
			t.Error("lib/side.lua was loaded as a plugin")
		}
		var rels []string
		for _, l := range e.loaded {
			rels = append(rels, l.Source.Rel)
		}
		hosttest.Want(t, strings.Join(rels, ","), "helpers/fmt.lua,req.lua")
	})
	t.Run("requires that fail or leave the scripts directory are diagnostics", func(t *testing.T) {
		w := []string{
			`bad/escape.lua:3: invalid module name '..outside': use dotted names of letters, digits, "_" and "-", such as "lib.util"`,
			`bad/fails.lua:2: lib/fails.lua:2: module failed`,
			`bad/io.lua:1: module 'io' not found: only "dsh", "dsh.*" and modules inside the scripts directory can be required`,
			`bad/missing.lua:1: module 'lib.nope' not found: only "dsh", "dsh.*" and modules inside the scripts directory can be required`,
			`bad/os.lua:1: module 'os' not found: only "dsh", "dsh.*" and modules inside the scripts directory can be required`,
		}
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), strings.Join(w, "\n"))
	})
}

func TestAPIRegisterRefusals(t *testing.T) {
	e := load(t, map[string]string{"other.lua": echo, "reg.lua": `
local dsh = require("dsh")
local tools = dsh.tools
local out = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end }
local function raw(extra)
  local d = { name = "x", description = "", parameters = { type = "object" }, output = out, execute = function() return "x" end }
  for k, v in pairs(extra) do d[k] = v end
  return d
end
local attempts = {
  noOutput = function() tools.register(raw({ output = false })) end,
  noRender = function() tools.register(raw({ output = { schema = {} } })) end,
  badMeta = function() tools.register(raw({ output = { schema = {}, render = function() return {} end, presentation_meta = 5 } })) end,
  badSchema = function() tools.register(raw({ output = { schema = { type = "string", minLength = 1 }, render = function() return {} end } })) end,
  timeout = function() tools.register(raw({ timeout_ms = 0 })) end,
  reserved = function() tools.register(raw({ name = "run_code" })) end,
  reservedScoped = function() tools.scope("worker").register(raw({ name = "run_code" })) end,
  restrictGlobal = function() tools.restrict { deny = { "echo" } } end,
  restrictNoop = function() tools.scope("worker").restrict {} end,
  restrictUnknown = function() tools.scope("worker").restrict { allow = { "ghost" } } end,
  restrictNotNames = function() tools.scope("worker").restrict { allow = { 1 } } end,
  badEvent = function() dsh.on("tools/nope", function() end) end,
  notAFunction = function() dsh.on("tools/result", 5) end,
  notADefinition = function() tools.register("x") end,
  guardNotAFunction = function() tools.guard({}) end,
  scopeNotAString = function() tools.scope(5) end,
  badInstances = function() dsh.instances(0) end,
}
tools.register { name = "refusals", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function()
    local r = {}
    for k, f in pairs(attempts) do local ok, err = pcall(f); r[k] = ok and "registered" or err.message end
    local ok, err = pcall(tools.register, raw({ name = "echo" }))
    r.duplicate = ok and "registered" or err.message
    local d = tools.register(raw({ name = "late" }))
    r.late = tools.get("late") ~= nil
    disposeLate = d
    return r
  end }
tools.register { name = "unlate", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() disposeLate() return tools.get("late") == nil end }
`})
	noDiags(t, e)
	hosttest.Want(t, e.value(t, "refusals", nil), `{"badEvent":"on(): unknown event \"tools/nope\" (tools/pre-execute, tools/execute, tools/post-execute, tools/result, tools/change, tools/ptc-dispatch-log)","badInstances":"instances must be an integer from 1 to 64","badMeta":"tool \"x\" must declare output { schema, render, presentationMeta? }","badSchema":"tool \"x\": output.schema: unsupported JSON schema: schema.minLength is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)","duplicate":"tool \"echo\" is already registered (for a per-agent variant, register through that agent's scope, `+"`tools.scope(id)`"+`, instead)","guardNotAFunction":"tools.guard(fn) needs a function","late":true,"noOutput":"tool \"x\" must declare output { schema, render, presentationMeta? }","noRender":"tool \"x\" must declare output { schema, render, presentationMeta? }","notADefinition":"tools.register(definition) needs a definition table","notAFunction":"on(\"tools/result\", listener) needs a listener function","reserved":"tool name \"run_code\" is reserved for the PTC transport and cannot be registered or shadowed","reservedScoped":"tool name \"run_code\" is reserved for the PTC transport and cannot be registered or shadowed","restrictGlobal":"tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead","restrictNoop":"tools.restrict({}) is a no-op: pass `+"`allow` and/or `deny`"+` (an empty filter is almost always a materialized-empty-config bug)","restrictNotNames":"tools.restrict(): allow must be an array of tool names","restrictUnknown":"tools.restrict() names unknown global tool \"ghost\"; known global tools: echo, refusals, unlate","scopeNotAString":"tools.scope(agent_id) needs an agent id string","timeout":"tool \"x\" timeoutMs must be a positive finite number"}`)
	t.Run("a registration made by a body takes effect at once", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "late", nil), success("x"))
		hosttest.Want(t, e.value(t, "unlate", nil), `true`)
		hosttest.Want(t, e.call(t, "late", nil), hosttest.Failure(`unknown tool "late"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	})
}

func TestAPIScopedPolicy(t *testing.T) {
	e := load(t, map[string]string{"scoped.lua": echo + `
local worker = dsh.tools.scope("worker")
local heard = {}
worker.on("tools/pre-execute", function(exec, next)
  heard[#heard + 1] = exec.agent.id .. ":" .. exec.arguments.text
  if exec.arguments.text == "veto" then return { kind = "deny", reason = "scoped veto" } end
  return next()
end)
worker.guard(function(exec) if exec.arguments.text == "guarded" then return "terminal policy" end end)
dsh.on("tools/pre-execute", function(exec, next)
  if exec.arguments.text == "guarded" then return { kind = "allow" } end
  return next()
end, { prepend = true })
dsh.tools.register { name = "heard", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local h = heard; heard = dsh.array {}; return h end }
`})
	noDiags(t, e)
	e.agents.SetParent("child", "worker")
	worker, other, child := e.agents.Agent("worker"), e.agents.Agent("other"), e.agents.Agent("child")
	call := func(agent *engine.Agent, text string) string {
		return e.callAs(t, agent, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	hosttest.Want(t, call(worker, "veto"), hosttest.Failure("scoped veto", ""))
	hosttest.Want(t, call(child, "veto"), hosttest.Failure("scoped veto", ""))
	hosttest.Want(t, call(other, "veto"), success("veto"))
	hosttest.Want(t, call(nil, "veto"), success("veto"))
	hosttest.Want(t, call(worker, "guarded"), hosttest.Failure("terminal policy", ""))
	hosttest.Want(t, call(child, "guarded"), hosttest.Failure("terminal policy", ""))
	hosttest.Want(t, call(other, "guarded"), success("guarded"))
	hosttest.Want(t, call(worker, "fine"), success("fine"))
	hosttest.Want(t, e.value(t, "heard", nil), `["worker:veto","child:veto","worker:fine"]`)
}

func TestAPISignal(t *testing.T) {
	started := make(chan struct{}, 1)
	e := load(t, map[string]string{"sig.lua": `
local dsh = require("dsh")
local notes = {}
dsh.tools.register(dsh.define_tool {
  name = "poll", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args, exec)
    dsh.text.started()
    local n = 0
    while not exec.signal.aborted() do n = n + 1 end
    notes.body = { aborted = exec.signal.aborted(), reason = exec.signal.reason() }
    return "stopped"
  end,
})
dsh.on("tools/pre-execute", function(exec, next)
  if exec.name ~= "slow" then return next() end
  while not exec.signal.aborted() do end
  return { kind = "deny", reason = "gave up: " .. exec.signal.reason() }
end)
dsh.tools.register { name = "slow", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() return "ran" end }
dsh.tools.register { name = "notes", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() local n = notes; notes = {}; return n end }
`}, func(h *lua.Host, _ *engine.Service) {
		h.Grace = time.Second
		h.ListenerTimeout = 50 * time.Millisecond
		h.Modules = append(h.Modules, scripting.Module{Name: "text", Funcs: map[string]scripting.ModuleFunc{
			"started": func(context.Context, []any) (any, error) { started <- struct{}{}; return nil, nil },
		}})
	})
	noDiags(t, e)
	t.Run("a body sees its caller's cancellation on its signal", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan string, 1)
		go func() {
			done <- marshal(t, e.svc.Call(ctx, engine.Input{CallID: "p", Name: "poll", Arguments: dsl.NewObject()}))
		}()
		<-started
		cancel()
		hosttest.Want(t, <-done, hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
		hosttest.Want(t, e.value(t, "notes", nil), `{"body":{"aborted":true,"reason":"context canceled"}}`)
	})
	t.Run("a listener sees its own deadline on its signal", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "slow", nil), hosttest.Failure("gave up: a tools/pre-execute listener timed out after 50ms", ""))
	})
}

func TestAPINestedCallCancellation(t *testing.T) {
	started := make(chan struct{}, 1)
	e := load(t, map[string]string{"nest.lua": `
local dsh = require("dsh")
local child
dsh.tools.register(dsh.define_tool {
  name = "parent", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function(args, exec) child = dsh.tools.call("gosleep", {}, exec) return child end,
})
dsh.tools.register { name = "child", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() return child end }
`}, func(h *lua.Host, svc *engine.Service) {
		h.Grace = time.Second
		def := shellTool()
		def.Name = "gosleep"
		def.Execute = func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			started <- struct{}{}
			<-ctx.Done()
			return "slept", nil // a success after the abort: ABORTED
		}
		if _, err := svc.Global().Register(def); err != nil {
			t.Fatal(err)
		}
	})
	noDiags(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		done <- marshal(t, e.svc.Call(ctx, engine.Input{CallID: "p", Name: "parent", Arguments: dsl.NewObject()}))
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the nested call did not start")
	}
	cancel()
	var got string
	select {
	case got = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the parent did not settle")
	}
	aborted := hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED"))
	hosttest.Want(t, got, aborted)
	hosttest.Want(t, e.value(t, "child", nil), `{"content":[{"text":"Error: tool call aborted","type":"text"}],"error":{"info":{"code":"ABORTED","name":"AbortError"},"message":"tool call aborted"},"isError":true}`)
}

func TestAPIStaleNext(t *testing.T) {
	e := load(t, map[string]string{"stale.lua": echo + `
local kept
dsh.on("tools/pre-execute", function(exec, next)
  if exec.arguments.text == "keep" then kept = next end
  if exec.arguments.text == "stale" then return kept() end
  return next()
end)
`})
	noDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"keep"}`)), success("keep"))
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"stale"}`)), hosttest.Failure("next() was called after its listener returned", ""))
}

func TestAPICallsFromCoroutines(t *testing.T) {
	e := load(t, map[string]string{"co.lua": `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "inner", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function()
    local gen = coroutine.wrap(function() for k = 1, 3 do coroutine.yield(k) end end)
    return { gen(), gen(), gen(), coroutine.running() == nil }
  end,
})
dsh.tools.register(dsh.define_tool {
  name = "outer", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function(args, exec)
    local co = coroutine.create(function(x)
      local r = dsh.tools.call("inner", {}, exec)
      local y = coroutine.yield(r.value)
      return y * 2
    end)
    local ok1, inner = coroutine.resume(co, 1)
    local ok2, doubled = coroutine.resume(co, 21)
    return { ok1, inner, ok2, doubled, coroutine.status(co) }
  end,
})
`})
	noDiags(t, e)
	hosttest.Want(t, e.value(t, "outer", nil), `[true,[1,2,3,true],true,42,"dead"]`)
}

func TestAPINextRaisesWhatTheRestOfTheChainThrew(t *testing.T) {
	e := load(t, map[string]string{"chain.lua": echo + `
dsh.on("tools/pre-execute", function(exec, next)
  if exec.arguments.text == "catch" then
    local ok, err = pcall(next)
    return { kind = "deny", reason = "caught " .. err.name .. "/" .. tostring(err.code) .. ": " .. err.message }
  end
  return next()
end)
dsh.on("tools/pre-execute", function(exec, next)
  error({ name = "HarnessError", code = "POLICY_FAILED", message = "inner policy broke" })
end)
`})
	noDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"through"}`)), hosttest.Failure("inner policy broke", hosttest.Info("HarnessError", "POLICY_FAILED")))
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"catch"}`)), hosttest.Failure("caught HarnessError/POLICY_FAILED: inner policy broke", ""))
}
