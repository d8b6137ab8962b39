package js_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
)

// logRecorder is a slog.Handler keeping every record, with its "plugin"
// attribute, and signalling each on a channel.
type logRecorder struct {
	mu      *sync.Mutex
	records *[]logRecord
	ch      chan logRecord
	plugin  string
}

type logRecord struct {
	level   slog.Level
	msg     string
	plugin  string
	arrived time.Time
}

func newLogRecorder() *logRecorder {
	return &logRecorder{mu: &sync.Mutex{}, records: &[]logRecord{}, ch: make(chan logRecord, 1000)}
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, plugin: h.plugin, arrived: time.Now()}
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	select {
	case h.ch <- rec:
	default:
	}
	return nil
}

func (h *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	for _, a := range attrs {
		if a.Key == "plugin" {
			c.plugin = a.Value.String()
		}
	}
	return &c
}

func (h *logRecorder) WithGroup(string) slog.Handler { return h }

// waitFor returns the first record after now for which match holds.
func (h *logRecorder) waitFor(t *testing.T, within time.Duration, match func(logRecord) bool) logRecord {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case rec := <-h.ch:
			if match(rec) {
				return rec
			}
		case <-timeout:
			t.Fatalf("no such log record within %v; got %v", within, h.all())
			return logRecord{}
		}
	}
}

func (h *logRecorder) all() []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logRecord(nil), *h.records...)
}

// leaverTool is a plugin with the tool "leave": called with {"leave": true},
// its body leaves leave behind, armed once the call's last script code (its
// renderer) has run; otherwise it answers "fresh".
func leaverTool(leave string) string {
	src := `const spin = (ms) => { const end = Date.now() + ms; while (Date.now() < end) {} };
` + tool("leave", `{type: "string"}`, `if (args.leave) {
    globalThis.armed = false;
    (async () => {
      while (!globalThis.armed) { await new Promise((resolve) => setTimeout(resolve, 1)) }
      `+leave+`
    })();
    return "left";
  }
  return "fresh";`)
	src = strings.Replace(src, "parameters: {}", `parameters: { leave: { type: "boolean" } }`, 1)
	return strings.Replace(src, `render: (a, v) => [{ type: "text", text: JSON.stringify(v) }]`,
		`render: (a, v) => { if (v === "left") globalThis.armed = true; return [{ type: "text", text: v }] }`, 1)
}

func TestWorkACallLeavesBehindIsInterruptedAndTheInstanceReplaced(t *testing.T) {
	const grace = 20 * time.Millisecond // load's
	const want = "instance interrupted: eventloop: background work left by a finished call ran past its budget (250ms)"
	for _, tc := range []struct{ name, leave string }{
		{"an unawaited async loop", `for (;;) { await null }`},
		{"a microtask flood", `(function f() { queueMicrotask(f) })();`},
		{"a spinning interval", `setTimeout(function tick() { spin(50); setTimeout(tick, 0) }, 0);`},
		{"a setTimeout chain re-arming itself", `(function tick() { setTimeout(tick, 0) })();`},
		{"a timer callback busy for 2s", `setTimeout(() => spin(2000), 0);`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newLogRecorder()
			e := load(t, map[string]string{"leaver.js": leaverTool(tc.leave)}, func(h *js.Host, _ *engine.Service) {
				h.Logger = slog.New(rec)
			})
			if got := e.call(t, "leave", args(t, `{"leave":true}`)); got != `{"isError":false,"value":"left","content":[{"type":"text","text":"left"}]}` {
				t.Fatalf("the call that leaves the work: %s", got)
			}
			returned := time.Now()
			r := rec.waitFor(t, 5*time.Second, func(r logRecord) bool { return strings.HasPrefix(r.msg, "instance interrupted") })
			if r.msg != want || r.level != slog.LevelInfo || r.plugin != "leaver.js" {
				t.Errorf("logged %v %q for %q", r.level, r.msg, r.plugin)
			}
			if d := r.arrived.Sub(returned); d > eventloop.DefaultOrphanBudget+grace+time.Second {
				t.Errorf("interrupted %v after the call returned", d)
			}
			if got := e.call(t, "leave", nil); got != `{"isError":false,"value":"fresh","content":[{"type":"text","text":"fresh"}]}` {
				t.Errorf("the next call: %s", got)
			}
			for _, r := range rec.all() {
				if r.level >= slog.LevelWarn && strings.HasPrefix(r.msg, "uncaught script error") {
					t.Errorf("logged %v %q", r.level, r.msg)
				}
			}
		})
	}
}

func TestAShortBackgroundTimerDoesNotBreakTheInstance(t *testing.T) {
	rec := newLogRecorder()
	src := `globalThis.flushed = 0;
` + tool("debounced", `{type: "number"}`, `setTimeout(() => { flushed++ }, 10); await new Promise((resolve) => setTimeout(resolve, 20)); return flushed;`)
	e := load(t, map[string]string{"debounced.js": src}, func(h *js.Host, _ *engine.Service) { h.Logger = slog.New(rec) })
	for n := 1; n <= 20; n++ {
		// Each call's timer fires within it; the count shows the instance lived on.
		if got := e.call(t, "debounced", nil); !strings.Contains(got, `"value":`+strconv.Itoa(n)+",") {
			t.Fatalf("call %d: %s", n, got)
		}
	}
	for _, r := range rec.all() {
		if strings.Contains(r.msg, "interrupted") {
			t.Errorf("logged %v %q", r.level, r.msg)
		}
	}
}

func TestABusyPluginDoesNotFailOrInterruptAnUnrelatedOne(t *testing.T) {
	rec := newLogRecorder()
	e := load(t, map[string]string{
		"leaver.js": leaverTool(`setTimeout(() => spin(2000), 0);`),
		"calm.js":   tool("calm", `{type: "string"}`, `await new Promise((resolve) => setTimeout(resolve, 1)); return "calm"`),
	}, func(h *js.Host, _ *engine.Service) { h.Logger = slog.New(rec) })
	if got := e.call(t, "leave", args(t, `{"leave":true}`)); !strings.Contains(got, `"value":"left"`) {
		t.Fatalf("the call that leaves the work: %s", got)
	}
	// Call the unrelated plugin all the while the busy one spins, until it is
	// interrupted.
	interrupted := func() bool {
		for _, r := range rec.all() {
			if strings.HasPrefix(r.msg, "instance interrupted") {
				return true
			}
		}
		return false
	}
	start, n := time.Now(), 0
	for ; n < 20 || !interrupted(); n++ {
		if got := e.call(t, "calm", nil); got != `{"isError":false,"value":"calm","content":[{"type":"text","text":"\"calm\""}]}` {
			t.Fatalf("call %d to the unrelated plugin: %s", n, got)
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the busy plugin was not interrupted within 5s")
		}
	}
	t.Logf("%d calls to the unrelated plugin served while the busy one spun", n)
	for _, r := range rec.all() {
		if r.plugin == "calm.js" {
			t.Errorf("the unrelated plugin logged %v %q", r.level, r.msg)
		}
	}
}
