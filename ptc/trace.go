package ptc

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// InstrumentationName is the OpenTelemetry instrumentation scope of the
// run_code run spans and metrics.
const InstrumentationName = "github.com/dsh-go/dsh/ptc"

// RunSpanName is the name of the span of one run_code run. The OpenTelemetry
// conventions have no code-execution span, so the name is dsh's own.
const RunSpanName = "dsh.run_code"

// The attribute keys of the run span and the run metrics; docs/tracing.md
// describes each. error.type is the conventions' key, the others dsh's.
const (
	attrLanguage  = attribute.Key("dsh.run_code.language")
	attrIsolation = attribute.Key("dsh.run_code.isolation")
	attrComputeMs = attribute.Key("dsh.run_code.compute_ms")
	attrWallMs    = attribute.Key("dsh.run_code.wall_ms")
	attrSubCalls  = attribute.Key("dsh.run_code.sub_calls")
	attrOutcome   = attribute.Key("dsh.run_code.outcome")
	attrErrorType = attribute.Key("error.type")
)

// The outcomes of a run (dsh.run_code.outcome) beside the failure kinds: a
// run that completed, and one that ended with a Go error (contract misuse,
// a sub-call's internal failure) rather than a Result.
const (
	outcomeOK    = "ok"
	outcomeError = "error"
	otherError   = "_OTHER"
)

// runOutcomes are the outcomes whose metric attribute sets are made once.
var runOutcomes = [...]string{
	outcomeOK, outcomeError,
	string(KindException), string(KindTimeout), string(KindAbort),
	string(KindWorkerExit), string(KindInvalidOutput), string(KindOutputLimit),
}

// runTelemetry is what an Executor records its runs through; nil when its
// Service has neither a tracer nor a meter provider.
type runTelemetry struct {
	tracer    trace.Tracer // nil: no spans
	runs      metric.Int64Counter
	duration  metric.Float64Histogram // nil: no metrics
	language  string
	isolation string
	sets      map[string]attribute.Set // the metrics' sets by outcome, read-only
}

// newRunTelemetry returns the telemetry of runs in lang under iso, nil when
// both providers are nil.
func newRunTelemetry(tp trace.TracerProvider, mp metric.MeterProvider, lang Language, iso Isolation) *runTelemetry {
	if tp == nil && mp == nil {
		return nil
	}
	t := &runTelemetry{language: string(lang), isolation: string(iso)}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
	}
	if mp != nil {
		m := mp.Meter(InstrumentationName)
		// The instruments' errors only report a malformed name or unit, which
		// these constants are not; a nil instrument records nothing.
		t.runs, _ = m.Int64Counter("dsh.run_code.runs",
			metric.WithUnit("{run}"), metric.WithDescription("run_code runs, by language, isolation and outcome."))
		t.duration, _ = m.Float64Histogram("dsh.run_code.duration",
			metric.WithUnit("s"), metric.WithDescription("Wall-clock duration of run_code runs."))
		t.sets = make(map[string]attribute.Set, len(runOutcomes))
		for _, o := range runOutcomes {
			t.sets[o] = t.metricSet(o)
		}
	}
	return t
}

// metricSet is the attribute set of a run's metric points with outcome.
func (t *runTelemetry) metricSet(outcome string) attribute.Set {
	return attribute.NewSet(attrLanguage.String(t.language), attrIsolation.String(t.isolation), attrOutcome.String(outcome))
}

// runSpan is one run's telemetry while it runs.
type runSpan struct {
	t         *runTelemetry
	ctx       context.Context // carries span (or the caller's): the metrics' exemplars link to it
	span      trace.Span      // nil without a tracer
	start     time.Time
	computeMs float64 // what the runtime reported; -1: nothing
}

// start starts a run's span under ctx's (the run_code call's execute_tool
// span) and returns the ctx that carries it, which the run's sub-calls are
// made with. With t nil it returns ctx and nil, allocating nothing.
func (t *runTelemetry) start(ctx context.Context) (context.Context, *runSpan) {
	if t == nil {
		return ctx, nil
	}
	rs := &runSpan{t: t, start: time.Now(), computeMs: -1}
	if t.tracer != nil {
		ctx, rs.span = t.tracer.Start(ctx, RunSpanName, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attrLanguage.String(t.language), attrIsolation.String(t.isolation)))
	}
	rs.ctx = ctx
	return ctx, rs
}

// onCompute is the Request's OnCompute: nil when rs is, so that a runtime
// measures nothing for a run nobody records.
func (rs *runSpan) onCompute() func(float64) {
	if rs == nil {
		return nil
	}
	return func(ms float64) { rs.computeMs = ms }
}

// end records the run's outcome on its span and metrics and ends the span:
// res and runErr are what the runtime gave back, closeErr the scheduler's
// internal failure, subCalls the sub-calls the run made.
func (rs *runSpan) end(res Result, runErr, closeErr error, subCalls int) {
	if rs == nil {
		return
	}
	wall := time.Since(rs.start)
	outcome, errType := outcomeOK, ""
	switch {
	case runErr != nil:
		outcome, errType = outcomeError, otherError
	case res.Err != nil:
		outcome, errType = string(res.Err.Kind), string(res.Err.Kind)
	case closeErr != nil:
		outcome, errType = outcomeError, otherError
	}
	if rs.span != nil {
		attrs := []attribute.KeyValue{
			attrWallMs.Float64(float64(wall) / float64(time.Millisecond)),
			attrSubCalls.Int(subCalls),
			attrOutcome.String(outcome),
		}
		if rs.computeMs >= 0 {
			attrs = append(attrs, attrComputeMs.Float64(rs.computeMs))
		}
		if errType != "" {
			attrs = append(attrs, attrErrorType.String(errType))
			rs.span.SetStatus(codes.Error, errType)
		}
		rs.span.SetAttributes(attrs...)
		rs.span.End()
	}
	if rs.t.runs != nil {
		set, ok := rs.t.sets[outcome]
		if !ok { // a kind this package does not name: a runtime's own
			set = rs.t.metricSet(outcome)
		}
		// The run's context, for its trace id only: a metric point is
		// recorded whether or not the call was cancelled meanwhile.
		ctx := context.WithoutCancel(rs.ctx)
		opt := metric.WithAttributeSet(set)
		rs.t.runs.Add(ctx, 1, opt)
		rs.t.duration.Record(ctx, wall.Seconds(), opt)
	}
}

// subCalls is the count of sub-calls the run made: those that were given a
// number (dispatched, or queued and abandoned when the run ended), not
// those a cap refused.
func (s *scheduler) subCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
