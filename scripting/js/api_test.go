package js_test

// Every export of the dsh module (docs/plugins.md) exercised from a
// script, with exact results.

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

// apiMarshal renders a result (or any JSON value) as canonical JSON text.
func apiMarshal(t *testing.T, v any) string {
	t.Helper()
	if r, ok := v.(*engine.Result); ok {
		v = r.JSON()
	}
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// apiRun runs one call through the pipeline and renders its result.
func (e *env) apiRun(t *testing.T, ctx context.Context, in engine.Input) string {
	t.Helper()
	if in.CallID == "" {
		in.CallID = "c1"
	}
	if in.Arguments == nil {
		in.Arguments = dsl.NewObject()
	}
	return apiMarshal(t, e.svc.Call(ctx, in))
}

// apiValue calls a tool that must succeed and returns its value as JSON.
func (e *env) apiValue(t *testing.T, name string, a any) string {
	t.Helper()
	if a == nil {
		a = dsl.NewObject()
	}
	r := e.svc.Call(context.Background(), engine.Input{CallID: "v1", Name: name, Arguments: a})
	if r.IsError {
		t.Fatalf("%s failed: %s", name, apiMarshal(t, r))
	}
	return apiMarshal(t, r.Value)
}

func apiNoDiags(t *testing.T, e *env) {
	t.Helper()
	if len(e.diags) > 0 {
		t.Fatalf("diagnostics: %q", e.diagnostics())
	}
}

var apiUUID = regexp.MustCompile(`"id":"[0-9a-f-]{36}"`)

// apiIDs replaces message ids (random UUIDs) by "<id>".
func apiIDs(s string) string { return apiUUID.ReplaceAllString(s, `"id":"<id>"`) }

// apiEcho is a plugin registering echo: a defineTool tool whose value is its
// required text, rendered as itself.
const apiEcho = `
const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "echo", description: "Echo a text.",
  parameters: { text: { type: "string", required: true } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args) { return args.text; },
}));
`

func TestAPIDefineTool(t *testing.T) {
	e := load(t, map[string]string{"dt.ts": `
import { defineTool, tools } from "dsh";
tools.register(defineTool({
  name: "typed",
  description: "typed parameters",
  parameters: {
    path: { type: "string", required: true, description: "a path" },
    color: { type: "string", enum: ["red", "green"] },
    n: { type: "integer" },
    config: { type: "object", additionalProperties: true, properties: { host: { type: "string", required: true } } },
    tags: { type: "array", items: { type: "string" } },
  },
  output: {
    schema: { type: "object", additionalProperties: false, properties: { path: { type: "string" }, extra: { type: "integer" } } },
    render: (args: any, value: any) => [{ type: "text", text: "path=" + value.path }],
  },
  async execute(args: any) {
    if (args.path === "bad-type") return { path: 42 };
    if (args.path === "bad-key") return { path: "p", other: 1 };
    if (args.path === "fn") return () => 1;
    if (args.path === "undef") return undefined;
    return { path: args.path };
  },
}));
`})
	apiNoDiags(t, e)
	cases := []struct{ name, args, want string }{
		{"valid", `{"path":"a.txt","color":"red","n":3,"config":{"host":"h","port":1},"tags":["x"]}`,
			`{"isError":false,"value":{"path":"a.txt"},"content":[{"type":"text","text":"path=a.txt"}]}`},
		{"extra keys at the root are allowed", `{"path":"a","zzz":true}`,
			`{"isError":false,"value":{"path":"a"},"content":[{"type":"text","text":"path=a"}]}`},
		{"missing required", `{}`,
			hosttest.Failure(`invalid arguments: missing required property "path"`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"enum", `{"path":"a","color":"blue"}`,
			hosttest.Failure(`invalid arguments: "color" must be one of ["red","green"]`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"several violations joined by ; ", `{"path":1,"n":1.5,"config":{},"tags":["a",2]}`,
			hosttest.Failure(`invalid arguments: "path" must be a string; "n" must be an integer; missing required property "config.host"; "tags[1]" must be a string`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{"output of the wrong type", `{"path":"bad-type"}`,
			hosttest.Failure(`tool "typed" returned invalid output: "value.path" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output with an undeclared key", `{"path":"bad-key"}`,
			hosttest.Failure(`tool "typed" returned invalid output: "value.other" is not a declared property (additionalProperties: false)`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output that is a function", `{"path":"fn"}`,
			hosttest.Failure(`tool "typed" returned invalid output: value is not lossless JSON`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"output that is undefined", `{"path":"undef"}`,
			hosttest.Failure(`tool "typed" returned invalid output: value is not lossless JSON`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { hosttest.Want(t, e.call(t, "typed", args(t, c.args)), c.want) })
	}
	t.Run("arguments that are not an object", func(t *testing.T) {
		hosttest.Want(t, e.apiRun(t, context.Background(), engine.Input{Name: "typed", Arguments: "nope"}),
			hosttest.Failure(`invalid arguments: "arguments" must be an object`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
	})
	t.Run("the compiled parameters are what the model sees", func(t *testing.T) {
		list, err := e.svc.Global().Schemas()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			t.Fatalf("schemas %d", len(list))
		}
		hosttest.Want(t, apiMarshal(t, list[0].JSON()), `{"name":"typed","description":"typed parameters","parameters":{"type":"object","properties":{"path":{"type":"string","description":"a path"},"color":{"type":"string","enum":["red","green"]},"n":{"type":"integer"},"config":{"type":"object","additionalProperties":true,"properties":{"host":{"type":"string"}},"required":["host"]},"tags":{"type":"array","items":{"type":"string"}}},"required":["path"]}}`)
	})
}

func TestAPIDefineToolAtTopLevel(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"timeoutMs 0", `const { defineTool } = require("dsh");
const def = defineTool({ name: "x", description: "", parameters: {},
  output: { schema: { type: "string" }, render: () => [] }, timeoutMs: 0, async execute() { return "" } });
`, `p.js:2:13: defineTool(x): timeoutMs must be a positive finite number`},
		{"timeoutMs Infinity", `const { defineTool } = require("dsh");
defineTool({ name: "x", description: "", parameters: {}, output: { schema: { type: "string" }, render: () => [] }, timeoutMs: Infinity, async execute() { return "" } });
`, `p.js:2:1: defineTool(x): timeoutMs must be a positive finite number`},
		{"a parameter object without additionalProperties", `const { defineTool } = require("dsh");
defineTool({ name: "x", description: "", parameters: { cfg: { type: "object" } },
  output: { schema: { type: "string" }, render: () => [] }, async execute() { return "" } });
`, `p.js:2:1: tool "x": parameters: unsupported JSON schema: parameters.cfg.additionalProperties must be explicitly true or false`},
		{"an output spec with an unknown type", `const { defineTool } = require("dsh");
defineTool({ name: "x", description: "", parameters: {},
  output: { schema: { type: "tuple" }, render: () => [] }, async execute() { return "" } });
`, `p.js:2:1: tool "x": output.schema: unsupported JSON schema: schema.type must be string/number/integer/boolean/null/array/object/json, or use oneOf`},
		{"a required that is not true", `const { defineTool } = require("dsh");
defineTool({ name: "x", description: "", parameters: { a: { type: "string", required: false } },
  output: { schema: { type: "string" }, render: () => [] }, async execute() { return "" } });
`, `p.js:2:1: tool "x": parameters: unsupported JSON schema: parameters.a.required must be true when present`},
		{"a const outside its enum (raw assertion)", `const { defineTool } = require("dsh");
defineTool({ name: "x", description: "", parameters: {},
  output: { schema: { type: "string", enum: ["a"], const: "b" }, render: () => [] }, async execute() { return "" } });
`, `p.js:2:1: tool "x": output.schema: unsupported JSON schema: schema.const must be one of schema.enum when both are declared`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := load(t, map[string]string{"p.js": c.src})
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
		e := load(t, map[string]string{"p.js": `const { defineTool, tools } = require("dsh");
let caught;
try {
  defineTool({ name: "x", description: "", parameters: { a: { type: "nope" } }, output: { schema: { type: "string" }, render: () => [] }, async execute() { return "" } });
} catch (err) { caught = { name: err.name, code: err.code, message: err.message }; }
let timeout;
try {
  defineTool({ name: "x", description: "", parameters: {}, output: { schema: { type: "string" }, render: () => [] }, timeoutMs: -5, async execute() { return "" } });
} catch (err) { timeout = { name: err.name, isError: err instanceof Error, message: err.message }; }
tools.register(defineTool({ name: "caught", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [] }, async execute() { return { caught, timeout }; } }));
`})
		apiNoDiags(t, e)
		hosttest.Want(t, e.apiValue(t, "caught", nil), `{"caught":{"name":"JsonSchemaError","code":"UNSUPPORTED_SCHEMA","message":"tool \"x\": parameters: unsupported JSON schema: parameters.a.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"},"timeout":{"name":"Error","isError":true,"message":"defineTool(x): timeoutMs must be a positive finite number"}}`)
	})
}

func TestAPIRegisterRaw(t *testing.T) {
	e := load(t, map[string]string{"raw.js": `
const { tools } = require("dsh");
const dispose = tools.register({
  name: "raw", description: "a raw definition",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  output: { schema: { type: "object", properties: { got: {} } }, render: (args, value) => [{ type: "text", text: JSON.stringify(value.got) }] },
  async execute(args) { return args.bad !== undefined ? args.bad : { got: args }; },
});
globalThis.disposeRaw = dispose;
tools.register({
  name: "raw_dispose", description: "", parameters: { type: "object" },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { const r1 = typeof disposeRaw; disposeRaw(); disposeRaw(); return r1 + ":" + String(tools.get("raw")); },
});
`})
	apiNoDiags(t, e)
	t.Run("arguments are not validated", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "raw", args(t, `{"path":5}`)), `{"isError":false,"value":{"got":{"path":5}},"content":[{"type":"text","text":"{\"path\":5}"}]}`)
		hosttest.Want(t, e.call(t, "raw", args(t, `{}`)), `{"isError":false,"value":{"got":{}},"content":[{"type":"text","text":"{}"}]}`)
	})
	t.Run("the output schema is enforced", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "raw", args(t, `{"bad":5}`)),
			hosttest.Failure(`tool "raw" returned invalid output: "value" must be an object`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	})
	t.Run("the raw parameters are projected as given", func(t *testing.T) {
		list, _ := e.svc.Global().Schemas()
		hosttest.Want(t, apiMarshal(t, list[0].JSON()), `{"name":"raw","description":"a raw definition","parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`)
	})
	t.Run("the disposer removes the tool and is idempotent", func(t *testing.T) {
		hosttest.Want(t, e.apiValue(t, "raw_dispose", nil), `"function:undefined"`)
		hosttest.Want(t, e.call(t, "raw", nil), hosttest.Failure(`unknown tool "raw"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	})
}

func TestAPIRegisterWhen(t *testing.T) {
	e := load(t, map[string]string{"when.js": `
const { defineTool, tools } = require("dsh");
globalThis.active = true;
globalThis.asked = [];
const def = (name) => defineTool({ name, description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] }, async execute() { return name; } });
tools.register(def("cond"), { when: (ctx) => { asked.push(ctx.modelSelection === undefined ? "undefined" : ctx.modelSelection); return active; } });
tools.register(def("async_cond"), { when: async () => { await null; return active; } });
tools.register(def("switch"));
tools.register({ name: "toggle", description: "", parameters: { type: "object" },
  output: { schema: {}, render: () => [] },
  async execute(args) { active = args.on; const a = asked; globalThis.asked = []; return a; } });
`})
	apiNoDiags(t, e)
	ctx := context.Background()
	t.Run("without a tool set a conditional tool is unavailable", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "cond", nil), hosttest.Failure(`unknown tool "cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.call(t, "async_cond", nil), hosttest.Failure(`unknown tool "async_cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.call(t, "switch", nil), `{"isError":false,"value":"switch","content":[{"type":"text","text":"switch"}]}`)
	})
	t.Run("with a set resolved while the condition holds it runs", func(t *testing.T) {
		set, err := e.svc.Global().Resolve(ctx, "model-a")
		if err != nil {
			t.Fatal(err)
		}
		hosttest.Want(t, e.apiRun(t, ctx, engine.Input{Name: "cond", ToolSet: set}), `{"isError":false,"value":"cond","content":[{"type":"text","text":"cond"}]}`)
		hosttest.Want(t, e.apiRun(t, ctx, engine.Input{Name: "async_cond", ToolSet: set}), `{"isError":false,"value":"async_cond","content":[{"type":"text","text":"async_cond"}]}`)
		var names []string
		for _, d := range e.svc.Global().Definitions(set) {
			names = append(names, d.Name)
		}
		hosttest.Want(t, strings.Join(names, ","), "cond,async_cond,switch,toggle")
		hosttest.Want(t, e.apiValue(t, "toggle", args(t, `{"on":false}`)), `["model-a"]`)
	})
	t.Run("with a set resolved while it does not hold it is unknown", func(t *testing.T) {
		set, err := e.svc.Global().Resolve(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		hosttest.Want(t, e.apiRun(t, ctx, engine.Input{Name: "cond", ToolSet: set}), hosttest.Failure(`unknown tool "cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.apiRun(t, ctx, engine.Input{Name: "async_cond", ToolSet: set}), hosttest.Failure(`unknown tool "async_cond"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.apiRun(t, ctx, engine.Input{Name: "switch", ToolSet: set}), `{"isError":false,"value":"switch","content":[{"type":"text","text":"switch"}]}`)
	})
}

func TestAPIGuard(t *testing.T) {
	e := load(t, map[string]string{"g.js": apiEcho + `
globalThis.guarded = [];
tools.guard((exec) => { guarded.push(exec.name + ":" + Object.isFrozen(exec.arguments)); return undefined; });
tools.guard((exec) => exec.arguments.text === "secret" ? "secrets stay home" : undefined);
tools.register({ name: "guarded", description: "", parameters: { type: "object" },
  output: { schema: {}, render: () => [] },
  async execute() { const g = guarded; globalThis.guarded = []; return g; } });
`})
	apiNoDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"hi"}`)), `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"secret"}`)), hosttest.Failure("secrets stay home", ""))
	hosttest.Want(t, e.call(t, "ghost", nil), hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	hosttest.Want(t, e.apiValue(t, "guarded", nil), `["echo:true","echo:true","ghost:true","guarded:true"]`)
}

func TestAPIScopes(t *testing.T) {
	e := load(t, map[string]string{"scopes.js": `
const { defineTool, tools } = require("dsh");
const def = (name, desc) => defineTool({ name, description: desc || "", parameters: { q: { type: "string" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] }, async execute(args, exec) { return name + " for " + (exec.agent ? exec.agent.id : "nobody"); } });
tools.register(def("secret", "a secret tool"));
tools.register(def("open"));
const worker = tools.scope("worker");
worker.restrict({ deny: ["secret"] });
worker.register(def("mine", "the worker's own"));
worker.register(def("open", "the worker's open"));
tools.register({ name: "views", description: "", parameters: { type: "object" },
  output: { schema: {}, render: () => [] },
  async execute() {
    const g = tools.get("secret");
    g.name = "forged"; // sloppy mode: ignored on a frozen object
    return {
      global: { secret: g, frozen: Object.isFrozen(g), paramsFrozen: Object.isFrozen(g.parameters), keys: Object.keys(g), afterAssign: g.name,
        mine: tools.get("mine") === undefined ? "undefined" : "defined", schemas: tools.schemas().map((s) => s.name) },
      worker: { secret: worker.get("secret") === undefined ? "undefined" : "defined", mine: worker.get("mine"),
        open: worker.get("open").description, schemas: worker.schemas().map((s) => s.name) },
      other: { schemas: tools.scope("other").schemas().map((s) => s.name) },
      missing: tools.get("nope") === undefined ? "undefined" : "defined",
    };
  } });
`})
	apiNoDiags(t, e)
	worker, other := e.agents.Agent("worker"), e.agents.Agent("other")
	unknown := func(name string) string {
		return hosttest.Failure(`unknown tool "`+name+`"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL"))
	}
	ok := func(v string) string {
		return `{"isError":false,"value":"` + v + `","content":[{"type":"text","text":"` + v + `"}]}`
	}
	t.Run("a restricted tool is unknown for that agent only", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "secret", nil), unknown("secret"))
		hosttest.Want(t, e.callAs(t, nil, "secret", nil), ok("secret for nobody"))
		hosttest.Want(t, e.callAs(t, other, "secret", nil), ok("secret for other"))
	})
	t.Run("a scoped tool is visible only to its agent", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "mine", nil), ok("mine for worker"))
		hosttest.Want(t, e.callAs(t, nil, "mine", nil), unknown("mine"))
		hosttest.Want(t, e.callAs(t, other, "mine", nil), unknown("mine"))
	})
	t.Run("a scoped tool shadows the global one for its agent", func(t *testing.T) {
		hosttest.Want(t, e.callAs(t, worker, "open", nil), ok("open for worker"))
		hosttest.Want(t, e.callAs(t, other, "open", nil), ok("open for other"))
		hosttest.Want(t, e.callAs(t, worker, "open", args(t, `{"q":1}`)), hosttest.Failure(`invalid arguments: "q" must be a string`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
	})
	t.Run("get and schemas are read-only views of each scope", func(t *testing.T) {
		hosttest.Want(t, e.apiValue(t, "views", nil), `{"global":{"secret":{"name":"secret","description":"a secret tool","parameters":{"type":"object","properties":{"q":{"type":"string"}}}},"frozen":true,"paramsFrozen":true,"keys":["name","description","parameters"],"afterAssign":"secret","mine":"undefined","schemas":["secret","open","views"]},"worker":{"secret":"undefined","mine":{"name":"mine","description":"the worker's own","parameters":{"type":"object","properties":{"q":{"type":"string"}}}},"open":"the worker's open","schemas":["open","views","mine"]},"other":{"schemas":["secret","open","views"]},"missing":"undefined"}`)
	})
	t.Run("the Go view agrees", func(t *testing.T) {
		list, _ := e.svc.Scope(worker).Schemas()
		var names []string
		for _, s := range list {
			names = append(names, s.Name)
		}
		hosttest.Want(t, strings.Join(names, ","), "open,views,mine")
	})
}

// apiExecPlugin registers probe (reports the execution it sees), composite
// (calls probe twice and ghost once through tools.call) and tokens (compares
// the parent tokens probe saw).
const apiExecPlugin = `
const { defineTool, tools } = require("dsh");
const parents = [];
tools.register(defineTool({
  name: "probe", description: "", parameters: { deep: { type: "object", additionalProperties: true } },
  output: { schema: { type: "json" }, render: (a, v) => [{ type: "text", text: "probed " + v.callId }] },
  async execute(args, exec) {
    "use strict";
    const attempt = (f) => { try { f(); return "no throw"; } catch (e) { return e.name; } };
    parents.push(exec.parent);
    return {
      callId: exec.callId, rootCallId: exec.rootCallId, name: exec.name, arguments: exec.arguments,
      agent: exec.agent === undefined ? "undefined" : exec.agent,
      parent: exec.parent === undefined ? "undefined" : typeof exec.parent,
      frozen: [Object.isFrozen(exec.arguments), exec.arguments.deep === undefined || Object.isFrozen(exec.arguments.deep)],
      sameAsArgs: exec.arguments === args,
      assignArgument: attempt(() => { exec.arguments.x = 1; }),
      assignNested: attempt(() => { if (exec.arguments.deep) exec.arguments.deep.y = 1; else throw new TypeError("none"); }),
      assignCallId: attempt(() => { exec.callId = "forged"; }),
      assignSignal: attempt(() => { exec.signal = null; }),
      addKey: attempt(() => { exec.extra = 1; }),
      signal: [typeof exec.signal.aborted, exec.signal.aborted, typeof exec.signal.throwIfAborted],
      bodyOnly: [typeof exec.deferContext, typeof exec.concludeTurn],
    };
  },
}));
tools.register(defineTool({
  name: "composite", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [{ type: "text", text: "composed" }] },
  async execute(args, exec) {
    const first = await tools.call("probe", { deep: { a: 1 } }, exec);
    const second = await tools.call("probe", {}, exec);
    const ghost = await tools.call("ghost", {}, exec);
    let outside = "no throw";
    try { tools.call("probe", {}, { callId: "forged" }); } catch (e) { outside = e.message; }
    return { first, second, ghost, outside, own: exec.parent === undefined };
  },
}));
tools.register(defineTool({
  name: "tokens", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [] },
  async execute() {
    const p = parents.splice(0);
    return { n: p.length, firstTwoSame: p[0] === p[1], frozen: Object.isFrozen(p[0]), keys: Object.keys(p[0] || {}).length,
      nextCallDiffers: p[2] !== p[0], nextTwoSame: p[2] === p[3] };
  },
}));
`

func TestAPIExecution(t *testing.T) {
	e := load(t, map[string]string{"exec.js": apiExecPlugin})
	apiNoDiags(t, e)
	e.agents.SetParent("child", "boss")
	child := e.agents.Agent("child")
	ctx := context.Background()
	t.Run("a top-level call's execution object", func(t *testing.T) {
		got := e.apiRun(t, ctx, engine.Input{CallID: "call-9", RootCallID: "root-1", Name: "probe", Agent: child, Arguments: args(t, `{"deep":{"k":[1]}}`)})
		hosttest.Want(t, got, `{"isError":false,"value":{"callId":"call-9","rootCallId":"root-1","name":"probe","arguments":{"deep":{"k":[1]}},"agent":{"id":"child","parent":{"id":"boss"}},"parent":"undefined","frozen":[true,true],"sameAsArgs":true,"assignArgument":"TypeError","assignNested":"TypeError","assignCallId":"TypeError","assignSignal":"TypeError","addKey":"TypeError","signal":["boolean",false,"function"],"bodyOnly":["function","function"]},"content":[{"type":"text","text":"probed call-9"}]}`)
	})
	t.Run("rootCallId defaults to callId and agent is undefined without one", func(t *testing.T) {
		got := e.apiRun(t, ctx, engine.Input{CallID: "solo", Name: "probe"})
		hosttest.Want(t, got, `{"isError":false,"value":{"callId":"solo","rootCallId":"solo","name":"probe","arguments":{},"agent":"undefined","parent":"undefined","frozen":[true,true],"sameAsArgs":true,"assignArgument":"TypeError","assignNested":"TypeError","assignCallId":"TypeError","assignSignal":"TypeError","addKey":"TypeError","signal":["boolean",false,"function"],"bodyOnly":["function","function"]},"content":[{"type":"text","text":"probed solo"}]}`)
		e.apiValue(t, "tokens", nil) // forget these parents
	})
	t.Run("tools.call makes nested calls with the parent's ids, agent and token", func(t *testing.T) {
		got := e.apiRun(t, ctx, engine.Input{CallID: "outer", RootCallID: "root-7", Name: "composite", Agent: child})
		nested := func(id, a string) string {
			return `{"isError":false,"value":{"callId":"` + id + `","rootCallId":"root-7","name":"probe","arguments":` + a + `,"agent":{"id":"child","parent":{"id":"boss"}},"parent":"object","frozen":[true,true],"sameAsArgs":true,"assignArgument":"TypeError","assignNested":"TypeError","assignCallId":"TypeError","assignSignal":"TypeError","addKey":"TypeError","signal":["boolean",false,"function"],"bodyOnly":["function","function"]},"content":[{"type":"text","text":"probed ` + id + `"}]}`
		}
		want := `{"isError":false,"value":{"first":` + nested("outer:call:1", `{"deep":{"a":1}}`) +
			`,"second":` + nested("outer:call:2", `{}`) +
			`,"ghost":` + hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")) +
			`,"outside":"tools.call(name, args, parentExec) needs the execution of the call it is made from","own":true},"content":[{"type":"text","text":"composed"}]}`
		hosttest.Want(t, got, want)
	})
	t.Run("exec.parent is the same frozen object for the same parent", func(t *testing.T) {
		e.apiValue(t, "tokens", nil)
		e.apiRun(t, ctx, engine.Input{CallID: "a", Name: "composite"})
		e.apiRun(t, ctx, engine.Input{CallID: "b", Name: "composite"})
		hosttest.Want(t, e.apiValue(t, "tokens", nil), `{"n":4,"firstTwoSame":true,"frozen":true,"keys":0,"nextCallDiffers":true,"nextTwoSame":true}`)
	})
}

func TestAPIPreExecute(t *testing.T) {
	e := load(t, map[string]string{"pre.js": apiEcho + `
const { on } = require("dsh");
globalThis.nexts = [];
on("tools/pre-execute", async (exec, next) => {
  switch (exec.arguments.text) {
    case "allow": return { kind: "allow" };
    case "deny": return { kind: "deny", reason: "no echo today", info: { name: "PolicyDenied", code: "DENIED" } };
    case "deny-plain": return { kind: "deny", reason: "plainly not" };
    case "ask": return { kind: "ask" };
    case "ask-reason": return { kind: "ask", reason: "needs approval", displayReason: "shown" };
    case "cancel": return { kind: "cancel" };
    case "no-reason": return { kind: "deny" };
    case "extra-key": return { kind: "allow", reason: "x" };
    case "not-object": return "allow";
    case "throw": throw new Error("permission hook broke");
    case "coded": { const e = new Error("coded veto"); e.name = "HarnessError"; e.code = "DENIED"; throw e; }
  }
  const d = await next();
  nexts.push(d);
  return d;
});
tools.register({ name: "nexts", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return nexts.splice(0); } });
`})
	apiNoDiags(t, e)
	abd := hosttest.Failure("tool call aborted before dispatch", hosttest.Info("AbortError", "ABORTED_BEFORE_DISPATCH"))
	cases := []struct{ text, want string }{
		{"allow", `{"isError":false,"value":"allow","content":[{"type":"text","text":"allow"}]}`},
		{"pass", `{"isError":false,"value":"pass","content":[{"type":"text","text":"pass"}]}`},
		{"deny", hosttest.Failure("no echo today", hosttest.Info("PolicyDenied", "DENIED"))},
		{"deny-plain", hosttest.Failure("plainly not", "")},
		{"ask", hosttest.Failure(`tool "echo" requires approval (not yet supported)`, "")},
		{"ask-reason", hosttest.Failure("needs approval", "")},
		{"cancel", abd},
		{"no-reason", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: "deny" needs a reason string`, "")},
		{"extra-key", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: "allow" does not take "reason"`, "")},
		{"not-object", hosttest.Failure(`tools/pre-execute listener returned an invalid decision: a decision must be an object`, "")},
		{"throw", hosttest.Failure("permission hook broke", "")},
		{"coded", hosttest.Failure("coded veto", hosttest.Info("HarnessError", "DENIED"))},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			hosttest.Want(t, e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: c.text})), c.want)
		})
	}
	t.Run("next() resolves to the default decision", func(t *testing.T) {
		// the "pass" call's, then the nexts call's own
		hosttest.Want(t, e.apiValue(t, "nexts", nil), `[{"kind":"allow"},{"kind":"allow"}]`)
	})
}

