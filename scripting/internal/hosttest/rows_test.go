package hosttest_test

// The table of the pipeline spec's §3.8 ("Which outcomes reach what"), reproduced
// with script-defined tools and listeners in each language: every stage
// records its name in the plugin, and the trace tool returns (and clears)
// what ran, together with the results the tools/result observer received.

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// rowsPlugin drives every stage from the call's arguments: mode picks what
// the policy stages and the body do, fin what the content finalizer
// (finalizeContent, finalize_content) does.
var rowsPlugin = hosttest.Source{
	JS: `
const { defineTool, tools, on } = require("dsh");
const stages = [], observed = [];
const traced = (exec) => exec.name !== "trace";
const arg = (exec, key) => exec.arguments === undefined ? undefined : exec.arguments[key];

on("tools/pre-execute", async (exec, next) => {
  if (!traced(exec)) return next();
  stages.push("pre");
  switch (arg(exec, "mode")) {
    case "pre-throw": throw new Error("pre listener broke");
    case "pre-bad": return { kind: "allow", reason: "extra" };
    case "deny": return { kind: "deny", reason: "denied by policy" };
    case "ask": return { kind: "ask" };
    case "cancel": return { kind: "cancel" };
    case "pre-unregister": disposers.t(); return next();
  }
  return next();
});
tools.guard((exec) => {
  if (!traced(exec)) return undefined;
  stages.push("guard");
  switch (arg(exec, "mode")) {
    case "guard-deny": return "guard says no";
    case "guard-throw": throw new Error("guard broke");
  }
  return undefined;
});
on("tools/execute", async (exec, next) => {
  if (!traced(exec)) return next();
  stages.push("wrapper");
  switch (arg(exec, "mode")) {
    case "wrapper-throw": throw new Error("wrapper broke");
    case "wrapper-throw-after": await next(); throw new Error("wrapper broke after next");
    case "wrapper-vanish": disposers.t(); return { isError: false, value: "from wrapper", content: [] };
  }
  return next();
});
on("tools/post-execute", async (exec, result, next) => {
  if (!traced(exec)) return next();
  stages.push("post");
  switch (arg(exec, "mode")) {
    case "post-throw": throw new Error("post listener broke");
    case "post-bad": return { kind: "acept" };
    case "post-both": return { kind: "accept", value: "v", content: [] };
  }
  return next();
});
on("tools/result", (exec, result) => {
  if (!traced(exec)) return;
  stages.push("result");
  observed.push(result);
});

const disposers = {};
for (const name of ["t", "tm"]) {
  const output = {
    schema: { type: "string" },
    render: (args, value) => {
      stages.push("render");
      if (args.mode === "render-throw") throw new Error("renderer exploded");
      return [{ type: "text", text: value }];
    },
  };
  if (name === "tm") output.presentationMeta = (args, value) => { stages.push("meta"); throw new Error("meta exploded"); };
  disposers[name] = tools.register(defineTool({
    name, description: "traced", parameters: { mode: { type: "string" }, fin: { type: "string" }, n: { type: "integer" } },
    output,
    finalizeContent(exec, result) {
      stages.push("finalize");
      switch (arg(exec, "fin")) {
        case "throw": throw new Error("finalizer broke");
        case "replace": return [{ type: "text", text: "finalized isError=" + result.isError }];
      }
      return undefined;
    },
    async execute(args, exec) {
      stages.push("body");
      switch (args.mode) {
        case "body-throw": throw new Error("body exploded");
        case "bad-output": return 42;
      }
      return "ok";
    },
  }));
}

tools.register({ name: "trace", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return { stages: stages.splice(0), observed: observed.splice(0) }; } });
`,
	Lua: `
local dsh = require("dsh")
local stages, observed = {}, {}
local disposers = {}
local function push(s) stages[#stages + 1] = s end
local function traced(exec) return exec.name ~= "trace" end
local function arg(exec, key)
  local a = exec.arguments
  if a == nil then return nil end
  return a[key]
end

dsh.on("tools/pre-execute", function(exec, next)
  if not traced(exec) then return next() end
  push("pre")
  local mode = arg(exec, "mode")
  if mode == "pre-throw" then error("pre listener broke") end
  if mode == "pre-bad" then return { kind = "allow", reason = "extra" } end
  if mode == "deny" then return { kind = "deny", reason = "denied by policy" } end
  if mode == "ask" then return { kind = "ask" } end
  if mode == "cancel" then return { kind = "cancel" } end
  if mode == "pre-unregister" then disposers.t() end
  return next()
end)
dsh.tools.guard(function(exec)
  if not traced(exec) then return nil end
  push("guard")
  local mode = arg(exec, "mode")
  if mode == "guard-deny" then return "guard says no" end
  if mode == "guard-throw" then error("guard broke") end
  return nil
end)
dsh.on("tools/execute", function(exec, next)
  if not traced(exec) then return next() end
  push("wrapper")
  local mode = arg(exec, "mode")
  if mode == "wrapper-throw" then error("wrapper broke") end
  if mode == "wrapper-throw-after" then next() error("wrapper broke after next") end
  if mode == "wrapper-vanish" then disposers.t() return { isError = false, value = "from wrapper", content = {} } end
  return next()
end)
dsh.on("tools/post-execute", function(exec, result, next)
  if not traced(exec) then return next() end
  push("post")
  local mode = arg(exec, "mode")
  if mode == "post-throw" then error("post listener broke") end
  if mode == "post-bad" then return { kind = "acept" } end
  if mode == "post-both" then return { kind = "accept", value = "v", content = {} } end
  return next()
end)
dsh.on("tools/result", function(exec, result)
  if not traced(exec) then return end
  push("result")
  observed[#observed + 1] = result
end)

for _, name in ipairs({ "t", "tm" }) do
  local output = {
    schema = { type = "string" },
    render = function(args, value)
      push("render")
      if args.mode == "render-throw" then error("renderer exploded") end
      return { { type = "text", text = value } }
    end,
  }
  if name == "tm" then output.presentation_meta = function(args, value) push("meta") error("meta exploded") end end
  disposers[name] = dsh.tools.register(dsh.define_tool {
    name = name, description = "traced", parameters = { mode = { type = "string" }, fin = { type = "string" }, n = { type = "integer" } },
    output = output,
    finalize_content = function(exec, result)
      push("finalize")
      local fin = arg(exec, "fin")
      if fin == "throw" then error("finalizer broke") end
      if fin == "replace" then return { { type = "text", text = "finalized isError=" .. tostring(result.isError) } } end
      return nil
    end,
    execute = function(args, exec)
      push("body")
      if args.mode == "body-throw" then error("body exploded") end
      if args.mode == "bad-output" then return 42 end
      return "ok"
    end,
  })
end

dsh.tools.register { name = "trace", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function()
    local r = { stages = dsh.array(stages), observed = dsh.array(observed) }
    stages, observed = {}, {}
    return r
  end }
`,
}

