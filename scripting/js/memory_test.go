package js_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

// The memory limit's cases both hosts share (a body or a top level that
// grows forever, and a call awaiting one) are in scripting/internal/hosttest.

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
	_, msg := hosttest.MemoryGuard(t, 96*scripting.MiB)
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
	for end := time.Now().Add(testtime.D(20 * time.Second)); seen.n.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the timer left behind was not stopped")
		}
	}
	if got := e.call(t, "leak", args(t, `{}`)); !strings.Contains(got, `"value":"ok 0"`) {
		t.Errorf("the next call is not served by a fresh instance: %s", got)
	}
	if live := hosttest.LiveHeapWithin(5*time.Second, guard.Limit()); live > guard.Limit() {
		t.Errorf("the live heap is %d MiB after the instance was stopped", live/scripting.MiB)
	}
}

// BenchmarkJSGreetMemoryGuard is BenchmarkJSGreet with a memory guard (whose
// limit is never reached): the cost of entering and leaving it, and of its
// sampler, on a call.
func BenchmarkJSGreetMemoryGuard(b *testing.B) {
	guard := scripting.NewMemoryGuard(1<<40, scripting.MemoryGuardOptions{})
	benchGreet(b, hosttest.Config{Memory: guard},
		map[string]string{"greet.js": greetPlugin(`execute(args) { return { greeting: "Hello, " + args.name + "!" }; },`)})
}
