package engine

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/textcap"
)

// InstrumentationName is the OpenTelemetry instrumentation scope of the
// engine's spans and metrics.
const InstrumentationName = "github.com/dsh-go/dsh/engine"

// MaxCapturedContent bounds, in bytes, each of the arguments and the result
// a call's span records when content capture is on (see
// [WithContentCapture]); a longer one is cut between UTF-8 characters and
// marked.
const MaxCapturedContent = 4 << 10

// maxAttrName bounds, in bytes, the names and ids a span records (a tool
// name the model chose, a call id): a longer one is cut and marked.
const maxAttrName = 256

// The attribute keys of the engine's spans and metrics; docs/tracing.md
// describes each. The gen_ai.* and error.type keys are the OpenTelemetry
// semantic conventions'; the dsh.* keys are the engine's own, for what the
// conventions do not cover.
const (
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrToolName      = attribute.Key("gen_ai.tool.name")
	attrToolCallID    = attribute.Key("gen_ai.tool.call.id")
	attrToolType      = attribute.Key("gen_ai.tool.type")
	attrToolArguments = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult    = attribute.Key("gen_ai.tool.call.result")
	attrErrorType     = attribute.Key("error.type")

	attrErrorCode    = attribute.Key("dsh.error.code")
	attrOutcome      = attribute.Key("dsh.outcome")
	attrRootCallID   = attribute.Key("dsh.root_call.id")
	attrAgent        = attribute.Key("dsh.agent")
	attrDepth        = attribute.Key("dsh.depth")
	attrPlugin       = attribute.Key("dsh.plugin")
	attrStage        = attribute.Key("dsh.policy.stage")
	attrDecision     = attribute.Key("dsh.policy.decision")
	attrDelegated    = attribute.Key("dsh.policy.delegated")
	attrApproval     = attribute.Key("dsh.approval.outcome")
	attrWait         = attribute.Key("dsh.wait")
	attrElicitAction = attribute.Key("dsh.elicitation.action")
	attrElicitMode   = attribute.Key("dsh.elicitation.mode")
)

// The outcomes of a call (dsh.outcome) and the error type of a failure
// that names no code.
const (
	outcomeSuccess = "success"
	outcomeDenied  = "denied"
	outcomeError   = "error"
	otherError     = "_OTHER"
)

// The policy stages (dsh.policy.stage).
const (
	stagePreExecute  = "pre-execute"
	stageGuard       = "guard"
	stageExecute     = "execute"
	stagePostExecute = "post-execute"
	stageProject     = "project"
	stageFinalize    = "finalize"
)

// WithTracerProvider makes the engine trace every call through tp: an
// execute_tool span per call, a child span per policy stage that ran, and
// spans for approvals (see docs/tracing.md). Nil, the default, records
// nothing and costs nothing.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(s *Service) { s.tracerProvider = tp }
}

// WithMeterProvider makes the engine record its metrics through mp: the
// gen_ai.execute_tool.duration histogram and the dsh.policy.decisions
// counter. Nil, the default, records nothing.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(s *Service) { s.meterProvider = mp }
}

// WithContentCapture makes each execute_tool span record the call's
// arguments and final result (gen_ai.tool.call.arguments and
// gen_ai.tool.call.result), each cut to [MaxCapturedContent] bytes. Off by
// default: a deployment turns it on from
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, read once when it
// creates the Service. The result is the one the caller gets, after every
// post-execute listener (the policies' redaction) ran.
func WithContentCapture(on bool) Option { return func(s *Service) { s.captureContent = on } }

// telemetry is what a Service records through; nil when it records nothing.
type telemetry struct {
	tracer    trace.Tracer            // nil: no spans
	duration  metric.Float64Histogram // nil: no metrics
	decisions metric.Int64Counter
	capture   bool
	sets      attrSets                  // the metrics' attribute sets, made once
	calls     shapes[string, spanShape] // execute_tool spans' names and options, by tool name
	internal  []trace.SpanStartOption   // the start options of the other spans: their kind
}

// attrSets caches the options metric points are recorded with (their
// attribute sets), so that recording one allocates nothing once its set
// was seen. It keeps at most maxAttrSets; past that, they are made per
// point.
type attrSets struct {
	mu sync.RWMutex
	m  map[[4]string]pointOpts
}