// noGuard is how rowsPlugin's guard registration is taken out, per language.
var noGuard = map[string][2]string{
	"js":  {"tools.guard(", "("},
	"lua": {"dsh.tools.guard(", "local _ = ("},
}

// row is one row of the table: the call, and what must come of it.
type row struct {
	name string
	tool string // "t" unless set
	args any    // JSON text or a Go value; {} when nil
	ctx  func() context.Context
	// abort is where Go code inner to the script's listeners cancels the
	// caller: "pre" (a pre-execute listener) or "body" (a tools/execute
	// wrapper, once the body returned).
	abort   string
	noGuard bool   // the plugin registers no guard
	bare    bool   // no engine timeout policy wrapper around the script's
	stages  string // the stages that ran, in order
	want    string // the exact final result
}

func runRow(t *testing.T, lang hosttest.Lang, r row) {
	t.Helper()
	src := rowsPlugin.In(lang)
	if r.noGuard {
		src = strings.Replace(src, noGuard[lang.Name][0], noGuard[lang.Name][1], 1)
	}
	e := hosttest.Load(t, lang, hosttest.Config{Bare: r.bare}, map[string]string{lang.File("rows"): src})
	e.NoDiagnostics(t)
	ctx := context.Background()
	if r.ctx != nil {
		ctx = r.ctx()
	}
	if r.abort != "" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if r.abort == "pre" {
			e.Service.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				if exec.Name() != "trace" {
					cancel()
				}
				return next()
			})
		} else {
			e.Service.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
				res := next(ctx)
				if exec.Name() != "trace" {
					cancel()
				}
				return res, nil
			})
		}
	}
	a := r.args
	if s, ok := a.(string); ok {
		a = hosttest.Args(t, s)
	}
	if a == nil {
		a = dsl.NewObject()
	}
	name := r.tool
	if name == "" {
		name = "t"
	}
	got := hosttest.JSON(t, e.Service.Call(ctx, engine.Input{CallID: "row", Name: name, Arguments: a}).JSON())
	hosttest.Want(t, got, r.want)
	res := e.Service.Call(context.Background(), engine.Input{CallID: "trace", Name: "trace", Arguments: dsl.NewObject()})
	if res.IsError {
		t.Fatalf("trace: %s", hosttest.JSON(t, res.JSON()))
	}
	tr := res.Value.(*dsl.Object)
	stages, _ := tr.Get("stages")
	var names []string
	for _, s := range stages.([]any) {
		names = append(names, s.(string))
	}
	if got := strings.Join(names, " "); got != r.stages {
		t.Errorf("stages %q\nwant   %q", got, r.stages)
	}
	observed, _ := tr.Get("observed")
	list := observed.([]any)
	if len(list) != 1 {
		t.Fatalf("tools/result observed %d results", len(list))
	}
	// A JavaScript observer sees the result exactly; values that went
	// through a Lua table come back with their object keys sorted.
	o, g := hosttest.JSON(t, list[0]), got
	if lang.Name == hosttest.Lua.Name {
		o, g = canonical(t, list[0]), canonical(t, hosttest.Args(t, got))
	}
	if o != g {
		t.Errorf("tools/result observed %s\nfinal result           %s", o, g)
	}
}