func TestAPIExecuteWrapper(t *testing.T) {
	e := load(t, map[string]string{"wrap.js": apiEcho + `
const { on } = require("dsh");
globalThis.notes = {};
tools.register(defineTool({
  name: "waiter", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    notes.bodySignal = exec.signal;
    if (!exec.signal.aborted) await new Promise((resolve) => { exec.signal.addEventListener("abort", resolve); setTimeout(resolve, 2000); });
    notes.body = { aborted: exec.signal.aborted, reason: exec.signal.reason && exec.signal.reason.name };
    return "waited";
  },
}));
tools.register(defineTool({
  name: "thrower", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { const e = new Error("kaboom"); e.name = "HarnessError"; e.code = "BOOM"; throw e; },
}));
on("tools/execute", async (exec, next) => {
  if (exec.name === "waiter") {
    const c = new AbortController();
    const saved = exec.signal;
    exec.signal = c.signal;
    const p = next();
    exec.signal = saved;
    setTimeout(() => c.abort(new Error("wrapper says stop")), 20);
    const r = await p;
    notes.wrapper = { restored: exec.signal === saved, fused: notes.bodySignal !== c.signal && notes.bodySignal !== saved, mine: c.signal.aborted };
    return r;
  }
  if (exec.name === "thrower") { notes.thrown = await next(); return notes.thrown; }
  switch (exec.arguments.text) {
    case "pre-aborted": { exec.signal = AbortSignal.abort(); return next(); }
    case "short": return { isError: false, value: "from wrapper", content: [{ type: "text", text: "ignored" }], meta: { ignored: true } };
    case "short-bad": return { isError: false, value: 42, content: [] };
    case "failure": return { isError: true, error: { message: "wrapped failure", info: { name: "HarnessError", code: "WRAPPER_FAILURE" } },
      content: [{ type: "text", text: "custom" }], meta: { m: 1 } };
    case "throw": throw new Error("wrapper broke");
    case "not-result": return 5;
    case "unchanged": { const r = await next(); notes.unchanged = { frozen: Object.isFrozen(r), keys: Object.keys(r) }; return r; }
  }
  return next();
});
tools.register({ name: "notes", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { const n = { ...notes }; delete n.bodySignal; globalThis.notes = {}; return n; } });
`})
	apiNoDiags(t, e)
	echo := func(text string) string {
		return e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	t.Run("a replaced signal that the wrapper aborts aborts the body's signal", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "waiter", nil), hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
		hosttest.Want(t, e.apiValue(t, "notes", nil), `{"body":{"aborted":true,"reason":"AbortError"},"wrapper":{"restored":true,"fused":true,"mine":true}}`)
	})
	t.Run("an already-aborted replacement signal stops the call before dispatch", func(t *testing.T) {
		hosttest.Want(t, echo("pre-aborted"), hosttest.Failure("tool call aborted before dispatch", hosttest.Info("AbortError", "ABORTED_BEFORE_DISPATCH")))
	})
	t.Run("returning next()'s result unchanged", func(t *testing.T) {
		hosttest.Want(t, echo("unchanged"), `{"isError":false,"value":"unchanged","content":[{"type":"text","text":"unchanged"}]}`)
		hosttest.Want(t, e.apiValue(t, "notes", nil), `{"unchanged":{"frozen":true,"keys":["isError","value","content"]}}`)
	})
	t.Run("a short-circuit success is re-rendered from its value", func(t *testing.T) {
		hosttest.Want(t, echo("short"), `{"isError":false,"value":"from wrapper","content":[{"type":"text","text":"from wrapper"}]}`)
		hosttest.Want(t, echo("short-bad"), hosttest.Failure(`tool "echo" returned invalid output: "value" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	})
	t.Run("a wrapper failure is kept with its content and meta", func(t *testing.T) {
		hosttest.Want(t, echo("failure"), `{"isError":true,"error":{"message":"wrapped failure","info":{"name":"HarnessError","code":"WRAPPER_FAILURE"}},"content":[{"type":"text","text":"custom"}],"meta":{"m":1}}`)
	})
	t.Run("a throwing wrapper", func(t *testing.T) {
		hosttest.Want(t, echo("throw"), hosttest.Failure("wrapper broke", ""))
		hosttest.Want(t, echo("not-result"), hosttest.Failure("tools/execute wrapper returned 5, not a result object", ""))
	})
	t.Run("next() resolves to a thrown body as a normalized error", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "thrower", nil), hosttest.Failure("kaboom", hosttest.Info("HarnessError", "BOOM")))
		hosttest.Want(t, e.apiValue(t, "notes", nil), `{"thrown":`+hosttest.Failure("kaboom", hosttest.Info("HarnessError", "BOOM"))+`}`)
	})
}

func TestAPIPostExecute(t *testing.T) {
	e := load(t, map[string]string{"post.js": apiEcho + `
const { on } = require("dsh");
globalThis.seen = [];
const ctx = (text) => ({ id: "ctx-" + text, role: "user", content: [{ type: "text", text }], source: { kind: "plugin", plugin: "post.js" } });
on("tools/post-execute", async (exec, result, next) => {
  if (exec.name === "seen") return next();
  seen.push({ isError: result.isError, frozen: Object.isFrozen(result), value: result.value === undefined ? null : result.value });
  switch (exec.arguments.text) {
    case "content": return { kind: "accept", content: [{ type: "text", text: "replaced" }] };
    case "value": return { kind: "accept", value: "new value", additionalContexts: [ctx("after")] };
    case "bad-value": return { kind: "accept", value: 7 };
    case "both": return { kind: "accept", value: "v", content: [] };
    case "block": return { kind: "block", feedback: [{ type: "text", text: "blocked by policy" }, { type: "reasoning", text: "why" }] };
    case "block-empty": return { kind: "block", feedback: [] };
    case "block-ctx": return { kind: "block", feedback: [{ type: "text", text: "no" }], additionalContexts: [ctx("blocked")] };
    case "unknown": return { kind: "acept" };
    case "throw": throw new Error("post hook broke");
  }
  return next();
});
tools.register({ name: "seen", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return seen.splice(0); } });
`})
	apiNoDiags(t, e)
	echo := func(text string) string {
		return apiIDs(e.call(t, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text})))
	}
	cases := []struct{ text, want string }{
		{"plain", `{"isError":false,"value":"plain","content":[{"type":"text","text":"plain"}]}`},
		{"content", `{"isError":false,"value":"content","content":[{"type":"text","text":"replaced"}]}`},
		{"value", `{"isError":false,"value":"new value","content":[{"type":"text","text":"new value"}],"additionalContexts":[{"id":"ctx-after","role":"user","content":[{"type":"text","text":"after"}],"source":{"kind":"plugin","plugin":"post.js"}}]}`},
		{"bad-value", hosttest.Failure(`tool "echo" returned invalid output: "value" must be a string`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))},
		{"both", hosttest.Failure("tools/post-execute accept decision cannot replace both value and content", "")},
		{"block", `{"isError":true,"error":{"message":"blocked by policy\n[reasoning content]"},"content":[{"type":"text","text":"blocked by policy"},{"type":"reasoning","text":"why"}]}`},
		{"block-empty", `{"isError":true,"error":{"message":"tool result blocked by post-execute policy"},"content":[]}`},
		{"block-ctx", `{"isError":true,"error":{"message":"no"},"content":[{"type":"text","text":"no"}],"additionalContexts":[{"id":"ctx-blocked","role":"user","content":[{"type":"text","text":"blocked"}],"source":{"kind":"plugin","plugin":"post.js"}}]}`},
		{"unknown", hosttest.Failure(`tools/post-execute listener returned an invalid decision: unknown kind "acept"`, "")},
		{"throw", hosttest.Failure("post hook broke", "")},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) { hosttest.Want(t, echo(c.text), c.want) })
	}
	t.Run("post-execute saw each frozen result", func(t *testing.T) {
		one := func(v string) string { return `{"isError":false,"frozen":true,"value":"` + v + `"}` }
		var want []string
		for _, c := range cases {
			want = append(want, one(c.text))
		}
		hosttest.Want(t, e.apiValue(t, "seen", nil), "["+strings.Join(want, ",")+"]")
		hosttest.Want(t, e.call(t, "ghost", nil), hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
		hosttest.Want(t, e.apiValue(t, "seen", nil), `[{"isError":true,"frozen":true,"value":null}]`)
	})
}

func TestAPIObservers(t *testing.T) {
	e := load(t, map[string]string{"obs.js": apiEcho + `
const { on } = require("dsh");
const results = [], changes = [];
on("tools/change", (c) => { changes.push(c); });
on("tools/result", (exec, r) => {
  results.push(exec.callId + " " + exec.name + " " + r.isError + " " + r.content.map((b) => b.text).join("|") + " frozen=" + Object.isFrozen(exec) + "," + Object.isFrozen(r));
});
on("tools/result", () => { throw new Error("observer broke"); });
tools.register({ name: "results", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return results.splice(0); } });
tools.register({ name: "changes", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return changes.splice(0); } });
`})
	apiNoDiags(t, e)
	ctx := context.Background()
	t.Run("tools/result sees every call once, whatever its outcome", func(t *testing.T) {
		e.apiValue(t, "results", nil)
		e.apiRun(t, ctx, engine.Input{CallID: "r1", Name: "echo", Arguments: args(t, `{"text":"hi"}`)})
		e.apiRun(t, ctx, engine.Input{CallID: "r2", Name: "echo", Arguments: args(t, `{}`)})
		e.apiRun(t, ctx, engine.Input{CallID: "r3", Name: "ghost"})
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		e.apiRun(t, cancelled, engine.Input{CallID: "r4", Name: "echo", Arguments: args(t, `{"text":"x"}`)})
		e.apiRun(t, ctx, engine.Input{CallID: "r5", Name: "echo", Arguments: dsl.NewObject(dsl.Member{Key: "f", Value: func() {}})})
		hosttest.Want(t, e.apiValue(t, "results", nil), `["v1 results false  frozen=true,true","r1 echo false hi frozen=true,true","r2 echo true Error: invalid arguments: missing required property \"text\" frozen=true,true","r3 ghost true Error: unknown tool \"ghost\" frozen=true,true","r4 echo true Error: tool call aborted before dispatch frozen=true,true","r5 echo true Error: tool execution arguments must be losslessly JSON-serializable frozen=true,true"]`)
	})
	t.Run("tools/change sees tools registered and disposed later from Go", func(t *testing.T) {
		e.apiValue(t, "changes", nil)
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
		hosttest.Want(t, e.apiValue(t, "changes", nil), `[{"kind":"register","name":"shell"},{"kind":"dispose","name":"shell"},{"kind":"register","agent":"worker","name":"shell"},{"kind":"restrict","agent":"worker"},{"kind":"lift","agent":"worker"},{"kind":"dispose","agent":"worker","name":"shell"}]`)
	})
}

func TestAPIListenerOrder(t *testing.T) {
	e := load(t, map[string]string{"order.js": apiEcho + `
const { on } = require("dsh");
const order = [];
for (const [name, opts] of [["a"], ["b"], ["c", { prepend: true }], ["d", { prepend: true }], ["e", { prepend: false }]]) {
  on("tools/pre-execute", async (exec, next) => { if (exec.name !== "echo") return next(); order.push("pre:" + name); const d = await next(); order.push("pre:" + name + ":after"); return d; }, opts);
  on("tools/execute", async (exec, next) => { if (exec.name !== "echo") return next(); order.push("execute:" + name); const r = await next(); order.push("execute:" + name + ":after"); return r; }, opts);
  on("tools/post-execute", async (exec, r, next) => { if (exec.name !== "echo") return next(); order.push("post:" + name); const d = await next(); order.push("post:" + name + ":after"); return d; }, opts);
}
tools.guard((exec) => { if (exec.name === "echo") order.push("guard"); });
tools.register({ name: "order", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return order.splice(0); } });
`})
	apiNoDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"hi"}`)), `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
	var want []string
	for _, stage := range []string{"pre", "execute", "post"} {
		names := []string{"d", "c", "a", "b", "e"}
		for _, n := range names {
			want = append(want, `"`+stage+":"+n+`"`)
		}
		for k := len(names) - 1; k >= 0; k-- {
			want = append(want, `"`+stage+":"+names[k]+`:after"`)
		}
		if stage == "pre" {
			want = append(want, `"guard"`)
		}
	}
	hosttest.Want(t, e.apiValue(t, "order", nil), "["+strings.Join(want, ",")+"]")
}

func TestAPIDispatchLog(t *testing.T) {
	e := load(t, map[string]string{"dlog.js": `