// pointOpts are the options of a histogram point and of a counter point
// with one attribute set.
type pointOpts struct {
	record []metric.RecordOption
	add    []metric.AddOption
}

const maxAttrSets = 1024

// get returns the options of the set of kvs, keyed by key.
func (c *attrSets) get(key [4]string, kvs func() []attribute.KeyValue) pointOpts {
	c.mu.RLock()
	po, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return po
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs()...))
	po = pointOpts{record: []metric.RecordOption{opt}, add: []metric.AddOption{opt}}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[[4]string]pointOpts{}
	}
	if len(c.m) < maxAttrSets {
		c.m[key] = po
	}
	c.mu.Unlock()
	return po
}

// spanShape is what the execute_tool spans of one tool start with: their
// name and their start options (kind and constant attributes), made once
// so that starting a span builds no string and no option.
type spanShape struct {
	name string
	opts []trace.SpanStartOption
}

// shapes caches values by key, at most maxAttrSets of them (the keys
// include names a model chose); past that, values are made per use.
type shapes[K comparable, V any] struct {
	mu sync.RWMutex
	m  map[K]V
}

// get returns the value of key, made by mk the first time.
func (c *shapes[K, V]) get(key K, mk func() V) V {
	c.mu.RLock()
	v, ok := c.m[key]
	c.mu.RUnlock()
	if ok {
		return v
	}
	v = mk()
	c.mu.Lock()
	if c.m == nil {
		c.m = map[K]V{}
	}
	if len(c.m) < maxAttrSets {
		c.m[key] = v
	}
	c.mu.Unlock()
	return v
}

// newTelemetry returns the Service's telemetry, nil when both providers are nil.
func newTelemetry(tp trace.TracerProvider, mp metric.MeterProvider, capture bool) *telemetry {
	if tp == nil && mp == nil {
		return nil
	}
	t := &telemetry{capture: capture}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
		t.internal = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	}
	if mp != nil {
		m := mp.Meter(InstrumentationName)
		// The instruments' errors only report a malformed name or unit, which
		// these constants are not; a nil instrument would record nothing.
		t.duration, _ = m.Float64Histogram("gen_ai.execute_tool.duration",
			metric.WithUnit("s"), metric.WithDescription("Duration of tool execution."))
		t.decisions, _ = m.Int64Counter("dsh.policy.decisions",
			metric.WithUnit("{decision}"), metric.WithDescription("Decisions policies took, by plugin, stage and decision."))
	}
	return t
}

// callSpan is one call's telemetry while it runs (the call's tel).
type callSpan struct {
	t     *telemetry
	span  trace.Span // nil without a tracer
	start time.Time
	buf   [5]attribute.KeyValue // the attributes set on the span, without an allocation of their own
}

// startCall starts a call's execute_tool span under ctx's and returns the
// ctx that carries the span, which the call's stages, body and nested
// calls see, and the call's telemetry. The span starts with the tool's
// constant attributes (what a sampler sees); the call's own are set once
// it is known to record.
func (t *telemetry) startCall(ctx context.Context, in Input, depth int) (context.Context, *callSpan) {
	cs := &callSpan{t: t, start: time.Now()}
	if t.tracer == nil {
		return ctx, cs
	}
	mk := func() spanShape {
		name := textcap.String(in.Name, maxAttrName)
		return spanShape{name: "execute_tool " + name, opts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attrOperation.String("execute_tool"), attrToolName.String(name), attrToolType.String("function")),
		}}
	}
	var shape spanShape
	if len(in.Name) <= maxAttrName {
		shape = t.calls.get(in.Name, mk)
	} else {
		shape = mk()
	}
	ctx, cs.span = t.tracer.Start(ctx, shape.name, shape.opts...)
	if cs.span.IsRecording() {
		attrs := append(cs.buf[:0],
			attrToolCallID.String(textcap.String(in.CallID, maxAttrName)),
			attrDepth.Int(depth))
		if in.RootCallID != "" && in.RootCallID != in.CallID {
			attrs = append(attrs, attrRootCallID.String(textcap.String(in.RootCallID, maxAttrName)))
		}
		if in.Agent != nil {
			attrs = append(attrs, attrAgent.String(textcap.String(in.Agent.ID(), maxAttrName)))
		}
		cs.span.SetAttributes(attrs...)
	}
	return ctx, cs
}

