package engine_test

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/engine"
)

// traced is an engine recording into an in-memory span recorder and a
// manual metric reader.
type traced struct {
	svc    *engine.Service
	tp     *sdktrace.TracerProvider
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTraced(t *testing.T, opts ...engine.Option) *traced {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts = append([]engine.Option{engine.WithTracerProvider(tp), engine.WithMeterProvider(mp)}, opts...)
	return &traced{svc: engine.New(opts...), tp: tp, spans: rec, reader: reader}
}

// named returns the ended spans called name, in the order they ended.
func (tr *traced) named(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tr.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// one returns the only ended span called name.
func (tr *traced) one(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	got := tr.named(name)
	if len(got) != 1 {
		var names []string
		for _, s := range tr.spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("want one span %q, got %d among %q", name, len(got), names)
	}
	return got[0]
}

// attrs returns a span's attributes as strings by key.
func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// wantAttrs checks that s has every attribute of want ("" : absent).
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		g, ok := got[k]
		switch {
		case v == "" && ok:
			t.Errorf("span %q: attribute %s = %q, want it absent", s.Name(), k, g)
		case v != "" && g != v:
			t.Errorf("span %q: attribute %s = %q, want %q (all: %v)", s.Name(), k, g, v, got)
		}
	}
}

// metrics collects the reader's metrics by name.
func (tr *traced) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tr.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != engine.InstrumentationName {
			t.Errorf("metric scope %q, want %q", sm.Scope.Name, engine.InstrumentationName)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// durationCount returns how many calls the duration histogram counted with
// exactly the attributes want.
func (tr *traced) durationCount(t *testing.T, want ...attribute.KeyValue) uint64 {
	t.Helper()
	h, ok := tr.metrics(t)["gen_ai.execute_tool.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatal("no gen_ai.execute_tool.duration histogram")
	}
	set := attribute.NewSet(want...)
	for _, dp := range h.DataPoints {
		if dp.Attributes.Equals(&set) {
			return dp.Count
		}
	}
	return 0
}

// decisions returns the decisions counter's points as "plugin stage decision" → count.
func (tr *traced) decisions(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	sum, ok := tr.metrics(t)["dsh.policy.decisions"].(metricdata.Sum[int64])
	if !ok {
		return out
	}
	for _, dp := range sum.DataPoints {
		p, _ := dp.Attributes.Value("dsh.plugin")
		s, _ := dp.Attributes.Value("dsh.policy.stage")
		d, _ := dp.Attributes.Value("dsh.policy.decision")
		out[p.AsString()+" "+s.AsString()+" "+d.AsString()] = dp.Value
	}
	return out
}

func TestTracing(t *testing.T) {
	t.Run("a model-direct call is one execute_tool span with the conventions' attributes", func(t *testing.T) {
		tr := newTraced(t)
		cfMustRegister(t, tr.svc.Global(), cfEchoDef("echo"))
		r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "hi")})
		if r.IsError {
			t.Fatal(r.Error.Message)
		}
		if n := len(tr.spans.Ended()); n != 1 {
			t.Fatalf("%d spans, want 1 (no policy ran)", n)
		}
		s := tr.one(t, "execute_tool echo")
		if s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("kind %v, want internal", s.SpanKind())
		}
		if s.Parent().IsValid() {
			t.Errorf("a call under a context without a span has parent %v", s.Parent())
		}
		wantAttrs(t, s, map[string]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "echo", "gen_ai.tool.call.id": "c1",
			"gen_ai.tool.type": "function", "dsh.outcome": "success", "dsh.depth": "1",
			"error.type": "", "dsh.error.code": "", "gen_ai.tool.call.arguments": "", "gen_ai.tool.call.result": "",
		})
		if s.Status().Code != codes.Unset {
			t.Errorf("status %v, want unset", s.Status())
		}
		if got := tr.durationCount(t, attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "echo"), attribute.String("dsh.outcome", "success")); got != 1 {
			t.Errorf("duration histogram counted %d successful echo calls, want 1", got)
		}
		// The duration point's exemplar is the call's trace.
		h := tr.metrics(t)["gen_ai.execute_tool.duration"].(metricdata.Histogram[float64])
		tid := s.SpanContext().TraceID()
		if len(h.DataPoints) != 1 || len(h.DataPoints[0].Exemplars) != 1 || string(h.DataPoints[0].Exemplars[0].TraceID) != string(tid[:]) {
			t.Errorf("duration points %+v, want one whose exemplar is in trace %v", h.DataPoints, tid)
		}
	})

	t.Run("a nested call's span is a child of its caller's, which is a child of the context's span", func(t *testing.T) {
		tr := newTraced(t)
		cfMustRegister(t, tr.svc.Global(), cfEchoDef("inner"))
		cfMustRegister(t, tr.svc.Global(), cfTool("outer", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			return "", failureOf(nestedCall(ctx, tr.svc, run.Execution, "inner", cfObj("text", "x")))
		}))
		ctx, root := tr.tp.Tracer("test").Start(context.Background(), "agent turn")
		r := tr.svc.Call(ctx, engine.Input{CallID: "c1", Name: "outer", Arguments: cfObj()})
		root.End()
		if r.IsError {
			t.Fatal(r.Error.Message)
		}
		outer, inner := tr.one(t, "execute_tool outer"), tr.one(t, "execute_tool inner")
		if outer.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("outer's parent %v, want the turn's span %v", outer.Parent().SpanID(), root.SpanContext().SpanID())
		}
		if inner.Parent().SpanID() != outer.SpanContext().SpanID() {
			t.Errorf("inner's parent %v, want outer's span %v", inner.Parent().SpanID(), outer.SpanContext().SpanID())
		}
		if inner.SpanContext().TraceID() != root.SpanContext().TraceID() {
			t.Error("the nested call's span is in another trace")
		}
		wantAttrs(t, inner, map[string]string{"gen_ai.tool.call.id": "c1.n", "dsh.root_call.id": "c1", "dsh.depth": "2"})
	})

	t.Run("a denied call shows which policy denied it", func(t *testing.T) {
		tr := newTraced(t)
		g := tr.svc.Global()
		cfMustRegister(t, g, cfEchoDef("rm"))
		g.OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			return next()
		}, engine.Source("audit.ts"))
		g.OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			return engine.Deny("rm is not allowed"), nil
		}, engine.Source("no-rm.lua"))
		r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "rm", Arguments: cfObj()})
		if !r.IsError || r.Error.Message != "rm is not allowed" {
			t.Fatalf("result %+v, want the denial", r.Error)
		}
		stages := tr.named("dsh.policy pre-execute")
		if len(stages) != 2 {
			t.Fatalf("%d pre-execute spans, want 2", len(stages))
		}
		// The inner listener ends first.
		wantAttrs(t, stages[0], map[string]string{"dsh.plugin": "no-rm.lua", "dsh.policy.stage": "pre-execute",
			"dsh.policy.decision": "deny", "dsh.policy.delegated": ""})
		wantAttrs(t, stages[1], map[string]string{"dsh.plugin": "audit.ts", "dsh.policy.decision": "deny",
			"dsh.policy.delegated": "true"})
		call := tr.one(t, "execute_tool rm")
		for _, s := range stages {
			if s.Parent().SpanID() != call.SpanContext().SpanID() {
				t.Errorf("stage span of %s is not the call's child", attrs(s)["dsh.plugin"])
			}
		}
		wantAttrs(t, call, map[string]string{"dsh.outcome": "denied", "error.type": "denied", "dsh.error.code": ""})
		if call.Status().Code != codes.Error {
			t.Errorf("status %v, want error", call.Status())
		}
		if len(tr.named("dsh.policy guard")) != 0 {
			t.Error("a guard span for a call denied before the guards")
		}
		want := map[string]int64{"no-rm.lua pre-execute deny": 1}
		if got := tr.decisions(t); !equalCounts(got, want) {
			t.Errorf("decisions %v, want %v (a delegated decision is not the plugin's own)", got, want)
		}
	})

	t.Run("every policy stage that ran is a child span with its decision", func(t *testing.T) {
		tr := newTraced(t)
		g := tr.svc.Global()
		def := cfEchoDef("echo")
		def.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) { return nil, nil }
		cfMustRegister(t, g, def)
		g.Guard(func(context.Context, *engine.Execution) (string, error) { return "", nil }, engine.Source("guard.ts"))
		g.OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			return next(ctx), nil
		}, engine.Source("timing.ts"))
		g.OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			return engine.AcceptContent([]engine.Block{engine.Text("[redacted]")}), nil
		}, engine.Source("redact.lua"))
		r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "secret")})
		if r.IsError {
			t.Fatal(r.Error.Message)
		}
		for _, tt := range []struct{ name, plugin, decision string }{
			{"dsh.policy guard", "guard.ts", "allow"},
			{"dsh.policy execute", "timing.ts", "allow"},
			{"dsh.policy post-execute", "redact.lua", "replace"},
			{"dsh.policy finalize", "", "keep"},
		} {
			wantAttrs(t, tr.one(t, tt.name), map[string]string{"dsh.plugin": tt.plugin, "dsh.policy.decision": tt.decision})
		}
		want := map[string]int64{
			"guard.ts guard allow": 1, "timing.ts execute allow": 1, "redact.lua post-execute replace": 1, " finalize keep": 1,
		}
		if got := tr.decisions(t); !equalCounts(got, want) {
			t.Errorf("decisions %v, want %v", got, want)
		}
	})

	t.Run("a guard's denial and a post-execute block are the deciding stages", func(t *testing.T) {
		tr := newTraced(t)
		g := tr.svc.Global()
		cfMustRegister(t, g, cfEchoDef("a"))
		g.Guard(func(_ context.Context, e *engine.Execution) (string, error) {
			if e.Name() == "a" {
				return "no a", nil
			}
			return "", nil
		}, engine.Source("deny-a.ts"))
		if r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "a", Arguments: cfObj()}); !r.IsError {
			t.Fatal("call a succeeded")
		}
		wantAttrs(t, tr.one(t, "dsh.policy guard"), map[string]string{"dsh.plugin": "deny-a.ts", "dsh.policy.decision": "deny"})
		wantAttrs(t, tr.one(t, "execute_tool a"), map[string]string{"dsh.outcome": "denied"})
		cfMustRegister(t, g, cfEchoDef("b"))
		g.OnPostExecute(func(_ context.Context, e *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			if e.Name() == "b" {
				return engine.BlockResult([]engine.Block{engine.Text("b's output is secret")}), nil
			}
			return next()
		}, engine.Source("block-b.lua"))
		if r := tr.svc.Call(context.Background(), engine.Input{CallID: "c2", Name: "b", Arguments: cfObj()}); !r.IsError || r.Error.Message != "b's output is secret" {
			t.Fatalf("call b: %+v, want the block", r.Error)
		}
		wantAttrs(t, tr.one(t, "dsh.policy post-execute"), map[string]string{"dsh.plugin": "block-b.lua", "dsh.policy.decision": "block"})
		wantAttrs(t, tr.one(t, "execute_tool b"), map[string]string{"dsh.outcome": "denied", "error.type": "denied"})
	})

	t.Run("a failing call carries its code as error.type and dsh.error.code", func(t *testing.T) {
		tr := newTraced(t)
		cfMustRegister(t, tr.svc.Global(), cfTool("boom", func(context.Context, any, *engine.Run) (any, error) {
			return nil, engine.NewError("DiskError", "DISK_FULL", "disk full")
		}))
		tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "boom", Arguments: cfObj()})
		tr.svc.Call(context.Background(), engine.Input{CallID: "c2", Name: "nosuch", Arguments: cfObj()})
		s := tr.one(t, "execute_tool boom")
		wantAttrs(t, s, map[string]string{"dsh.outcome": "error", "error.type": "DISK_FULL", "dsh.error.code": "DISK_FULL"})
		if s.Status().Code != codes.Error || s.Status().Description != "DISK_FULL" {
			t.Errorf("status %+v, want error DISK_FULL", s.Status())
		}
		wantAttrs(t, tr.one(t, "execute_tool nosuch"), map[string]string{"error.type": "UNKNOWN_TOOL", "gen_ai.tool.name": "nosuch"})
		if got := tr.durationCount(t, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "boom"),
			attribute.String("dsh.outcome", "error"), attribute.String("error.type", "DISK_FULL")); got != 1 {
			t.Errorf("duration histogram counted %d failed boom calls, want 1", got)
		}
		// An unknown tool's name is the model's choice: the metric does not take it.
		if got := tr.durationCount(t, attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "_OTHER"),
			attribute.String("dsh.outcome", "error"), attribute.String("error.type", "UNKNOWN_TOOL")); got != 1 {
			t.Errorf("duration histogram counted %d unknown-tool calls under _OTHER, want 1", got)
		}
	})

	t.Run("a policy that throws ends its stage span with decision error", func(t *testing.T) {
		tr := newTraced(t)
		g := tr.svc.Global()
		cfMustRegister(t, g, cfEchoDef("echo"))
		g.OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			panic("policy bug")
		}, engine.Source("buggy.ts"))
		if r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj()}); !r.IsError {
			t.Fatal("call succeeded")
		}
		s := tr.one(t, "dsh.policy pre-execute")
		wantAttrs(t, s, map[string]string{"dsh.plugin": "buggy.ts", "dsh.policy.decision": "error", "error.type": "_OTHER"})
		if s.Status().Code != codes.Error {
			t.Errorf("status %v, want error", s.Status())
		}
	})

	t.Run("an approval is a span with its outcome and wait", func(t *testing.T) {
		approve := engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			return engine.Rejected, nil
		})
		tr := newTraced(t, engine.WithApproval(approve))
		g := tr.svc.Global()
		cfMustRegister(t, g, cfEchoDef("deploy"))
		g.OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			return engine.Ask("deploys need a human"), nil
		}, engine.Source("ask.ts"))
		r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "deploy", Arguments: cfObj(), Agent: engine.NewAgent("a", nil)})
		if !r.IsError || r.Error.Message != `the user rejected tool "deploy"` {
			t.Fatalf("result %+v, want the rejection", r.Error)
		}
		s := tr.one(t, "dsh.approval")
		wantAttrs(t, s, map[string]string{"dsh.approval.outcome": "rejected"})
		if _, ok := attrs(s)["dsh.wait"]; !ok {
			t.Error("approval span without dsh.wait")
		}
		call := tr.one(t, "execute_tool deploy")
		if s.Parent().SpanID() != call.SpanContext().SpanID() {
			t.Error("the approval span is not the call's child")
		}
		wantAttrs(t, tr.one(t, "dsh.policy pre-execute"), map[string]string{"dsh.policy.decision": "ask"})
		wantAttrs(t, call, map[string]string{"dsh.outcome": "denied", "dsh.agent": "a"})
	})

	t.Run("an elicitation is a span under the call with the user's action", func(t *testing.T) {
		tr := newTraced(t)
		cfMustRegister(t, tr.svc.Global(), cfTool("ask", func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			res, err := engine.Elicit(ctx, engine.Elicitation{Message: "sure?"})
			return res.Action, err
		}))
		ctx := engine.WithElicit(context.Background(), func(context.Context, engine.Elicitation) (engine.ElicitResult, error) {
			return engine.ElicitResult{Action: "decline"}, nil
		})
		if r := tr.svc.Call(ctx, engine.Input{CallID: "c1", Name: "ask", Arguments: cfObj()}); r.IsError {
			t.Fatal(r.Error.Message)
		}
		s := tr.one(t, "dsh.elicitation")
		wantAttrs(t, s, map[string]string{"dsh.elicitation.action": "decline", "dsh.elicitation.mode": "form"})
		if s.Parent().SpanID() != tr.one(t, "execute_tool ask").SpanContext().SpanID() {
			t.Error("the elicitation span is not the call's child")
		}
	})

	t.Run("with a meter provider only, calls and decisions are counted", func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		defer func() { _ = mp.Shutdown(context.Background()) }()
		tr := &traced{svc: engine.New(engine.WithMeterProvider(mp)), reader: reader}
		g := tr.svc.Global()
		cfMustRegister(t, g, cfEchoDef("echo"))
		g.Guard(func(context.Context, *engine.Execution) (string, error) { return "", nil }, engine.Source("g.ts"))
		ctx, root := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "turn")
		defer root.End()
		tr.svc.Call(ctx, engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj()})
		if got := tr.durationCount(t, attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", "echo"), attribute.String("dsh.outcome", "success")); got != 1 {
			t.Errorf("duration histogram counted %d calls, want 1", got)
		}
		if got, want := tr.decisions(t), map[string]int64{"g.ts guard allow": 1}; !equalCounts(got, want) {
			t.Errorf("decisions %v, want %v", got, want)
		}
	})

	t.Run("arguments and results are recorded only with content capture on, bounded", func(t *testing.T) {
		for _, capture := range []bool{false, true} {
			tr := newTraced(t, engine.WithContentCapture(capture))
			cfMustRegister(t, tr.svc.Global(), cfEchoDef("echo"))
			long := strings.Repeat("é", engine.MaxCapturedContent)
			tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "hi")})
			tr.svc.Call(context.Background(), engine.Input{CallID: "c2", Name: "echo", Arguments: cfObj("text", long)})
			spans := tr.named("execute_tool echo")
			if len(spans) != 2 {
				t.Fatalf("%d spans, want 2", len(spans))
			}
			short, big := attrs(spans[0]), attrs(spans[1])
			if !capture {
				wantAttrs(t, spans[0], map[string]string{"gen_ai.tool.call.arguments": "", "gen_ai.tool.call.result": ""})
				continue
			}
			if got := short["gen_ai.tool.call.arguments"]; got != `{"text":"hi"}` {
				t.Errorf("arguments %q", got)
			}
			if got := short["gen_ai.tool.call.result"]; !strings.Contains(got, `"value":"hi"`) {
				t.Errorf("result %q lacks the value", got)
			}
			for _, k := range []string{"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"} {
				v := big[k]
				if len(v) > engine.MaxCapturedContent+len("… (truncated)") || !strings.HasSuffix(v, "… (truncated)") {
					t.Errorf("%s: %d bytes, ends %q; want at most %d bytes and the cut marked", k, len(v), v[max(0, len(v)-20):], engine.MaxCapturedContent)
				}
			}
		}
	})
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