const { on } = require("dsh");
on("tools/ptc-dispatch-log", async (entry, next) => {
  const content = await next();
  return [...content, { type: "text", text: ["outer", entry.subCallId, entry.name, entry.isError, entry.exec === undefined, JSON.stringify(entry.agent)].join(" ") }];
});
on("tools/ptc-dispatch-log", async (entry, next) => [{ type: "text", text: "first" }, ...(await next())], { prepend: true });
`})
	apiNoDiags(t, e)
	got := e.svc.DispatchLogContent(context.Background(), &engine.DispatchLogEntry{Agent: e.agents.Agent("worker"), SubCallID: "c1:ptc:1", Name: "echo", Content: []engine.Block{engine.Text("hi")}})
	hosttest.Want(t, apiMarshal(t, engine.ContentJSON(got)), `[{"type":"text","text":"first"},{"type":"text","text":"hi"},{"type":"text","text":"outer c1:ptc:1 echo false true {\"id\":\"worker\"}"}]`)
}

func TestAPIDeferContextAndConcludeTurn(t *testing.T) {
	e := load(t, map[string]string{"sub/ctx.ts": `
import { defineTool, tools } from "dsh";
tools.register(defineTool({
  name: "ctx", description: "", parameters: { mode: { type: "string" } },
  output: { schema: { type: "string" }, render: (a: any, v: string) => [{ type: "text", text: v }] },
  async execute(args: any, exec: any) {
    exec.deferContext({ content: [{ type: "text", text: "remember this" }] });
    if (args.mode === "full") exec.deferContext({ id: "m-2", role: "user", content: [{ type: "text", text: "second" }], source: { kind: "user" } });
    if (args.mode === "conclude" || args.mode === "conclude-throw") exec.concludeTurn();
    if (args.mode === "throw" || args.mode === "conclude-throw") throw new Error("after deferring");
    if (args.mode === "bad") exec.deferContext({ content: "not blocks" });
    return "done";
  },
}));
`})
	apiNoDiags(t, e)
	first := `{"id":"<id>","role":"user","content":[{"type":"text","text":"remember this"}],"source":{"kind":"plugin","plugin":"sub/ctx.ts"}}`
	call := func(mode string) string {
		return apiIDs(e.call(t, "ctx", dsl.NewObject(dsl.Member{Key: "mode", Value: mode})))
	}
	hosttest.Want(t, call("one"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`]}`)
	hosttest.Want(t, call("full"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`,{"id":"m-2","role":"user","content":[{"type":"text","text":"second"}],"source":{"kind":"user"}}]}`)
	hosttest.Want(t, call("conclude"), `{"isError":false,"value":"done","content":[{"type":"text","text":"done"}],"additionalContexts":[`+first+`],"concludesTurn":true}`)
	t.Run("contexts survive a throwing body, conclusion does not", func(t *testing.T) {
		want := `{"isError":true,"error":{"message":"after deferring"},"content":[{"type":"text","text":"Error: after deferring"}],"additionalContexts":[` + first + `]}`
		hosttest.Want(t, call("throw"), want)
		hosttest.Want(t, call("conclude-throw"), want)
	})
	t.Run("a bad message throws in the body", func(t *testing.T) {
		got := call("bad")
		if !strings.HasPrefix(got, `{"isError":true,"error":{"message":"`) || !strings.Contains(got, `"additionalContexts":[`+first+`]`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("the message ids are fresh UUIDs", func(t *testing.T) {
		a, b := e.call(t, "ctx", nil), e.call(t, "ctx", nil)
		if !apiUUID.MatchString(a) || a == b {
			t.Errorf("ids: %s / %s", a, b)
		}
	})
}

