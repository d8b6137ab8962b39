package ptc

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestRunCodeSubCallSpansAreChildrenOfTheRunsSpan(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	svc := engine.New(engine.WithTracerProvider(tp))
	g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
		"echo once": func(ctx context.Context, tools map[string]Binding) Result {
			v, err := tools["echo"].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: "a"}))
			if err != nil {
				return Result{Err: ExceptionFailure(err.Error())}
			}
			return Result{Value: v}
		},
	}}
	agent := echoExecutor(t, svc, g)
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ToolName, Agent: agent, Arguments: runCode("echo once", "Run a test program")})
	if r.IsError {
		t.Fatal(r.Error.Message)
	}
	spans := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		spans[s.Name()] = s
	}
	call, run, sub := spans["execute_tool run_code"], spans[RunSpanName], spans["execute_tool echo"]
	if call == nil || run == nil || sub == nil {
		t.Fatalf("spans %v lack run_code's, its run's or echo's", rec.Ended())
	}
	if run.Parent().SpanID() != call.SpanContext().SpanID() {
		t.Errorf("the run's span has parent %v, want the run_code call's %v", run.Parent().SpanID(), call.SpanContext().SpanID())
	}
	if sub.Parent().SpanID() != run.SpanContext().SpanID() {
		t.Errorf("the sub-call's span has parent %v, want the run's %v", sub.Parent().SpanID(), run.SpanContext().SpanID())
	}
	var id string
	for _, kv := range sub.Attributes() {
		if kv.Key == "gen_ai.tool.call.id" {
			id = kv.Value.AsString()
		}
	}
	if id != "c1:ptc:1" {
		t.Errorf("the sub-call's gen_ai.tool.call.id is %q, want c1:ptc:1", id)
	}
}

// echoExecutor makes rt's executor the run_code executor of a new agent
// of svc, registers the Go tool echo (it returns its text) globally, and
// returns the agent.
func echoExecutor(tb testing.TB, svc *engine.Service, rt Runtime) *engine.Agent {
	tb.Helper()
	e, err := NewExecutor(svc, rt, Options{})
	if err != nil {
		tb.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(e)
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	if _, err := svc.Global().Register(&engine.Definition{
		Name: "echo", Description: "Echo the text.", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{Schema: str, Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil }},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			v, _ := args.(*dsl.Object).Get("text")
			return v, nil
		},
	}); err != nil {
		tb.Fatal(err)
	}
	return agent
}
