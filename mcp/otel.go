package mcp

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// tracerName is the instrumentation scope of the MCP spans.
const tracerName = "github.com/dsh-go/dsh/mcp"

// The attributes of the MCP semantic conventions (see docs/tracing.md).
const (
	attrMethod       = attribute.Key("mcp.method.name")
	attrSession      = attribute.Key("mcp.session.id")
	attrResourceURI  = attribute.Key("mcp.resource.uri")
	attrToolName     = attribute.Key("gen_ai.tool.name")
	attrPromptName   = attribute.Key("gen_ai.prompt.name")
	attrOperation    = attribute.Key("gen_ai.operation.name")
	attrErrorType    = attribute.Key("error.type")
	attrStatusCode   = attribute.Key("rpc.response.status_code")
	attrMCPServer    = attribute.Key("dsh.mcp.server") // the import's name, on client spans
	toolErrorType    = "tool_error"                    // error.type of a tools/call result with isError
	otherErrorType   = "_OTHER"
	executeOperation = "execute_tool"
)

// traceContext is the propagator of the MCP spans: W3C trace context
// (traceparent, tracestate) in the requests' params._meta, as the MCP
// semantic conventions give it.
var traceContext = propagation.TraceContext{}

// metaCarrier is a [propagation.TextMapCarrier] over a request's
// params._meta: string values only, others are not trace context.
type metaCarrier map[string]any

// Get returns the string value of key, or "".
func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set sets key to value.
func (m metaCarrier) Set(key, value string) { m[key] = value }

// Keys lists the keys.
func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// mcpTracing makes the MCP spans and records the operation durations of
// one server or client: nil when neither a TracerProvider nor a
// MeterProvider is given, so that telemetry off costs nothing.
type mcpTracing struct {
	tracer trace.Tracer
	server string // the import's name (client side), or ""
	// The mcp.server.operation.duration and mcp.client.operation.duration
	// histograms, in seconds.
	serverDuration, clientDuration metric.Float64Histogram
}

// durationBuckets are the bucket boundaries the MCP conventions advise
// for the operation durations, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

func newMCPTracing(tp trace.TracerProvider, mp metric.MeterProvider, server string) *mcpTracing {
	if tp == nil && mp == nil {
		return nil
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t := &mcpTracing{tracer: tp.Tracer(tracerName), server: server}
	meter := mp.Meter(tracerName)
	// The errors are of a bad name or option, fixed here: a histogram is
	// returned either way (a no-op one at worst).
	t.serverDuration, _ = meter.Float64Histogram("mcp.server.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("MCP request duration as observed on the receiver from the time it was received until the result or ack is sent."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	t.clientDuration, _ = meter.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return t
}

// params returns req's params, or nil when it has none (a nil pointer in
// the interface, as for a ping).
func params(req sdk.Request) sdk.Params {
	p := req.GetParams()
	if p == nil {
		return nil
	}
	if v := reflect.ValueOf(p); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return p
}

// notification reports whether method is a notification: they get no
// span (only requests do), nor trace context.
func notification(method string) bool { return strings.HasPrefix(method, "notifications/") }

// receiving is the middleware of requests received (by dsh serve, or by an
// import's client from its server): a SERVER span per request, the child of
// the trace context in params._meta when there is one.
func (t *mcpTracing) receiving(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if notification(method) {
			return next(ctx, method, req)
		}
		p := params(req)
		if p != nil {
			if meta := p.GetMeta(); meta != nil {
				ctx = traceContext.Extract(ctx, metaCarrier(meta))
			}
		}
		ctx, span, op := t.start(ctx, method, req, p, trace.SpanKindServer)
		res, err := next(ctx, method, req)
		t.end(ctx, span, op, t.serverDuration, res, err)
		return res, err
	}
}

// sending is the middleware of requests sent (by an import's client, or by
// dsh serve to its client): a CLIENT span per request, its trace context
// written to params._meta.
func (t *mcpTracing) sending(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if notification(method) {
			return next(ctx, method, req)
		}
		p := params(req)
		ctx, span, op := t.start(ctx, method, req, p, trace.SpanKindClient)
		if p != nil {
			meta := p.GetMeta()
			if meta == nil {
				meta = map[string]any{}
			}
			traceContext.Inject(ctx, metaCarrier(meta))
			p.SetMeta(meta)
		}
		res, err := next(ctx, method, req)
		t.end(ctx, span, op, t.clientDuration, res, err)
		return res, err
	}
}

// operation is what the duration of a request is recorded with.
type operation struct {
	start time.Time
	attrs []attribute.KeyValue // mcp.method.name and the tool or prompt name
}

// start starts the span of a request: named "{mcp.method.name} {target}",
// the target being the tool or the prompt.
func (t *mcpTracing) start(ctx context.Context, method string, req sdk.Request, p sdk.Params, kind trace.SpanKind) (context.Context, trace.Span, operation) {
	op := operation{start: time.Now(), attrs: []attribute.KeyValue{attrMethod.String(method)}}
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs, attrMethod.String(method))
	if s := req.GetSession(); s != nil && !reflect.ValueOf(s).IsNil() {
		if id := s.ID(); id != "" {
			attrs = append(attrs, attrSession.String(id))
		}
	}
	if t.server != "" {
		attrs = append(attrs, attrMCPServer.String(t.server))
	}
	name := method
	switch p := p.(type) {
	case *sdk.CallToolParams:
		name += " " + p.Name
		attrs = append(attrs, attrToolName.String(p.Name), attrOperation.String(executeOperation))
		op.attrs = append(op.attrs, attrToolName.String(p.Name))
	case *sdk.CallToolParamsRaw:
		name += " " + p.Name
		attrs = append(attrs, attrToolName.String(p.Name), attrOperation.String(executeOperation))
		op.attrs = append(op.attrs, attrToolName.String(p.Name))
	case *sdk.GetPromptParams:
		name += " " + p.Name
		attrs = append(attrs, attrPromptName.String(p.Name))
		op.attrs = append(op.attrs, attrPromptName.String(p.Name))
	case *sdk.ReadResourceParams:
		attrs = append(attrs, attrResourceURI.String(p.URI))
	case *sdk.SubscribeParams:
		attrs = append(attrs, attrResourceURI.String(p.URI))
	case *sdk.UnsubscribeParams:
		attrs = append(attrs, attrResourceURI.String(p.URI))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
	return ctx, span, op
}

// end ends span with the request's outcome and records its duration in
// hist: a JSON-RPC error sets error.type and rpc.response.status_code to
// its code, any other error error.type _OTHER, and a tools/call result with
// isError error.type tool_error.
func (t *mcpTracing) end(ctx context.Context, span trace.Span, op operation, hist metric.Float64Histogram, res sdk.Result, err error) {
	errorType := ""
	switch {
	case err != nil:
		errorType = otherErrorType
		var werr *jsonrpc.Error
		if errors.As(err, &werr) {
			errorType = strconv.FormatInt(werr.Code, 10)
			span.SetAttributes(attrStatusCode.String(errorType))
		}
		span.SetStatus(codes.Error, err.Error())
	default:
		if r, ok := res.(*sdk.CallToolResult); ok && r != nil && r.IsError {
			errorType = toolErrorType
			span.SetStatus(codes.Error, toolErrorType)
		}
	}
	if errorType != "" {
		span.SetAttributes(attrErrorType.String(errorType))
		op.attrs = append(op.attrs, attrErrorType.String(errorType))
	}
	span.End()
	hist.Record(ctx, time.Since(op.start).Seconds(), metric.WithAttributes(op.attrs...))
}