func TestAPIAbortSignalAndTimers(t *testing.T) {
	e := load(t, map[string]string{"sig.js": `
const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "signals", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [{ type: "text", text: "ok" }] },
  async execute(args, exec) {
    const out = {};
    const c = new AbortController();
    const log = [];
    c.signal.onabort = (ev) => log.push("onabort:" + ev.type);
    c.signal.addEventListener("abort", (ev) => log.push("listener:" + (ev.target === c.signal)));
    const removed = () => log.push("removed");
    c.signal.addEventListener("abort", removed);
    c.signal.removeEventListener("abort", removed);
    out.before = [c.signal.aborted, c.signal.reason === undefined];
    c.signal.throwIfAborted();
    c.abort("why");
    c.abort("again");
    out.after = [c.signal.aborted, c.signal.reason, log];
    try { c.signal.throwIfAborted(); out.threw = "no"; } catch (e) { out.threw = e; }
    const d = new AbortController(); d.abort();
    out.defaultReason = [d.signal.reason instanceof Error, d.signal.reason.name, d.signal.reason.message];
    const s = AbortSignal.abort();
    out.staticAbort = [s.aborted, s.reason.name];
    const ts = AbortSignal.timeout(10);
    out.timeoutBefore = ts.aborted;
    await new Promise((r) => ts.addEventListener("abort", r));
    out.timeoutAfter = [ts.aborted, ts.reason.name, ts.reason.message];
    try { new AbortSignal(); out.ctor = "constructed"; } catch (e) { out.ctor = e.name; }
    out.execSignal = [exec.signal instanceof AbortSignal, exec.signal.aborted, exec.signal.reason === undefined];
    return out;
  },
}));
tools.register(defineTool({
  name: "timers", description: "", parameters: {},
  output: { schema: { type: "array", items: { type: "string" } }, render: () => [{ type: "text", text: "ok" }] },
  async execute() {
    const order = [];
    const cleared = setTimeout(() => order.push("cleared"), 5);
    setTimeout((x) => order.push("b" + x), 20, "!");
    setTimeout(() => order.push("a"), 5);
    clearTimeout(cleared);
    clearTimeout(9999);
    await new Promise((r) => setTimeout(r, 40));
    order.push("after await");
    await null;
    order.push("microtask");
    return order;
  },
}));
`})
	apiNoDiags(t, e)
	hosttest.Want(t, e.apiValue(t, "signals", nil), `{"before":[false,true],"after":[true,"why",["onabort:abort","listener:true"]],"threw":"why","defaultReason":[true,"AbortError","This operation was aborted"],"staticAbort":[true,"AbortError"],"timeoutBefore":false,"timeoutAfter":[true,"TimeoutError","The operation timed out."],"ctor":"TypeError","execSignal":[true,false,true]}`)
	hosttest.Want(t, e.apiValue(t, "timers", nil), `["a","b!","after await","microtask"]`)
}

