package js_test

// The table of pipeline.md §3.8 ("Which outcomes reach what"), reproduced
// with script-defined tools and listeners: every stage records its name in
// the plugin, and the trace tool returns (and clears) what ran, together with
// the results the tools/result observer received.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
)

// apiRowsPlugin drives every stage from the call's arguments: mode picks
// what the policy stages and the body do, fin what finalizeContent does.
const apiRowsPlugin = `
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
`

// apiRow is one row of the table: the call, and what must come of it.
type apiRow struct {
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

func apiRowsRun(t *testing.T, row apiRow) {
	t.Helper()
	src := apiRowsPlugin
	if row.noGuard {
		src = strings.Replace(src, "tools.guard(", "(", 1)
	}
	var e *env
	if row.bare {
		e = apiLoadBare(t, map[string]string{"rows.js": src})
	} else {
		e = load(t, map[string]string{"rows.js": src})
	}
	apiNoDiags(t, e)
	ctx := context.Background()
	if row.ctx != nil {
		ctx = row.ctx()
	}
	if row.abort != "" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if row.abort == "pre" {
			e.svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				if exec.Name() != "trace" {
					cancel()
				}
				return next()
			})
		} else {
			e.svc.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
				r := next(ctx)
				if exec.Name() != "trace" {
					cancel()
				}
				return r, nil
			})
		}
	}
	a := row.args
	if s, ok := a.(string); ok {
		a = args(t, s)
	}
	name := row.tool
	if name == "" {
		name = "t"
	}
	got := e.apiRun(t, ctx, engine.Input{CallID: "row", Name: name, Arguments: a})
	apiWant(t, got, row.want)
	r := e.svc.Call(context.Background(), engine.Input{CallID: "trace", Name: "trace", Arguments: dsl.NewObject()})
	if r.IsError {
		t.Fatalf("trace: %s", apiMarshal(t, r))
	}
	tr := r.Value.(*dsl.Object)
	stages, _ := tr.Get("stages")
	var names []string
	for _, s := range stages.([]any) {
		names = append(names, s.(string))
	}
	if got := strings.Join(names, " "); got != row.stages {
		t.Errorf("stages %q\nwant   %q", got, row.stages)
	}
	observed, _ := tr.Get("observed")
	list := observed.([]any)
	if len(list) != 1 {
		t.Fatalf("tools/result observed %d results", len(list))
	}
	if o := apiMarshal(t, list[0]); o != got {
		t.Errorf("tools/result observed %s\nfinal result           %s", o, got)
	}
}