// endCall records the call's outcome r on its span and metrics and ends the span.
func endCall(c *call, r *Result) {
	cs := c.tel
	if cs == nil {
		return
	}
	outcome, errType, code := callOutcome(c, r)
	if cs.span != nil {
		if cs.span.IsRecording() {
			attrs := append(cs.buf[:0], attrOutcome.String(outcome))
			if cs.t.capture {
				attrs = append(attrs,
					attrToolArguments.String(captured(c.exec.arguments)),
					attrToolResult.String(captured(r.JSON())))
			}
			if outcome != outcomeSuccess {
				attrs = append(attrs, attrErrorType.String(errType))
				if code != "" {
					attrs = append(attrs, attrErrorCode.String(code))
				}
				cs.span.SetStatus(codes.Error, errType)
			}
			cs.span.SetAttributes(attrs...)
		}
		cs.span.End()
	}
	if cs.t.duration != nil {
		name := otherError // an unknown tool's name is the model's: unbounded
		if c.exec.def != nil {
			name = c.exec.name
		}
		set := cs.t.sets.get([4]string{"duration", name, outcome, errType}, func() []attribute.KeyValue {
			attrs := []attribute.KeyValue{attrOperation.String("execute_tool"), attrToolName.String(name), attrOutcome.String(outcome)}
			if outcome != outcomeSuccess {
				attrs = append(attrs, attrErrorType.String(errType))
			}
			return attrs
		})
		// With the call's span, so that the point's exemplar links to its
		// trace (a context only when there is a span to carry).
		ctx := context.Background()
		if cs.span != nil {
			ctx = trace.ContextWithSpan(ctx, cs.span)
		}
		cs.t.duration.Record(ctx, time.Since(cs.start).Seconds(), set.record...)
	}
}

// callOutcome classifies a call's final result: its outcome, and for a
// failure its error.type (the failure's code, "denied" for a denial that
// names none, else _OTHER) and code ("" when it names none).
func callOutcome(c *call, r *Result) (outcome, errType, code string) {
	if !r.IsError {
		return outcomeSuccess, "", ""
	}
	if r.Error != nil && r.Error.Info != nil && r.Error.Info.Code != "" {
		code = r.Error.Info.Code
	}
	switch {
	case c.denied && code != "":
		return outcomeDenied, code, code
	case c.denied:
		return outcomeDenied, outcomeDenied, ""
	case code != "":
		return outcomeError, code, code
	}
	return outcomeError, otherError, ""
}

// captured is v's JSON, cut to MaxCapturedContent bytes.
func captured(v any) string {
	b, err := dsl.Marshal(v)
	if err != nil {
		return "(not JSON)"
	}
	return textcap.String(string(b), MaxCapturedContent)
}

// stageSpan is one policy stage's telemetry while it runs.
type stageSpan struct {
	t      *telemetry
	span   trace.Span
	plugin string
	stage  string
	buf    [4]attribute.KeyValue // the attributes end sets, without an allocation of their own
}

// startStage starts the span of one policy stage, a child of ctx's
// (the call's) span. It returns nil when t is nil: its methods then do
// nothing.
func (t *telemetry) startStage(ctx context.Context, stage, plugin string) *stageSpan {
	if t == nil {
		return nil
	}
	ss := &stageSpan{}
	t.initStage(ss, ctx, stage, plugin)
	return ss
}

// initStage is startStage into ss, for a caller that holds the stage's
// telemetry in an allocation of its own. The span starts with its kind
// only: its attributes, the stage's and the plugin's with the decision,
// are set together when it ends (one copy into the span, not two).
func (t *telemetry) initStage(ss *stageSpan, ctx context.Context, stage, plugin string) {
	ss.t, ss.plugin, ss.stage = t, plugin, stage
	if t.tracer == nil {
		return
	}
	_, ss.span = t.tracer.Start(ctx, stageSpanName(stage), t.internal...)
}