// apiLogs is an io.Writer for a slog JSON handler, safe for concurrent use.
type apiLogs struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *apiLogs) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *apiLogs) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// logger returns a JSON logger at debug level without timestamps.
func (w *apiLogs) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}

func TestAPILogging(t *testing.T) {
	logs := &apiLogs{}
	e := load(t, map[string]string{"logs.js": `
const { defineTool, tools, log } = require("dsh");
log.info("loading", { n: 1 });
tools.register(defineTool({
  name: "talk", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() {
    console.log("hello", 42, { a: 1 }, undefined);
    console.error("console error");
    console.warn("console warn");
    console.debug("console debug");
    console.info("console info");
    log.debug("dbg");
    log.warn("careful", { k: "v", nested: { x: [1] } });
    log.error("bad", { code: 7 });
    return "said";
  },
}));
`}, func(h *js.Host, _ *engine.Service) { h.Logger = logs.logger() })
	apiNoDiags(t, e)
	hosttest.Want(t, e.apiValue(t, "talk", nil), `"said"`)
	want := []string{
		`{"level":"INFO","msg":"loading","plugin":"logs.js","n":1}`,
		`{"level":"INFO","msg":"hello 42 {\"a\":1} undefined","plugin":"logs.js"}`,
		`{"level":"ERROR","msg":"console error","plugin":"logs.js"}`,
		`{"level":"WARN","msg":"console warn","plugin":"logs.js"}`,
		`{"level":"DEBUG","msg":"console debug","plugin":"logs.js"}`,
		`{"level":"INFO","msg":"console info","plugin":"logs.js"}`,
		`{"level":"DEBUG","msg":"dbg","plugin":"logs.js"}`,
		`{"level":"WARN","msg":"careful","plugin":"logs.js","k":"v","nested":{"x":[1]}}`,
		`{"level":"ERROR","msg":"bad","plugin":"logs.js","code":7}`,
	}
	hosttest.Want(t, logs.String(), strings.Join(want, "\n")+"\n")
}