// canonical renders a JSON value with its object keys sorted.
func canonical(t *testing.T, v any) string {
	t.Helper()
	s, err := dsl.Snapshot(sorted(v))
	if err != nil {
		t.Fatal(err)
	}
	return hosttest.JSON(t, s)
}

func sorted(v any) any {
	switch x := v.(type) {
	case *dsl.Object:
		m := map[string]any{}
		for k, e := range x.All() {
			m[k] = sorted(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for k, e := range x {
			out[k] = sorted(e)
		}
		return out
	}
	return v
}

func TestRowsOfTheOutcomeTable(t *testing.T) {
	abd := hosttest.Failure("tool call aborted before dispatch", hosttest.Info("AbortError", "ABORTED_BEFORE_DISPATCH"))
	outErr := func(tool, v string) string {
		return hosttest.Failure(`tool "`+tool+`" returned invalid output: `+v, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT"))
	}
	full := "pre guard wrapper body render post finalize result"
	rows := []row{
		{name: "a plain success reaches every stage", stages: full,
			want: `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`},
		// args not lossless / args getter throws: the content finalizer (captured) and tools/result only.
		{name: "arguments that are not lossless", args: dsl.NewObject(dsl.Member{Key: "mode", Value: "x"}, dsl.Member{Key: "f", Value: func() {}}),
			stages: "finalize result", want: hosttest.Failure("tool execution arguments must be losslessly JSON-serializable", "")},
		{name: "arguments that are not lossless win over a pre-aborted signal", args: dsl.NewObject(dsl.Member{Key: "f", Value: func() {}}),
			ctx: cancelled, stages: "finalize result", want: hosttest.Failure("tool execution arguments must be losslessly JSON-serializable", "")},
		// pre-aborted: the content finalizer and tools/result only.
		{name: "a pre-aborted call", ctx: cancelled, stages: "finalize result", want: abd},
		// pre listener / guard throws: no post-execute.
		{name: "a throwing pre-execute listener", args: `{"mode":"pre-throw"}`, stages: "pre finalize result", want: hosttest.Failure("pre listener broke", "")},
		{name: "a pre-execute listener returning a bad decision", args: `{"mode":"pre-bad"}`, stages: "pre finalize result",
			want: hosttest.Failure(`tools/pre-execute listener returned an invalid decision: "allow" does not take "reason"`, "")},
		{name: "a throwing guard", args: `{"mode":"guard-throw"}`, stages: "pre guard finalize result", want: hosttest.Failure("guard broke", "")},
		// deny / guard deny / approval non-grant: post-execute runs.
		{name: "a pre-execute deny", args: `{"mode":"deny"}`, stages: "pre post finalize result", want: hosttest.Failure("denied by policy", "")},
		{name: "a guard deny", args: `{"mode":"guard-deny"}`, stages: "pre guard post finalize result", want: hosttest.Failure("guard says no", "")},
		{name: "an ask without an approval service", args: `{"mode":"ask"}`, stages: "pre post finalize result",
			want: hosttest.Failure(`tool "t" requires approval (not yet supported)`, "")},
		{name: "the content finalizer rewrites a denial's content only", args: `{"mode":"deny","fin":"replace"}`, stages: "pre post finalize result",
			want: `{"isError":true,"error":{"message":"denied by policy"},"content":[{"type":"text","text":"finalized isError=true"}]}`},
		// cancel detected after pre: post-execute runs.
		{name: "a cancel decision", args: `{"mode":"cancel"}`, stages: "pre post finalize result", want: abd},
		{name: "the caller aborting while pre-execute runs", abort: "pre", stages: "pre guard post finalize result", want: abd},
		{name: "the caller aborting while pre-execute runs, without a guard", abort: "pre", noGuard: true, stages: "pre post finalize result", want: abd},
		// (a caller abort after the body is not a row of its own: the result is ABORTED and reaches everything)
		{name: "the caller aborting after the body", abort: "body", stages: full, want: hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED"))},
		// unknown tool: everything but the body and the finalizer.
		{name: "an unknown tool", tool: "ghost", stages: "pre guard wrapper post result",
			want: hosttest.Failure(`unknown tool "ghost"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL"))},
		{name: "a tool a pre-execute listener unregistered keeps its captured finalizer", args: `{"mode":"pre-unregister","fin":"replace"}`,
			stages: "pre guard wrapper post finalize result",
			want:   `{"isError":true,"error":{"message":"unknown tool \"t\"","info":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}},"content":[{"type":"text","text":"finalized isError=true"}]}`},
		// body throws / invalid args / invalid output / render or meta throws: every stage.
		{name: "a throwing body", args: `{"mode":"body-throw"}`, stages: "pre guard wrapper body post finalize result", want: hosttest.Failure("body exploded", "")},
		{name: "invalid arguments", args: `{"n":1.5}`, stages: "pre guard wrapper post finalize result",
			want: hosttest.Failure(`invalid arguments: "n" must be an integer`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))},
		{name: "invalid output", args: `{"mode":"bad-output"}`, stages: "pre guard wrapper body post finalize result",
			want: outErr("t", `"value" must be a string`)},
		{name: "a throwing renderer", args: `{"mode":"render-throw"}`, stages: full, want: outErr("t", "output.render failed: renderer exploded")},
		{name: "a throwing presentation meta", tool: "tm", stages: "pre guard wrapper body render meta post finalize result",
			want: outErr("tm", "output.presentationMeta failed: meta exploded")},
		// wrapper throws / wrapper success for a vanished tool: no post-execute.
		{name: "a wrapper throwing before next", args: `{"mode":"wrapper-throw"}`, stages: "pre guard wrapper finalize result", want: hosttest.Failure("wrapper broke", "")},
		{name: "a wrapper throwing after next", args: `{"mode":"wrapper-throw-after"}`, stages: "pre guard wrapper body render finalize result",
			want: hosttest.Failure("wrapper broke after next", "")},
		{name: "a wrapper success for a tool it unregistered", args: `{"mode":"wrapper-vanish"}`, stages: "pre guard wrapper finalize result",
			want: hosttest.Failure(`unknown tool "t"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL"))},
		{name: "a wrapper throwing before next, as the only wrapper", bare: true, args: `{"mode":"wrapper-throw"}`, stages: "pre guard wrapper finalize result",
			want: hosttest.Failure("wrapper broke", "")},
		{name: "a wrapper success for a tool it unregistered, as the only wrapper", bare: true, args: `{"mode":"wrapper-vanish"}`, stages: "pre guard wrapper finalize result",
			want: hosttest.Failure(`unknown tool "t"`, hosttest.Info("ToolNotFoundError", "UNKNOWN_TOOL"))},
		// post listener throws / bad post decision: post-execute ran (threw).
		{name: "a throwing post-execute listener", args: `{"mode":"post-throw"}`, stages: full, want: hosttest.Failure("post listener broke", "")},
		{name: "a post-execute listener returning an unknown kind", args: `{"mode":"post-bad"}`, stages: full,
			want: hosttest.Failure(`tools/post-execute listener returned an invalid decision: unknown kind "acept"`, "")},
		{name: "a post-execute accept replacing both value and content", args: `{"mode":"post-both"}`, stages: full,
			want: hosttest.Failure("tools/post-execute accept decision cannot replace both value and content", "")},
		// finalizer throws: called once, not retried.
		{name: "a throwing finalizer", args: `{"fin":"throw"}`, stages: full, want: hosttest.Failure("finalizer broke", "")},
		{name: "a throwing finalizer on a failure", args: `{"mode":"body-throw","fin":"throw"}`, stages: "pre guard wrapper body post finalize result",
			want: hosttest.Failure("finalizer broke", "")},
	}
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			for _, r := range rows {
				t.Run(r.name, func(t *testing.T) { runRow(t, lang, r) })
			}
		})
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
