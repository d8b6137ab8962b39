package ptc

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// computeRuntime is a goRuntime that reports a compute time, as the real
// runtimes do, and fails with a contract error for the program "misuse".
type computeRuntime struct {
	*goRuntime
	computeMs float64
}

func (c computeRuntime) Run(ctx context.Context, req Request) (Result, error) {
	if req.Program == "misuse" {
		return Result{}, errors.New("go: bad bindings")
	}
	if req.OnCompute != nil {
		req.OnCompute(c.computeMs)
	}
	return c.goRuntime.Run(ctx, req)
}

// tracedEnv is an engine tracing into a span recorder and metering into a
// manual reader, whose agent "main" runs programs on rt, with the tool echo.
func tracedEnv(t *testing.T, rt Runtime) (*engine.Service, *engine.Agent, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	svc := engine.New(engine.WithTracerProvider(tp), engine.WithMeterProvider(mp))
	agent := echoExecutor(t, svc, rt)
	return svc, agent, rec, reader
}

// echoTwice calls echo twice, then ends as end says.
func echoTwice(end Result) func(context.Context, map[string]Binding) Result {
	return func(ctx context.Context, tools map[string]Binding) Result {
		for _, text := range []string{"a", "b"} {
			if _, err := tools["echo"].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: text})); err != nil {
				return Result{Err: ExceptionFailure(err.Error())}
			}
		}
		return end
	}
}