func TestAPIModules(t *testing.T) {
	files := map[string]string{
		"lib/util.ts": `
export function shout(s: string): string { return s.toUpperCase() + "!"; }
export const counter = { n: 0 };
export default "util default";
`,
		"lib/side.js": `require("dsh").tools.register({ name: "side_tool", description: "", parameters: { type: "object" },
  output: { schema: {}, render: () => [] }, async execute() { return 1; } });`,
		"lib/broken.js":  `throw new Error("a lib file ran as a plugin");`,
		"lib/deep/x.js":  `throw new Error("a nested lib file ran as a plugin");`,
		"_private.js":    `throw new Error("an underscore file ran as a plugin");`,
		"types.d.ts":     `declare const x: number;`,
		"helpers/fmt.js": `const util = require("../lib/util"); exports.wrap = (s) => "[" + util.shout(s) + "]";`,
		"imp.ts": `
import { defineTool, tools } from "dsh";
import * as dsh from "dsh";
import dflt, { shout, counter } from "./lib/util";
import { wrap } from "./helpers/fmt";
counter.n++;
tools.register(defineTool({
  name: "imp", description: "", parameters: { text: { type: "string", required: true } },
  output: { schema: { type: "json" }, render: () => [{ type: "text", text: "imp" }] },
  async execute(args: { text: string }) {
    return { shout: shout(args.text), wrap: wrap(args.text), dflt, counter: counter.n, same: dsh.defineTool === defineTool && dsh.tools === tools };
  },
}));
`,
		"req.js": `
const dsh = require("dsh");
const util = require("./lib/util");
const again = require("./lib/util.ts");
util.counter.n++;
dsh.tools.register(dsh.defineTool({
  name: "req", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [{ type: "text", text: "req" }] },
  async execute() { return { shout: util.shout("req"), cached: util === again, counter: again.counter.n, dflt: util.default }; },
}));
`,
		"bad/escape.js":  "const { tools } = require(\"dsh\");\n\nrequire(\"../../outside\");\n",
		"bad/escape2.ts": "import { tools } from \"dsh\";\nimport x from \"../../outside\";\nconsole.log(x);\n",
		"bad/bare.js":    "require(\"lodash\");\n",
		"bad/abs.js":     "require(\"/etc/passwd\");\n",
		"bad/missing.js": "require(\"./nope\");\n",
		"bad/host.js":    "require(\"dsh/nope\");\n",
	}
	e := load(t, files)
	t.Run("modules under lib and helpers work for import and require", func(t *testing.T) {
		hosttest.Want(t, e.apiValue(t, "imp", args(t, `{"text":"hi"}`)), `{"shout":"HI!","wrap":"[HI!]","dflt":"util default","counter":1,"same":true}`)
		hosttest.Want(t, e.apiValue(t, "req", nil), `{"shout":"REQ!","cached":true,"counter":1,"dflt":"util default"}`)
	})
	t.Run("lib files, _files and .d.ts are not plugins", func(t *testing.T) {
		if e.svc.Global().Get("side_tool") != nil {
			t.Error("lib/side.js was loaded as a plugin")
		}
		var rels []string
		for _, l := range e.loaded {
			rels = append(rels, l.Source.Rel)
		}
		// helpers/ is an ordinary folder: its files are plugins too.
		hosttest.Want(t, strings.Join(rels, ","), "helpers/fmt.js,imp.ts,req.js")
	})
	t.Run("imports that leave the scripts directory are refused with a diagnostic", func(t *testing.T) {
		want := []string{
			`bad/abs.js:1:1: cannot import "/etc/passwd" from "bad/abs.js": absolute paths cannot be imported, only relative paths inside the scripts directory`,
			`bad/bare.js:1:1: cannot resolve "lodash": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`,
			`bad/escape.js:3:1: cannot import "../../outside" from "bad/escape.js": it resolves outside the scripts directory`,
			`bad/escape2.ts:2:15: cannot import "../../outside" from "bad/escape2.ts": it resolves outside the scripts directory`,
			`bad/host.js:1:1: cannot import "dsh/nope": no such host module`,
			`bad/missing.js:1:1: cannot resolve "./nope" from "bad/missing.js": no such module (tried ./nope, ./nope.ts, ./nope.js, ./nope.mjs, ./nope/index.ts, ./nope/index.js, ./nope/index.mjs)`,
		}
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), strings.Join(want, "\n"))
	})
}

