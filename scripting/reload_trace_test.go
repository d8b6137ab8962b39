package scripting_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	"github.com/dsh-go/dsh/scripting"
)

// tracedRig is a rig whose Service traces into a span recorder and meters
// into a manual reader.
type tracedRig struct {
	*rig
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
}

func newTracedRig(t *testing.T, files map[string]string) *tracedRig {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	g := newRigWith(t, files, 0, engine.WithTracerProvider(tp), engine.WithMeterProvider(mp))
	return &tracedRig{rig: g, spans: rec, reader: reader}
}

// reloadEvent is one dsh.reload span as the tests look at it: its span
// event's attributes, and what the span itself says.
type reloadEvent struct {
	attrs map[string]string
	span  sdktrace.ReadOnlySpan
}

// reloads returns the dsh.reload spans ended so far, in the order they
// ended, checking the shape every one of them has: a root span of kind
// INTERNAL, with one dsh.plugin.reload event.
func (g *tracedRig) reloads() []reloadEvent {
	g.t.Helper()
	var out []reloadEvent
	for _, s := range g.spans.Ended() {
		if s.Name() != "dsh.reload" {
			continue
		}
		if s.Parent().IsValid() || s.SpanKind() != trace.SpanKindInternal {
			g.t.Errorf("reload span with parent %v and kind %v, want a root span of kind INTERNAL", s.Parent(), s.SpanKind())
		}
		if s.InstrumentationScope().Name != scripting.InstrumentationName {
			g.t.Errorf("reload span of scope %q", s.InstrumentationScope().Name)
		}
		evs := s.Events()
		if len(evs) != 1 || evs[0].Name != "dsh.plugin.reload" {
			g.t.Fatalf("reload span events %v, want one dsh.plugin.reload", evs)
		}
		out = append(out, reloadEvent{attrs: attrMap(evs[0].Attributes), span: s})
	}
	return out
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// counts returns dsh.reload.count's points as "plugin outcome" → value.
func (g *tracedRig) counts() map[string]int64 {
	g.t.Helper()
	var rm metricdata.ResourceMetrics
	if err := g.reader.Collect(context.Background(), &rm); err != nil {
		g.t.Fatal(err)
	}
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "dsh.reload.count" {
				continue
			}
			if sm.Scope.Name != scripting.InstrumentationName || m.Unit != "{reload}" {
				g.t.Errorf("dsh.reload.count of scope %q and unit %q", sm.Scope.Name, m.Unit)
			}
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !sum.IsMonotonic {
				g.t.Fatalf("dsh.reload.count is %T, want a counter", m.Data)
			}
			for _, p := range sum.DataPoints {
				if p.Attributes.Len() != 2 {
					g.t.Errorf("dsh.reload.count point attributes %v, want dsh.plugin and dsh.reload.outcome", p.Attributes.ToSlice())
				}
				plugin, _ := p.Attributes.Value("dsh.plugin")
				outcome, _ := p.Attributes.Value("dsh.reload.outcome")
				out[plugin.AsString()+" "+outcome.AsString()] = p.Value
			}
		}
	}
	return out
}

// reloadCase is one language's plugin versions: two good ones, one that
// does not compile, and the exact diagnostic that one gives.
type reloadCase struct {
	ext               string
	good1, good2, bad string
	call              string // the tool the versions register
	badDiag           string // the broken version's diagnostic
}

var reloadCases = []reloadCase{
	{
		ext: ".js", call: "a",
		good1: jsTool("a", `"A1"`, ""), good2: jsTool("a", `"A2"`, ""),
		bad:     "const x = {;\n" + jsTool("a", `"A3"`, ""),
		badDiag: `p.js:1:12: Expected identifier but found ";"`,
	},
	{
		ext: ".lua", call: "a",
		good1: luaTool("a", `"A1"`, ""), good2: luaTool("a", `"A2"`, ""),
		bad:     "local x = {;\n" + luaTool("a", `"A3"`, ""),
		badDiag: "p.lua:1:12: syntax error near ';'",
	},
}