// spanAttrs is s's attributes by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func TestRunSpan(t *testing.T) {
	tests := []struct {
		name      string
		program   string
		end       Result
		outcome   string
		errorType string // "" for none
		subCalls  int64
	}{
		{name: "a run that completes is ok", program: "p", end: Result{Value: "done", HasValue: true}, outcome: "ok", subCalls: 2},
		{name: "a program that throws is an exception", program: "p", end: Result{Err: ExceptionFailure("Error: boom")}, outcome: "exception", errorType: "exception", subCalls: 2},
		{name: "a run past its wall-clock ceiling is a timeout", program: "p", end: Result{Err: WallCeilingFailure(150)}, outcome: "timeout", errorType: "timeout", subCalls: 2},
		{name: "a run whose output passed its cap is an output-limit", program: "p", end: Result{Err: OutputLimitFailure(64)}, outcome: "output-limit", errorType: "output-limit", subCalls: 2},
		{name: "a runtime's contract error is an error of type _OTHER", program: "misuse", outcome: "error", errorType: "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{"p": echoTwice(tt.end)}}
			svc, agent, rec, reader := tracedEnv(t, computeRuntime{goRuntime: g, computeMs: 12.5})
			svc.Call(context.Background(), engine.Input{CallID: "c1", Name: ToolName, Agent: agent, Arguments: runCode(tt.program, "Run a test program")})

			var call, run sdktrace.ReadOnlySpan
			var subs []sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				switch s.Name() {
				case "execute_tool run_code":
					call = s
				case RunSpanName:
					run = s
				case "execute_tool echo":
					subs = append(subs, s)
				}
			}
			if call == nil || run == nil {
				t.Fatalf("spans %v lack the call's or the run's", rec.Ended())
			}
			if run.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Errorf("the run span's parent is %v, want the run_code call's %v", run.Parent().SpanID(), call.SpanContext().SpanID())
			}
			if int64(len(subs)) != tt.subCalls {
				t.Fatalf("%d sub-call spans, want %d", len(subs), tt.subCalls)
			}
			for _, s := range subs {
				if s.Parent().SpanID() != run.SpanContext().SpanID() {
					t.Errorf("a sub-call's span has parent %v, want the run span %v", s.Parent().SpanID(), run.SpanContext().SpanID())
				}
			}
			if run.SpanKind().String() != "internal" {
				t.Errorf("the run span's kind is %v, want internal", run.SpanKind())
			}

			a := spanAttrs(run)
			want := map[attribute.Key]attribute.Value{
				"dsh.run_code.language":  attribute.StringValue("typescript"),
				"dsh.run_code.isolation": attribute.StringValue("in-process"),
				"dsh.run_code.sub_calls": attribute.Int64Value(tt.subCalls),
				"dsh.run_code.outcome":   attribute.StringValue(tt.outcome),
			}
			if tt.program != "misuse" {
				want["dsh.run_code.compute_ms"] = attribute.Float64Value(12.5)
			}
			if tt.errorType != "" {
				want["error.type"] = attribute.StringValue(tt.errorType)
			}
			for k, v := range want {
				if a[k] != v {
					t.Errorf("%s is %v, want %v", k, a[k].String(), v.String())
				}
			}
			if wall, ok := a["dsh.run_code.wall_ms"]; !ok || wall.AsFloat64() < 0 || wall.AsFloat64() > float64(run.EndTime().Sub(run.StartTime()).Milliseconds()+1) {
				t.Errorf("wall_ms is %v, want within the span's %v", wall.String(), run.EndTime().Sub(run.StartTime()))
			}
			if _, ok := a["error.type"]; ok != (tt.errorType != "") {
				t.Errorf("error.type present %v, want %v", ok, tt.errorType != "")
			}
			if _, ok := a["dsh.run_code.compute_ms"]; ok && tt.program == "misuse" {
				t.Errorf("compute_ms is set for a run whose runtime reported none")
			}
			wantStatus := codes.Unset
			if tt.errorType != "" {
				wantStatus = codes.Error
			}
			if st := run.Status(); st.Code != wantStatus || (wantStatus == codes.Error && st.Description != tt.errorType) {
				t.Errorf("the run span's status is %v %q, want %v %q", st.Code, st.Description, wantStatus, tt.errorType)
			}

			var rm metricdata.ResourceMetrics
			if err := reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			wantSet := attribute.NewSet(
				attribute.String("dsh.run_code.language", "typescript"),
				attribute.String("dsh.run_code.isolation", "in-process"),
				attribute.String("dsh.run_code.outcome", tt.outcome))
			var runs, durations int
			for _, sm := range rm.ScopeMetrics {
				if sm.Scope.Name != InstrumentationName {
					continue
				}
				for _, m := range sm.Metrics {
					switch d := m.Data.(type) {
					case metricdata.Sum[int64]:
						if m.Name != "dsh.run_code.runs" || m.Unit != "{run}" {
							t.Errorf("unexpected counter %s (%s)", m.Name, m.Unit)
						}
						for _, p := range d.DataPoints {
							if !p.Attributes.Equals(&wantSet) || p.Value != 1 {
								t.Errorf("runs point %v = %d, want %v = 1", p.Attributes.ToSlice(), p.Value, wantSet.ToSlice())
							}
							runs++
						}
					case metricdata.Histogram[float64]:
						if m.Name != "dsh.run_code.duration" || m.Unit != "s" {
							t.Errorf("unexpected histogram %s (%s)", m.Name, m.Unit)
						}
						for _, p := range d.DataPoints {
							if !p.Attributes.Equals(&wantSet) || p.Count != 1 {
								t.Errorf("duration point %v counts %d, want %v counting 1", p.Attributes.ToSlice(), p.Count, wantSet.ToSlice())
							}
							// Its exemplar links the point to the run's trace.
							if tid := run.SpanContext().TraceID(); len(p.Exemplars) != 1 || string(p.Exemplars[0].TraceID) != string(tid[:]) {
								t.Errorf("duration exemplars %v, want one in the run's trace %v", p.Exemplars, run.SpanContext().TraceID())
							}
							durations++
						}
					}
				}
			}
			if runs != 1 || durations != 1 {
				t.Errorf("%d runs points and %d duration points, want 1 each", runs, durations)
			}
		})
	}
}

func TestRunSpanIsNotMadeWithoutProviders(t *testing.T) {
	if tel := newRunTelemetry(nil, nil, TypeScript, InProcess); tel != nil {
		t.Fatalf("telemetry without providers is %+v, want nil", tel)
	}
	var tel *runTelemetry
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		c, rs := tel.start(ctx)
		if c != ctx || rs.onCompute() != nil {
			t.Fatal("a run nobody records changed its context or asked for its compute time")
		}
		rs.end(Result{}, nil, nil, 3)
	})
	if allocs != 0 {
		t.Errorf("recording a run with tracing off allocates %v times, want 0", allocs)
	}
}