func TestAPIRegisterRefusals(t *testing.T) {
	e := load(t, map[string]string{"other.js": apiEcho, "reg.js": `
const { defineTool, tools } = require("dsh");
const out = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
const raw = (extra) => Object.assign({ name: "x", description: "", parameters: { type: "object" }, output: out, async execute() { return "x"; } }, extra);
const attempts = {
  noOutput: () => tools.register(raw({ output: undefined })),
  noRender: () => tools.register(raw({ output: { schema: {} } })),
  badMeta: () => tools.register(raw({ output: { schema: {}, render: () => [], presentationMeta: 5 } })),
  badSchema: () => tools.register(raw({ output: { schema: { type: "string", minLength: 1 }, render: () => [] } })),
  timeout: () => tools.register(raw({ timeoutMs: 0 })),
  reserved: () => tools.register(raw({ name: "run_code" })),
  reservedScoped: () => tools.scope("worker").register(raw({ name: "run_code" })),
  restrictGlobal: () => tools.restrict({ deny: ["echo"] }),
  restrictNoop: () => tools.scope("worker").restrict({}),
  restrictUnknown: () => tools.scope("worker").restrict({ allow: ["ghost"] }),
  badEvent: () => require("dsh").on("tools/nope", () => {}),
};
tools.register({ name: "refusals", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() {
    const r = {};
    for (const [k, f] of Object.entries(attempts)) { try { f(); r[k] = "registered"; } catch (e) { r[k] = e.message; } }
    try { tools.register(raw({ name: "echo" })); r.duplicate = "registered"; } catch (e) { r.duplicate = e.message; }
    const d = tools.register(raw({ name: "late" }));
    r.late = tools.get("late") !== undefined;
    globalThis.disposeLate = d;
    return r;
  } });
tools.register({ name: "unlate", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { disposeLate(); return tools.get("late") === undefined; } });
`})
	apiNoDiags(t, e)
	hosttest.Want(t, e.apiValue(t, "refusals", nil), `{"noOutput":"tool \"x\" must declare output { schema, render, presentationMeta? }","noRender":"tool \"x\" must declare output { schema, render, presentationMeta? }","badMeta":"tool \"x\" must declare output { schema, render, presentationMeta? }","badSchema":"tool \"x\": output.schema: unsupported JSON schema: schema.minLength is not a supported keyword (subset: type/oneOf/properties/required/additionalProperties/items/enum/const + annotations)","timeout":"tool \"x\" timeoutMs must be a positive finite number","reserved":"tool name \"run_code\" is reserved for the PTC transport and cannot be registered or shadowed","reservedScoped":"tool name \"run_code\" is reserved for the PTC transport and cannot be registered or shadowed","restrictGlobal":"tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead","restrictNoop":"tools.restrict({}) is a no-op: pass `+"`allow` and/or `deny`"+` (an empty filter is almost always a materialized-empty-config bug)","restrictUnknown":"tools.restrict() names unknown global tool \"ghost\"; known global tools: echo, refusals, unlate","badEvent":"on(): unknown event \"tools/nope\" (tools/pre-execute, tools/execute, tools/post-execute, tools/result, tools/change, tools/ptc-dispatch-log)","duplicate":"tool \"echo\" is already registered (for a per-agent variant, register through that agent's scope, `+"`tools.scope(id)`"+`, instead)","late":true}`)
	t.Run("a registration made by a body takes effect at once", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "late", nil), `{"isError":false,"value":"x","content":[{"type":"text","text":"x"}]}`)
		hosttest.Want(t, e.apiValue(t, "unlate", nil), `true`)
		hosttest.Want(t, e.call(t, "late", nil), hosttest.Failure(`unknown tool "late"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL")))
	})
}

func TestAPINestedCallCancellation(t *testing.T) {
	started := make(chan struct{}, 1)
	e := load(t, map[string]string{"nest.js": `
const { defineTool, tools } = require("dsh");
let child;
tools.register(defineTool({
  name: "parent", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [] },
  async execute(args, exec) { child = await tools.call("gosleep", {}, exec); return child; },
}));
tools.register({ name: "child", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return child; } });
`}, func(h *js.Host, svc *engine.Service) {
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
	apiNoDiags(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		r := e.svc.Call(ctx, engine.Input{CallID: "p", Name: "parent", Arguments: dsl.NewObject()})
		b, _ := dsl.Marshal(r.JSON())
		done <- string(b)
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
	hosttest.Want(t, e.apiValue(t, "child", nil), aborted)
}

func TestAPIScopedPolicy(t *testing.T) {
	e := load(t, map[string]string{"scoped.js": apiEcho + `