func TestEveryReloadIsARootSpanWithOneEventAndACount(t *testing.T) {
	for _, tc := range reloadCases {
		t.Run("in "+tc.ext+", a load, an edit, a broken edit that keeps the last good version, the file back to it and a removal each record their plugin, revision and outcome", func(t *testing.T) {
			p := "p" + tc.ext
			g := newTracedRig(t, map[string]string{p: tc.good1})
			g.save(p, tc.good2)
			g.waitFor("loaded "+p, "reloaded "+p)
			g.save(p, tc.bad)
			g.waitFor("reloaded "+p, "failed "+p+": "+tc.badDiag)
			if got := g.call(tc.call); got != "A2" {
				t.Errorf("after the broken edit the tool gives %q, want the last good version's A2", got)
			}
			g.save(p, tc.good2)
			g.waitFor("failed "+p+": "+tc.badDiag, "restored "+p)
			g.remove(p)
			g.waitFor("restored "+p, "unloaded "+p)

			want := []map[string]string{
				{"dsh.plugin": p, "dsh.reload.outcome": "loaded", "dsh.plugin.revision": sha(tc.good1)},
				{"dsh.plugin": p, "dsh.reload.outcome": "reloaded", "dsh.plugin.revision": sha(tc.good2), "dsh.plugin.previous_revision": sha(tc.good1)},
				{"dsh.plugin": p, "dsh.reload.outcome": "failed", "dsh.plugin.revision": sha(tc.good2), "dsh.reload.failed_revision": sha(tc.bad),
					"error.type": "load", "dsh.reload.error": tc.badDiag},
				{"dsh.plugin": p, "dsh.reload.outcome": "restored", "dsh.plugin.revision": sha(tc.good2)},
				{"dsh.plugin": p, "dsh.reload.outcome": "unloaded", "dsh.plugin.previous_revision": sha(tc.good2)},
			}
			got := g.reloads()
			if len(got) != len(want) {
				t.Fatalf("%d reload spans, want %d: %v", len(got), len(want), got)
			}
			traces := map[trace.TraceID]bool{}
			for i, r := range got {
				if !maps.Equal(r.attrs, want[i]) {
					t.Errorf("reload %d event attributes\n got %v\nwant %v", i, r.attrs, want[i])
				}
				traces[r.span.SpanContext().TraceID()] = true
				spanWant := map[string]string{"dsh.plugin": p, "dsh.reload.outcome": want[i]["dsh.reload.outcome"]}
				status := codes.Unset
				if et, ok := want[i]["error.type"]; ok {
					spanWant["error.type"] = et
					status = codes.Error
				}
				if a := attrMap(r.span.Attributes()); !maps.Equal(a, spanWant) {
					t.Errorf("reload %d span attributes %v, want %v", i, a, spanWant)
				}
				if s := r.span.Status(); s.Code != status || (status == codes.Error && s.Description != "load") {
					t.Errorf("reload %d span status %+v, want %v", i, s, status)
				}
				if r.span.EndTime().Before(r.span.StartTime()) || !r.span.Events()[0].Time.Equal(r.span.EndTime()) {
					t.Errorf("reload %d span runs %v to %v, its event at %v", i, r.span.StartTime(), r.span.EndTime(), r.span.Events()[0].Time)
				}
			}
			if len(traces) != len(got) {
				t.Errorf("%d reloads in %d traces, want a trace each", len(got), len(traces))
			}
			wantCounts := map[string]int64{p + " loaded": 1, p + " reloaded": 1, p + " failed": 1, p + " restored": 1, p + " unloaded": 1}
			if c := g.counts(); !maps.Equal(c, wantCounts) {
				t.Errorf("dsh.reload.count %v, want %v", c, wantCounts)
			}
		})
	}
}

