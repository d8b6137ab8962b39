package engine_test

import (
	"context"
	"strconv"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/engine"
)

// BenchmarkTraceCost is CallGreet behind 0, 1 and 4 pass-through
// pre-execute listeners, with telemetry off and on (every span sampled and
// batched to an exporter that drops them, metrics aggregated): the cost of
// tracing is on−off, fitted as a + b×stages (BENCHMARKS.md, "Tracing").
func BenchmarkTraceCost(b *testing.B) {
	pass := func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return next()
	}
	for _, stages := range []int{0, 1, 4} {
		for _, traced := range []bool{false, true} {
			name := "stages=" + strconv.Itoa(stages) + "/off"
			if traced {
				name = "stages=" + strconv.Itoa(stages) + "/on"
			}
			b.Run(name, func(b *testing.B) {
				var opts []engine.Option
				if traced {
					opts = tracedOptions(b)
				}
				svc := greetService(b, opts...)
				for i := range stages {
					svc.Global().OnPreExecute(pass, engine.Source("p"+strconv.Itoa(i)+".ts"))
				}
				benchCallsCPU(b, svc)
			})
		}
	}
}

// BenchmarkTraceSpanFloor is what the SDK alone takes for one span like a
// policy stage's (a child span, two attributes, batched to an exporter that
// drops it): the floor under BenchmarkTraceCost's cost per stage.
func BenchmarkTraceSpanFloor(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := tp.Tracer(engine.InstrumentationName)
	ctx, parent := tr.Start(context.Background(), "execute_tool greet")
	defer parent.End()
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	b.ReportAllocs()
	start := cpuTime(b)
	n := 0
	for b.Loop() {
		_, sp := tr.Start(ctx, "dsh.policy pre-execute", opts...)
		sp.SetAttributes(attribute.String("dsh.policy.stage", "pre-execute"), attribute.String("dsh.plugin", "p0.ts"))
		sp.End()
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
}

// benchCallsCPU is benchCalls that also reports the process's CPU time per
// call (cpu-ns/op: user and system, the batch exporter's goroutine and the
// garbage collector included), which other jobs on a shared machine
// disturb less than the wall time.
func benchCallsCPU(b *testing.B, svc *engine.Service) {
	ctx, in := context.Background(), greetInput()
	if r := svc.Call(ctx, in); r.IsError {
		b.Fatal(r.Error.Message)
	}
	b.ReportAllocs()
	start := cpuTime(b)
	n := 0
	for b.Loop() {
		if r := svc.Call(ctx, in); r.IsError {
			b.Fatal(r.Error.Message)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
}

// cpuTime is the CPU time the process used so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
