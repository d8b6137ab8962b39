package engine_test

import (
	"context"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/engine"
)

// tracedOptions are the telemetry options of a deployment that exports:
// every span sampled, batched to an exporter that drops them, and metrics
// aggregated by a reader nobody collects.
func tracedOptions(b *testing.B) []engine.Option {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return []engine.Option{engine.WithTracerProvider(tp), engine.WithMeterProvider(mp)}
}

// BenchmarkCallGreetTraced is BenchmarkCallGreet with tracing and metrics on.
func BenchmarkCallGreetTraced(b *testing.B) { benchCalls(b, greetService(b, tracedOptions(b)...)) }

// BenchmarkCallGreetListenersTraced is BenchmarkCallGreetListeners with
// tracing and metrics on: three policy stages per call.
func BenchmarkCallGreetListenersTraced(b *testing.B) {
	svc := greetService(b, tracedOptions(b)...)
	g := svc.Global()
	pass := func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return next()
	}
	g.OnPreExecute(pass, engine.Source("a.ts"))
	g.OnPreExecute(pass, engine.Source("b.ts"))
	g.OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		return next()
	}, engine.Source("c.lua"))
	benchCalls(b, svc)
}