// stageSpanName is the name of a stage's span, "dsh.policy <stage>".
func stageSpanName(stage string) string {
	switch stage {
	case stagePreExecute:
		return "dsh.policy " + stagePreExecute
	case stageGuard:
		return "dsh.policy " + stageGuard
	case stageExecute:
		return "dsh.policy " + stageExecute
	case stagePostExecute:
		return "dsh.policy " + stagePostExecute
	case stageProject:
		return "dsh.policy " + stageProject
	case stageFinalize:
		return "dsh.policy " + stageFinalize
	}
	return "dsh.policy " + stage
}

// end records the stage's decision (delegated: the listener returned what
// the rest of its chain decided, unchanged) or its failure, and ends the
// span. The decisions counter counts the stage's own decisions only.
func (ss *stageSpan) end(decision string, delegated bool, err error) {
	if ss == nil || ss.t == nil {
		return
	}
	if err != nil {
		decision = outcomeError
	}
	if ss.span != nil {
		if ss.span.IsRecording() {
			attrs := append(ss.buf[:0], attrStage.String(ss.stage))
			if ss.plugin != "" {
				attrs = append(attrs, attrPlugin.String(ss.plugin))
			}
			attrs = append(attrs, attrDecision.String(decision))
			if delegated {
				attrs = append(attrs, attrDelegated.Bool(true))
			}
			if err != nil {
				attrs = append(attrs, attrErrorType.String(errorType(err)))
				ss.span.SetStatus(codes.Error, errorType(err))
			}
			ss.span.SetAttributes(attrs...)
		}
		ss.span.End()
	}
	if ss.t.decisions != nil && !delegated {
		set := ss.t.sets.get([4]string{"decision", ss.plugin, ss.stage, decision}, func() []attribute.KeyValue {
			return []attribute.KeyValue{attrPlugin.String(ss.plugin), attrStage.String(ss.stage), attrDecision.String(decision)}
		})
		ss.t.decisions.Add(context.Background(), 1, set.add...)
	}
}

// errorType is the error.type of a policy's error: its code, or _OTHER.
func errorType(err error) string {
	if f := failureOf(err); f.Info != nil && f.Info.Code != "" {
		return f.Info.Code
	}
	return otherError
}

// startApproval starts the span of an approval the call waits for.
func (t *telemetry) startApproval(ctx context.Context) (trace.Span, time.Time) {
	if t == nil || t.tracer == nil {
		return nil, time.Time{}
	}
	_, sp := t.tracer.Start(ctx, "dsh.approval", trace.WithSpanKind(trace.SpanKindInternal))
	return sp, time.Now()
}

// endApproval records an approval's outcome and how long the call waited.
func endApproval(sp trace.Span, start time.Time, outcome string, err error) {
	if sp == nil {
		return
	}
	sp.SetAttributes(attrApproval.String(outcome), attrWait.Float64(time.Since(start).Seconds()))
	if err != nil {
		sp.SetAttributes(attrErrorType.String(errorType(err)))
		sp.SetStatus(codes.Error, errorType(err))
	}
	sp.End()
}

// elicitSpan starts the span of an elicitation under ctx's span, through
// that span's provider; nil when ctx's span does not record.
func elicitSpan(ctx context.Context, e Elicitation) (trace.Span, time.Time) {
	parent := trace.SpanFromContext(ctx)
	if !parent.IsRecording() {
		return nil, time.Time{}
	}
	mode := "form"
	if e.URL != "" {
		mode = "url"
	}
	_, sp := parent.TracerProvider().Tracer(InstrumentationName).Start(ctx, "dsh.elicitation",
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrElicitMode.String(mode)))
	return sp, time.Now()
}

// endElicit records an elicitation's answer (its action, or "error") and wait.
func endElicit(sp trace.Span, start time.Time, res ElicitResult, err error) {
	if sp == nil {
		return
	}
	action := res.Action
	if err != nil {
		action = outcomeError
		sp.SetAttributes(attrErrorType.String(errorType(err)))
		sp.SetStatus(codes.Error, errorType(err))
	}
	sp.SetAttributes(attrElicitAction.String(action), attrWait.Float64(time.Since(start).Seconds()))
	sp.End()
}
