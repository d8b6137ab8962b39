package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// newTestTracing returns a TracerProvider whose spans end up, as they end,
// in the returned exporter.
func newTestTracing(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

// metaServer is an upstream server with one tool, echo, that hands the
// params._meta of each call to seen.
func metaServer(seen chan<- map[string]any) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			seen <- maps.Clone(req.Params.Meta)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil
		})
	return srv
}

// spanNamed returns the one span named name, failing the test otherwise.
func spanNamed(t *testing.T, spans tracetest.SpanStubs, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("%d spans named %q among %q", len(found), name, names)
	}
	return found[0]
}

// attrs returns a span's attributes as strings.
func attrs(s tracetest.SpanStub) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// descends reports whether span descends from ancestor among spans.
func descends(spans tracetest.SpanStubs, span, ancestor tracetest.SpanStub) bool {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, s := range spans {
		byID[s.SpanContext.SpanID()] = s
	}
	for s := span; s.Parent.IsValid(); {
		if s.Parent.SpanID() == ancestor.SpanContext.SpanID() {
			return true
		}
		next, ok := byID[s.Parent.SpanID()]
		if !ok {
			return false
		}
		s = next
	}
	return false
}

func TestOneTraceRunsFromTheClientThroughDshToTheImportedServer(t *testing.T) {
	ctx := context.Background()
	tp, exp := newTestTracing(t)
	seen := make(chan map[string]any, 1)
	mem := newImpMemServer(metaServer(seen))
	svc := engine.New()
	client, diags := mcp.Connect(ctx, svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1, TracerProvider: tp})
	defer client.Close()
	defer mem.closeAll()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	srv, err := mcp.NewServer(ctx, svc, mcp.ServerOptions{Agent: engine.NewAgent("main", nil), TracerProvider: tp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	cs := (&fixture{srv: srv}).connect(t, legacy, nil)

	// The outside client is the agent: its span's context goes in _meta.
	agentCtx, agent := tp.Tracer("test").Start(ctx, "agent")
	meta := map[string]any{"app": "kept"}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(agentCtx, carrier)
	for k, v := range carrier {
		meta[k] = v
	}
	p := &sdk.CallToolParams{Name: "up__echo", Arguments: json.RawMessage(`{}`)}
	p.SetMeta(meta)
	res, err := cs.CallTool(ctx, p)
	agent.End()
	if err != nil {
		t.Fatal(err)
	}
	if got := text(res); res.IsError || got != "pong" {
		t.Fatalf("result %q (isError %v)", got, res.IsError)
	}
	upMeta := <-seen
	spans := exp.GetSpans()
	root := spanNamed(t, spans, "agent")
	served := spanNamed(t, spans, "tools/call up__echo")
	imported := spanNamed(t, spans, "tools/call echo")

	t.Run("dsh serve's server span is the child of the client's span in _meta", func(t *testing.T) {
		if served.SpanKind != trace.SpanKindServer {
			t.Errorf("kind %v, want server", served.SpanKind)
		}
		if served.Parent.SpanID() != root.SpanContext.SpanID() || served.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("parent %v in trace %v, want the agent's span %v in %v", served.Parent.SpanID(), served.SpanContext.TraceID(), root.SpanContext.SpanID(), root.SpanContext.TraceID())
		}
		want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "up__echo", "gen_ai.operation.name": "execute_tool"}
		for k, v := range want {
			if got := attrs(served)[k]; got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})
	t.Run("the import's client span runs below the server span, in the same trace", func(t *testing.T) {
		if imported.SpanKind != trace.SpanKindClient {
			t.Errorf("kind %v, want client", imported.SpanKind)
		}
		if !descends(spans, imported, served) {
			t.Errorf("the client span (parent %v) does not descend from the server span %v", imported.Parent.SpanID(), served.SpanContext.SpanID())
		}
		want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "dsh.mcp.server": "up"}
		for k, v := range want {
			if got := attrs(imported)[k]; got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})
	t.Run("the imported server gets the client span's traceparent in _meta", func(t *testing.T) {
		want := fmt.Sprintf("00-%s-%s-01", imported.SpanContext.TraceID(), imported.SpanContext.SpanID())
		if got := upMeta["traceparent"]; got != want {
			t.Errorf("traceparent %v, want %s (all of _meta: %v)", got, want, upMeta)
		}
	})
}

func TestWithoutATracerProviderMetaIsLeftAlone(t *testing.T) {
	ctx := context.Background()
	seen := make(chan map[string]any, 1)
	mem := newImpMemServer(metaServer(seen))
	svc := engine.New()
	client, diags := mcp.Connect(ctx, svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}}, mcp.Options{Dial: mem.dial, MinBackoff: 1})
	defer client.Close()
	defer mem.closeAll()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if r := impCall(svc, ctx, "up__echo", map[string]any{}); r.IsError {
		t.Fatalf("call failed: %v", r.Error)
	}
	if got := <-seen; got["traceparent"] != nil || got["tracestate"] != nil {
		t.Errorf("_meta %v carries trace context with tracing off", got)
	}
}

func TestAFailedServedCallMarksItsSpan(t *testing.T) {
	tp, exp := newTestTracing(t)
	f := newFixtureWith(t, mcp.ServerOptions{TracerProvider: tp})
	cs := f.connect(t, legacy, nil)
	if res := call(t, cs, "broken", ""); !res.IsError {
		t.Fatalf("broken succeeded: %q", text(res))
	}
	if res := call(t, cs, "shout", `{"text":"hi"}`); res.IsError {
		t.Fatalf("shout failed: %q", text(res))
	}
	spans := exp.GetSpans()
	tests := []struct {
		name, span string
		status     codes.Code
		errorType  string
	}{
		{"a tool result with isError sets error.type tool_error", "tools/call broken", codes.Error, "tool_error"},
		{"a successful call has no error.type", "tools/call shout", codes.Unset, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spanNamed(t, spans, tt.span)
			if s.Status.Code != tt.status {
				t.Errorf("status %v, want %v", s.Status.Code, tt.status)
			}
			if got := attrs(s)["error.type"]; got != tt.errorType {
				t.Errorf("error.type %q, want %q", got, tt.errorType)
			}
		})
	}
	t.Run("requests other than calls have spans named by their method", func(t *testing.T) {
		s := spanNamed(t, spans, "initialize")
		if got := attrs(s)["mcp.method.name"]; got != "initialize" {
			t.Errorf("mcp.method.name %q", got)
		}
	})
}

func TestServedRequestsRecordTheirDuration(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	f := newFixtureWith(t, mcp.ServerOptions{MeterProvider: mp})
	cs := f.connect(t, legacy, nil)
	call(t, cs, "broken", "")
	call(t, cs, "shout", `{"text":"hi"}`)
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{} // "tool error.type" → count
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "mcp.server.operation.duration" {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("unit %q, want s", m.Unit)
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				tool, _ := dp.Attributes.Value("gen_ai.tool.name")
				kind, _ := dp.Attributes.Value("error.type")
				method, _ := dp.Attributes.Value("mcp.method.name")
				if method.AsString() == "tools/call" {
					counts[tool.AsString()+" "+kind.AsString()] += dp.Count
				}
			}
		}
	}
	want := map[string]uint64{"broken tool_error": 1, "shout ": 1}
	if !maps.Equal(counts, want) {
		t.Errorf("tools/call durations by tool and error.type %v, want %v", counts, want)
	}
}
