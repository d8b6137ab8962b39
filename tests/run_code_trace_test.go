package tests

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/process"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The run span of run_code (docs/tracing.md, "dsh.run_code") with the real
// program runtimes: goja and gopher-lua in process, and a child dsh.

// rcTraceRuntime returns a runtime of lang under iso whose compute budget is
// computeMs, closed when t ends.
func rcTraceRuntime(t *testing.T, lang ptc.Language, iso ptc.Isolation, computeMs float64) ptc.Runtime {
	t.Helper()
	b := ptc.DefaultBudgets()
	b.ComputeMs = computeMs
	var rt ptc.Runtime
	var err error
	switch {
	case iso == ptc.Process:
		rt, err = process.NewRuntime(process.Options{Language: lang, Budgets: b, Path: buildDsh(t)})
	case lang == ptc.Lua:
		rt, err = lua.NewProgramRuntime(lua.ProgramOptions{Budgets: b})
	default:
		rt, err = js.NewProgramRuntime(js.ProgramOptions{Budgets: b})
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// rcTraceRun runs program through run_code on rt, with the Go tool greet,
// and returns the spans recorded.
func rcTraceRun(t *testing.T, rt ptc.Runtime, program string) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	svc := engine.New(engine.WithTracerProvider(tp))
	e, err := ptc.NewExecutor(svc, rt, ptc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(e)
	obj := dsl.NewObject(dsl.Member{Key: "type", Value: "object"})
	if _, err := svc.Global().Register(&engine.Definition{
		Name: "greet", Description: "Greet.", Parameters: obj,
		Output: engine.Output{Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "hello", nil },
	}); err != nil {
		t.Fatal(err)
	}
	svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ptc.ToolName, Agent: agent,
		Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: program}, dsl.Member{Key: "description", Value: "Greet twice"})})
	return rec.Ended()
}

func TestRunCodeRunSpanWithRealRuntimes(t *testing.T) {
	type program struct{ ok, throws, spins string }
	programs := map[ptc.Language]program{
		ptc.TypeScript: {
			ok:     `const a = await tools.greet({}); const b = await tools.greet({}); return a + b;`,
			throws: `await tools.greet({}); await tools.greet({}); throw new Error("boom");`,
			spins:  `await tools.greet({}); await tools.greet({}); for (;;) {}`,
		},
		ptc.Lua: {
			ok:     `local a = tools.greet{} local b = tools.greet{} return a .. b`,
			throws: `tools.greet{} tools.greet{} error("boom")`,
			spins:  `tools.greet{} tools.greet{} while true do end`,
		},
	}
	tests := []struct {
		name    string
		lang    ptc.Language
		iso     ptc.Isolation
		program func(program) string
		outcome string
	}{
		{"a TypeScript run that completes in process is ok", ptc.TypeScript, ptc.InProcess, func(p program) string { return p.ok }, "ok"},
		{"a Lua run that completes in process is ok", ptc.Lua, ptc.InProcess, func(p program) string { return p.ok }, "ok"},
		{"a TypeScript program that throws is an exception", ptc.TypeScript, ptc.InProcess, func(p program) string { return p.throws }, "exception"},
		{"a Lua program that raises an error is an exception", ptc.Lua, ptc.InProcess, func(p program) string { return p.throws }, "exception"},
		{"a TypeScript program past its compute budget is a timeout", ptc.TypeScript, ptc.InProcess, func(p program) string { return p.spins }, "timeout"},
		{"a Lua program past its compute budget is a timeout", ptc.Lua, ptc.InProcess, func(p program) string { return p.spins }, "timeout"},
		{"a Lua run in a child process is ok", ptc.Lua, ptc.Process, func(p program) string { return p.ok }, "ok"},
		{"a TypeScript program that throws in a child process is an exception", ptc.TypeScript, ptc.Process, func(p program) string { return p.throws }, "exception"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.iso == ptc.Process && testing.Short() {
				t.Skip("builds dsh for its child processes")
			}
			const computeMs = 200
			rt := rcTraceRuntime(t, tt.lang, tt.iso, computeMs)
			spans := rcTraceRun(t, rt, tt.program(programs[tt.lang]))
			var call, run sdktrace.ReadOnlySpan
			var subs []sdktrace.ReadOnlySpan
			for _, s := range spans {
				switch s.Name() {
				case "execute_tool run_code":
					call = s
				case ptc.RunSpanName:
					run = s
				case "execute_tool greet":
					subs = append(subs, s)
				}
			}
			if call == nil || run == nil || len(subs) != 2 {
				t.Fatalf("spans %v: want execute_tool run_code, %s and two execute_tool greet", spanNames(spans), ptc.RunSpanName)
			}
			if run.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Errorf("the run span's parent is %v, want the run_code call's %v", run.Parent().SpanID(), call.SpanContext().SpanID())
			}
			for _, s := range subs {
				if s.Parent().SpanID() != run.SpanContext().SpanID() {
					t.Errorf("a greet span's parent is %v, want the run span %v", s.Parent().SpanID(), run.SpanContext().SpanID())
				}
			}
			a := map[attribute.Key]attribute.Value{}
			for _, kv := range run.Attributes() {
				a[kv.Key] = kv.Value
			}
			for k, v := range map[attribute.Key]attribute.Value{
				"dsh.run_code.language":  attribute.StringValue(string(tt.lang)),
				"dsh.run_code.isolation": attribute.StringValue(string(tt.iso)),
				"dsh.run_code.sub_calls": attribute.Int64Value(2),
				"dsh.run_code.outcome":   attribute.StringValue(tt.outcome),
			} {
				if a[k] != v {
					t.Errorf("%s is %v, want %v", k, a[k].String(), v.String())
				}
			}
			wall, compute := a["dsh.run_code.wall_ms"].AsFloat64(), a["dsh.run_code.compute_ms"]
			if wall <= 0 {
				t.Errorf("wall_ms is %v, want more than 0", wall)
			}
			if compute.Type() != attribute.FLOAT64 || compute.AsFloat64() < 0 {
				t.Errorf("compute_ms is %v, want a time of at least 0", compute.String())
			}
			// In process it is the interpreter's busy time, within the run's
			// wall time; a child's CPU time is read in 10 ms ticks, and its
			// collector may run beside the interpreter, so it has no such
			// bound.
			if tt.iso == ptc.InProcess && compute.AsFloat64() > wall {
				t.Errorf("compute_ms is %v, more than wall_ms %v", compute.AsFloat64(), wall)
			}
			if tt.outcome == "timeout" && compute.AsFloat64() < computeMs {
				t.Errorf("a run stopped by its %d ms compute budget used %v ms of it", computeMs, compute.AsFloat64())
			}
			if tt.outcome == "ok" {
				if _, ok := a["error.type"]; ok || run.Status().Code != codes.Unset {
					t.Errorf("a run that completed has error.type %v and status %v", a["error.type"].String(), run.Status())
				}
			} else if a["error.type"].AsString() != tt.outcome || run.Status().Code != codes.Error {
				t.Errorf("error.type is %q and status %v, want %q and Error", a["error.type"].AsString(), run.Status(), tt.outcome)
			}
		})
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Name()
	}
	return names
}