func TestAPIRowsOfTheOutcomeTable(t *testing.T) {
	abd := apiErr("tool call aborted before dispatch", apiInfo("AbortError", "ABORTED_BEFORE_DISPATCH"))
	outErr := func(tool, v string) string {
		return apiErr(`tool "`+tool+`" returned invalid output: `+v, apiInfo("ToolOutputError", "INVALID_TOOL_OUTPUT"))
	}
	full := "pre guard wrapper body render post finalize result"
	rows := []apiRow{
		{name: "a plain success reaches every stage", stages: full,
			want: `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`},
		// args not lossless / args getter throws: finalizeContent (captured) and tools/result only.
		{name: "arguments that are not lossless", args: dsl.NewObject(dsl.Member{Key: "mode", Value: "x"}, dsl.Member{Key: "f", Value: func() {}}),
			stages: "finalize result", want: apiErr("tool execution arguments must be losslessly JSON-serializable", "")},
		{name: "arguments that are not lossless win over a pre-aborted signal", args: dsl.NewObject(dsl.Member{Key: "f", Value: func() {}}),
			ctx: apiCancelled, stages: "finalize result", want: apiErr("tool execution arguments must be losslessly JSON-serializable", "")},
		// pre-aborted: finalizeContent and tools/result only.
		{name: "a pre-aborted call", ctx: apiCancelled, stages: "finalize result", want: abd},
		// pre listener / guard throws: no post-execute.
		{name: "a throwing pre-execute listener", args: `{"mode":"pre-throw"}`, stages: "pre finalize result", want: apiErr("pre listener broke", "")},
		{name: "a pre-execute listener returning a bad decision", args: `{"mode":"pre-bad"}`, stages: "pre finalize result",
			want: apiErr(`tools/pre-execute listener returned an invalid decision: "allow" does not take "reason"`, "")},
		{name: "a throwing guard", args: `{"mode":"guard-throw"}`, stages: "pre guard finalize result", want: apiErr("guard broke", "")},
		// deny / guard deny / approval non-grant: post-execute runs.
		{name: "a pre-execute deny", args: `{"mode":"deny"}`, stages: "pre post finalize result", want: apiErr("denied by policy", "")},
		{name: "a guard deny", args: `{"mode":"guard-deny"}`, stages: "pre guard post finalize result", want: apiErr("guard says no", "")},
		{name: "an ask without an approval service", args: `{"mode":"ask"}`, stages: "pre post finalize result",
			want: apiErr(`tool "t" requires approval (not yet supported)`, "")},
		{name: "finalizeContent rewrites a denial's content only", args: `{"mode":"deny","fin":"replace"}`, stages: "pre post finalize result",
			want: `{"isError":true,"error":{"message":"denied by policy"},"content":[{"type":"text","text":"finalized isError=true"}]}`},
		// cancel detected after pre: post-execute runs.
		{name: "a cancel decision", args: `{"mode":"cancel"}`, stages: "pre post finalize result", want: abd},
		{name: "the caller aborting while pre-execute runs", abort: "pre", stages: "pre guard post finalize result", want: abd},
		{name: "the caller aborting while pre-execute runs, without a guard", abort: "pre", noGuard: true, stages: "pre post finalize result", want: abd},
		// (a caller abort after the body is not a row of its own: the result is ABORTED and reaches everything)
		{name: "the caller aborting after the body", abort: "body", stages: full, want: apiErr("tool call aborted", apiInfo("AbortError", "ABORTED"))},
		// unknown tool: everything but the body and the finalizer.
		{name: "an unknown tool", tool: "ghost", stages: "pre guard wrapper post result",
			want: apiErr(`unknown tool "ghost"`, apiInfo("ToolNotFoundError", "UNKNOWN_TOOL"))},
		{name: "a tool a pre-execute listener unregistered keeps its captured finalizer", args: `{"mode":"pre-unregister","fin":"replace"}`,
			stages: "pre guard wrapper post finalize result",
			want:   `{"isError":true,"error":{"message":"unknown tool \"t\"","info":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}},"content":[{"type":"text","text":"finalized isError=true"}]}`},
		// body throws / invalid args / invalid output / render or meta throws: every stage.
		{name: "a throwing body", args: `{"mode":"body-throw"}`, stages: "pre guard wrapper body post finalize result", want: apiErr("body exploded", "")},
		{name: "invalid arguments", args: `{"n":1.5}`, stages: "pre guard wrapper post finalize result",
			want: apiErr(`invalid arguments: "n" must be an integer`, apiInfo("ToolArgsError", "INVALID_ARGS"))},
		{name: "invalid output", args: `{"mode":"bad-output"}`, stages: "pre guard wrapper body post finalize result",
			want: outErr("t", `"value" must be a string`)},
		{name: "a throwing renderer", args: `{"mode":"render-throw"}`, stages: full, want: outErr("t", "output.render failed: renderer exploded")},
		{name: "a throwing presentationMeta", tool: "tm", stages: "pre guard wrapper body render meta post finalize result",
			want: outErr("tm", "output.presentationMeta failed: meta exploded")},
		// wrapper throws / wrapper success for a vanished tool: no post-execute.
		{name: "a wrapper throwing before next", args: `{"mode":"wrapper-throw"}`, stages: "pre guard wrapper finalize result", want: apiErr("wrapper broke", "")},
		{name: "a wrapper throwing after next", args: `{"mode":"wrapper-throw-after"}`, stages: "pre guard wrapper body render finalize result",
			want: apiErr("wrapper broke after next", "")},
		{name: "a wrapper success for a tool it unregistered", args: `{"mode":"wrapper-vanish"}`, stages: "pre guard wrapper finalize result",
			want: apiErr(`unknown tool "t"`, apiInfo("ToolNotFoundError", "UNKNOWN_TOOL"))},
		{name: "a wrapper throwing before next, as the only wrapper", bare: true, args: `{"mode":"wrapper-throw"}`, stages: "pre guard wrapper finalize result",
			want: apiErr("wrapper broke", "")},
		{name: "a wrapper success for a tool it unregistered, as the only wrapper", bare: true, args: `{"mode":"wrapper-vanish"}`, stages: "pre guard wrapper finalize result",
			want: apiErr(`unknown tool "t"`, apiInfo("ToolNotFoundError", "UNKNOWN_TOOL"))},
		// post listener throws / bad post decision: post-execute ran (threw).
		{name: "a throwing post-execute listener", args: `{"mode":"post-throw"}`, stages: full, want: apiErr("post listener broke", "")},
		{name: "a post-execute listener returning an unknown kind", args: `{"mode":"post-bad"}`, stages: full,
			want: apiErr(`tools/post-execute listener returned an invalid decision: unknown kind "acept"`, "")},
		{name: "a post-execute accept replacing both value and content", args: `{"mode":"post-both"}`, stages: full,
			want: apiErr("tools/post-execute accept decision cannot replace both value and content", "")},
		// finalizer throws: called once, not retried.
		{name: "a throwing finalizer", args: `{"fin":"throw"}`, stages: full, want: apiErr("finalizer broke", "")},
		{name: "a throwing finalizer on a failure", args: `{"mode":"body-throw","fin":"throw"}`, stages: "pre guard wrapper body post finalize result",
			want: apiErr("finalizer broke", "")},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) { apiRowsRun(t, row) })
	}
}

func apiCancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// apiLoadBare is loadDir without the engine's timeout policy, so that a
// script's tools/execute wrapper is the only one.
func apiLoadBare(t *testing.T, files map[string]string) *env {
	t.Helper()
	root := t.TempDir()
	for rel, text := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	svc := engine.New()
	host := &js.Host{ListenerTimeout: time.Second, Grace: 20 * time.Millisecond}
	agents := scripting.NewAgents()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{host}, Agents: agents.Agent, LoadTimeout: 2 * time.Second}
	loaded, diags, err := l.LoadDir(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := scripting.DisposeAll(context.Background(), loaded); err != nil {
			t.Error(err)
		}
	})
	return &env{svc: svc, loaded: loaded, diags: diags, agents: agents, scripts: root}
}
