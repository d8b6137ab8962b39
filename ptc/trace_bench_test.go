package ptc

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// BenchmarkRunCodeCall is one run_code call whose Go program makes one
// sub-call, without telemetry and with every span recorded.
func BenchmarkRunCodeCall(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "tracing off"
		if traced {
			name = "tracing on"
		}
		b.Run(name, func(b *testing.B) {
			var opts []engine.Option
			if traced {
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
				defer func() { _ = tp.Shutdown(context.Background()) }()
				opts = append(opts, engine.WithTracerProvider(tp))
			}
			svc := engine.New(opts...)
			g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
				"p": func(ctx context.Context, tools map[string]Binding) Result {
					v, err := tools["echo"].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: "a"}))
					if err != nil {
						return Result{Err: ExceptionFailure(err.Error())}
					}
					return Result{Value: v, HasValue: true}
				},
			}}
			e, err := NewExecutor(svc, g, Options{})
			if err != nil {
				b.Fatal(err)
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
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				g.mu.Lock()
				g.requests = g.requests[:0]
				g.mu.Unlock()
				r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ToolName, Agent: agent, Arguments: runCode("p", "Run a test program")})
				if r.IsError {
					b.Fatal(r.Error.Message)
				}
			}
		})
	}
}
