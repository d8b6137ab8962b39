package js_test

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
)

// liveHeapWithin collects until the live heap is at most limit, for at most
// d, and returns the last live heap.
func liveHeapWithin(d time.Duration, limit int64) int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		metrics.Read(s)
		if live := int64(s[0].Value.Uint64()); live <= limit || time.Now().After(end) {
			return live
		}
	}
}

// memoryGuard returns a guard whose limit is extra above the live heap of
// the test process, in whole MiB, and the message of the calls it stops.
func memoryGuard(t *testing.T, extra int64) (*scripting.MemoryGuard, string) {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	limit := int64(s[0].Value.Uint64())/scripting.MiB*scripting.MiB + extra
	return scripting.NewMemoryGuard(limit, scripting.MemoryGuardOptions{}),
		fmt.Sprintf("script exceeded the memory limit (%d MiB)", limit/scripting.MiB)
}

// hogJS registers "hog": with {"grow": true} it grows a module-level array
// forever (by 1 MiB strings, so that it passes the limit fast even under the
// race detector), otherwise it answers "ok" with the array's length.
const hogJS = `const { defineTool, tools } = require("dsh");
const kept = [];
tools.register(defineTool({
  name: "hog",
  description: "test",
  parameters: { grow: { type: "boolean" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute(args) {
    if (args.grow) {
      const chunk = "x".repeat(1024 * 1024);
      for (;;) kept.push(chunk + kept.length);
    }
    return "ok " + kept.length;
  },
}));
`

// waiterJS's "waiter" awaits a call of hog that grows: while it awaits it
// runs no script code, so the guard must not stop it.
const waiterJS = `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "waiter",
  description: "test",
  parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    const r = await tools.call("hog", { grow: true }, exec);
    return "survived: " + r.error.message;
  },
}));
`

func TestAScriptPastTheMemoryLimitFailsItsCallAndTheNextCallIsServed(t *testing.T) {
	guard, msg := memoryGuard(t, 96*scripting.MiB)
	withGuard := func(h *js.Host, _ *engine.Service) { h.Memory = guard }

	t.Run("a body growing an array forever fails with the limit's message", func(t *testing.T) {
		e := load(t, map[string]string{"hog.js": hogJS}, withGuard)
		if len(e.diags) > 0 {
			t.Fatal(e.diagnostics())
		}
		start := time.Now()
		got := e.call(t, "hog", args(t, `{"grow":true}`))
		want := `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("the call took %v to fail", d)
		}
		if got := e.call(t, "hog", args(t, `{}`)); !strings.Contains(got, `"value":"ok 0"`) {
			t.Errorf("the next call is not served by a fresh instance: %s", got)
		}
		if live := liveHeapWithin(5*time.Second, guard.Limit()); live > guard.Limit() {
			t.Errorf("the live heap is %d MiB after the call failed: the script goes on, or its memory is held", live/scripting.MiB)
		}
	})
	t.Run("a call awaiting the one that passes the limit is not stopped", func(t *testing.T) {
		e := load(t, map[string]string{"hog.js": hogJS, "waiter.js": waiterJS}, withGuard)
		if len(e.diags) > 0 {
			t.Fatal(e.diagnostics())
		}
		got := e.call(t, "waiter", nil)
		want := `{"isError":false,"value":"survived: ` + msg + `","content":[{"type":"text","text":"survived: ` + msg + `"}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("a top level growing an array forever is a diagnostic and the process lives on", func(t *testing.T) {
		// Loaded alone: a plugin whose top level ran beside it, as the
		// loader runs them, would be stopped too (see MemoryGuard).
		e := load(t, map[string]string{"load.js": "const kept = [], chunk = \"x\".repeat(1024 * 1024); for (;;) kept.push(chunk + kept.length);\n"}, withGuard)
		if got := e.diagnostics(); len(got) != 1 || got[0] != "load.js: "+msg {
			t.Errorf("diagnostics %q, want [%q]", got, "load.js: "+msg)
		}
		e = load(t, map[string]string{"hog.js": hogJS}, withGuard)
		if got := e.call(t, "hog", args(t, `{}`)); !strings.Contains(got, `"value":"ok 0"`) {
			t.Errorf("a plugin loaded next does not serve: %s", got)
		}
	})
}

// leakJS's "leak" returns at once, leaving a timer that grows a
// module-level array by 8 MiB typed arrays forever (fast enough to reach the limit
// well before the budget of background work is spent).
const leakJS = `const { defineTool, tools } = require("dsh");
const kept = [];
tools.register(defineTool({
  name: "leak",
  description: "test",
  parameters: { grow: { type: "boolean" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute(args) {
    if (args.grow) {
      (function grow() { kept.push(new Uint8Array(8 << 20)); setTimeout(grow, 0); })();
    }
    return "ok " + kept.length;
  },
}));
`

// stops counts the guard's warnings that it stopped scripts.
type stops struct{ n atomic.Int64 }

func (s *stops) Enabled(context.Context, slog.Level) bool { return true }
func (s *stops) Handle(_ context.Context, r slog.Record) error {
	if strings.HasPrefix(r.Message, "scripts stopped: ") {
		s.n.Add(1)
	}
	return nil
}
func (s *stops) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *stops) WithGroup(string) slog.Handler      { return s }

func TestWorkACallLeavesBehindIsStoppedPastTheMemoryLimit(t *testing.T) {
	_, msg := memoryGuard(t, 96*scripting.MiB)
	var limit int64
	if _, err := fmt.Sscanf(msg, "script exceeded the memory limit (%d MiB)", &limit); err != nil {
		t.Fatal(err)
	}
	var seen stops
	guard := scripting.NewMemoryGuard(limit*scripting.MiB, scripting.MemoryGuardOptions{Logger: slog.New(&seen)})
	e := load(t, map[string]string{"leak.js": leakJS}, func(h *js.Host, _ *engine.Service) { h.Memory = guard })
	if got := e.call(t, "leak", args(t, `{"grow":true}`)); !strings.Contains(got, `"value":"ok 1"`) {
		t.Fatalf("the call did not return at once: %s", got)
	}
	for end := time.Now().Add(20 * time.Second); seen.n.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the timer left behind was not stopped")
		}
	}
	if got := e.call(t, "leak", args(t, `{}`)); !strings.Contains(got, `"value":"ok 0"`) {
		t.Errorf("the next call is not served by a fresh instance: %s", got)
	}
	if live := liveHeapWithin(5*time.Second, guard.Limit()); live > guard.Limit() {
		t.Errorf("the live heap is %d MiB after the instance was stopped", live/scripting.MiB)
	}
}

// BenchmarkJSGreetMemoryGuard is BenchmarkJSGreet with a memory guard (whose
// limit is never reached): the cost of entering and leaving it, and of its
// sampler, on a call.
func BenchmarkJSGreetMemoryGuard(b *testing.B) {
	guard := scripting.NewMemoryGuard(1<<40, scripting.MemoryGuardOptions{})
	e := load(b, map[string]string{"greet.js": greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)},
		func(h *js.Host, _ *engine.Service) { h.Memory = guard })
	benchCalls(b, e)
}

// benchCalls is benchGreet's loop on a loaded env.
func benchCalls(b *testing.B, e *env) {
	if len(e.diags) > 0 {
		b.Fatal(e.diagnostics())
	}
	in := engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})}
	ctx := context.Background()
	if r := e.svc.Call(ctx, in); r.IsError {
		b.Fatal(r.Error.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := e.svc.Call(ctx, in); r.IsError {
			b.Fatal(r.Error.Message)
		}
	}
}
