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
			agent := echoExecutor(b, svc, g)
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