const { on } = require("dsh");
const worker = tools.scope("worker");
const heard = [];
worker.on("tools/pre-execute", (exec, next) => {
  heard.push(exec.agent.id + ":" + exec.arguments.text);
  return exec.arguments.text === "veto" ? { kind: "deny", reason: "scoped veto" } : next();
});
worker.guard((exec) => exec.arguments.text === "guarded" ? "terminal policy" : undefined);
on("tools/pre-execute", (exec, next) => exec.arguments.text === "guarded" ? { kind: "allow" } : next(), { prepend: true });
tools.register({ name: "heard", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return heard.splice(0); } });
`})
	apiNoDiags(t, e)
	e.agents.SetParent("child", "worker")
	worker, other, child := e.agents.Agent("worker"), e.agents.Agent("other"), e.agents.Agent("child")
	echo := func(agent *engine.Agent, text string) string {
		return e.callAs(t, agent, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	ok := func(v string) string {
		return `{"isError":false,"value":"` + v + `","content":[{"type":"text","text":"` + v + `"}]}`
	}
	hosttest.Want(t, echo(worker, "veto"), hosttest.Failure("scoped veto", ""))
	hosttest.Want(t, echo(child, "veto"), hosttest.Failure("scoped veto", ""))
	hosttest.Want(t, echo(other, "veto"), ok("veto"))
	hosttest.Want(t, echo(nil, "veto"), ok("veto"))
	hosttest.Want(t, echo(worker, "guarded"), hosttest.Failure("terminal policy", ""))
	hosttest.Want(t, echo(child, "guarded"), hosttest.Failure("terminal policy", ""))
	hosttest.Want(t, echo(other, "guarded"), ok("guarded"))
	hosttest.Want(t, echo(worker, "fine"), ok("fine"))
	hosttest.Want(t, e.apiValue(t, "heard", nil), `["worker:veto","child:veto","worker:fine"]`)
}

func TestAPIPresenters(t *testing.T) {
	logs := &apiLogs{}
	e := load(t, map[string]string{"p.js": `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "p", description: "", parameters: { path: { type: "string" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute(args) { return "x"; },
  presentCall: (args) => args.path ? { card: "generic", title: "Read " + args.path, kind: "read" } : undefined,
  presentResult: (args, result) => result.isError ? null : { card: "generic", title: "Done" },
}));`}, func(h *js.Host, _ *engine.Service) {
		h.Logger = logs.logger()
	})
	apiNoDiags(t, e)
	def := e.svc.Global().Get("p")
	view := func(v interface{ JSON() any }) string {
		b, err := dsl.Marshal(v.JSON())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("a view is decoded; undefined and null are no view, without a warning", func(t *testing.T) {
		if v := def.PresentCall(args(t, `{"path":"a.txt"}`)); v == nil || view(v) != `{"card":"generic","title":"Read a.txt","kind":"read"}` {
			t.Errorf("call view %v", v)
		}
		if v := def.PresentCall(args(t, `{}`)); v != nil {
			t.Errorf("undefined gave the call view %s", view(v))
		}
		if v := def.PresentResult(args(t, `{}`), engine.ResultSummary{IsError: false}); v == nil || view(v) != `{"card":"generic","title":"Done"}` {
			t.Errorf("result view %v", v)
		}
		if v := def.PresentResult(args(t, `{}`), engine.ResultSummary{IsError: true}); v != nil {
			t.Errorf("null gave the result view %s", view(v))
		}
		if strings.Contains(logs.String(), "failed") {
			t.Errorf("a presenter's no-view was logged as a failure:\n%s", logs.String())
		}
	})
}

func TestAPIListenerArgumentsStayReadable(t *testing.T) {
	e := load(t, map[string]string{"p.js": apiEcho + `
const { on } = require("dsh");
const kept = [];
on("tools/pre-execute", (exec, next) => { kept.push(exec); return next(); });
tools.register({ name: "kept", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  execute() { return kept.splice(0).map((x) => [x.callId, x.arguments, Object.isFrozen(x), Object.isFrozen(x.arguments), x.arguments === x.arguments]); } });
`})
	apiNoDiags(t, e)
	e.apiRun(t, context.Background(), engine.Input{CallID: "a1", Name: "echo", Arguments: args(t, `{"text":"hi"}`)})
	got := e.apiValue(t, "kept", nil)
	hosttest.Want(t, got, `[["a1",{"text":"hi"},true,true,true],["v1",{},true,true,true]]`)
}

func TestAPIASettledExecutionsSignalIsGone(t *testing.T) {
	e := load(t, map[string]string{"p.js": apiEcho + `
const { on } = require("dsh");
let kept;
on("tools/pre-execute", (exec, next) => { if (exec.name === "echo") kept = exec; return next(); });
tools.register({ name: "late", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  execute() { try { return String(kept.signal); } catch (e) { return e.message; } } });
`})
	apiNoDiags(t, e)
	e.apiRun(t, context.Background(), engine.Input{CallID: "a1", Name: "echo", Arguments: args(t, `{"text":"hi"}`)})
	hosttest.Want(t, e.apiValue(t, "late", nil), `"this execution object is no longer live (its call has settled)"`)
}