func TestAFailedReloadSaysWhyInBoundedWords(t *testing.T) {
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name    string
		files   map[string]string
		file    string
		errType string
		message string
	}{
		{
			name:  "a JavaScript top level that throws a multi-line message records its first line",
			files: map[string]string{"t.js": jsTool("t", `"T"`, "throw new Error(\"first line\\nsecond line\");\n")},
			file:  "t.js", errType: "load", message: "t.js:1:7: first line",
		},
		{
			name:  "a Lua top level that errors with a multi-line message records its first line",
			files: map[string]string{"t.lua": "error(\"first line\\nsecond line\")\n"},
			file:  "t.lua", errType: "load", message: "t.lua:1: first line",
		},
		{
			name:  "a message over 256 bytes is cut to 256 bytes, marked",
			files: map[string]string{"t.js": jsTool("t", `"T"`, "throw new Error(\""+long+"\");\n")},
			file:  "t.js", errType: "load", message: ("t.js:1:7: " + long)[:256-len("…")] + "…",
		},
		{
			name:  "a plugin whose tool another plugin registered first failed at its commit: a conflict",
			files: map[string]string{"a.js": jsTool("dup", `"A"`, ""), "b.lua": luaTool("dup", `"B"`, "")},
			file:  "b.lua", errType: "conflict",
			message: `b.lua:3: tool "dup" is already registered (for a per-agent variant, register through that agent's scope, ` + "`tools.scope(id)`" + `, instead)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newTracedRig(t, tt.files)
			var failed []map[string]string
			for _, r := range g.reloads() {
				if r.attrs["dsh.reload.outcome"] == "failed" {
					failed = append(failed, r.attrs)
				}
			}
			if len(failed) != 1 {
				t.Fatalf("failed reloads %v, want one", failed)
			}
			f := failed[0]
			if f["dsh.plugin"] != tt.file || f["error.type"] != tt.errType || f["dsh.reload.error"] != tt.message {
				t.Errorf("failure\n got %s %s %q\nwant %s %s %q", f["dsh.plugin"], f["error.type"], f["dsh.reload.error"], tt.file, tt.errType, tt.message)
			}
			if n := len(f["dsh.reload.error"]); n > 256 {
				t.Errorf("dsh.reload.error is %d bytes", n)
			}
			if _, serving := f["dsh.plugin.revision"]; serving {
				t.Errorf("a plugin that never loaded has a serving revision: %v", f)
			}
		})
	}
}

// remove deletes a file of the rig's directory.
func (g *tracedRig) remove(rel string) {
	g.t.Helper()
	if err := os.Remove(filepath.Join(g.dir, filepath.FromSlash(rel))); err != nil {
		g.t.Fatal(err)
	}
}

func TestEitherProviderAloneRecordsItsPart(t *testing.T) {
	files := map[string]string{"a.js": jsTool("a", `"A1"`, ""), "b.lua": luaTool("b", `"B1"`, "")}
	t.Run("with only a tracer provider, each load is a span", func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		g := &tracedRig{rig: newRigWith(t, files, 0, engine.WithTracerProvider(tp)), spans: rec}
		var got []string
		for _, r := range g.reloads() {
			got = append(got, r.attrs["dsh.plugin"]+" "+r.attrs["dsh.reload.outcome"])
		}
		slices.Sort(got)
		if want := []string{"a.js loaded", "b.lua loaded"}; !slices.Equal(got, want) {
			t.Errorf("reload spans %q, want %q", got, want)
		}
	})
	t.Run("with only a meter provider, each load is counted", func(t *testing.T) {
		reader := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
		t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		g := &tracedRig{rig: newRigWith(t, files, 0, engine.WithMeterProvider(mp)), reader: reader}
		if got, want := g.counts(), map[string]int64{"a.js loaded": 1, "b.lua loaded": 1}; !maps.Equal(got, want) {
			t.Errorf("dsh.reload.count %v, want %v", got, want)
		}
	})
}
