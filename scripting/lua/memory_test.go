package lua_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/lua"
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

// hogLua registers "hog": with {"grow": true} it grows a table forever (by
// 1 MiB strings, so that it passes the limit fast even under the race
// detector), otherwise it answers "ok" with the table's length.
const hogLua = `
local dsh = require("dsh")
local kept = {}
dsh.tools.register(dsh.define_tool {
  name = "hog", description = "", parameters = { grow = { type = "boolean" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args)
    if args.grow then
      local chunk = string.rep("x", 1024 * 1024)
      while true do kept[#kept + 1] = chunk .. #kept end
    end
    return "ok " .. #kept
  end,
})
`

// callWithin is e.call that fails the test if the call has not returned
// within d (the goroutine is left behind then).
func (e *env) callWithin(t *testing.T, d time.Duration, name string, args any) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		r := e.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: name, Arguments: args})
		b, _ := dsl.Marshal(r.JSON())
		got <- string(b)
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(d):
		t.Fatalf("the call has not returned after %v", d)
		return ""
	}
}

func TestAScriptPastTheMemoryLimitFailsItsCallAndTheNextCallIsServed(t *testing.T) {
	guard, msg := memoryGuard(t, 96*scripting.MiB)
	withGuard := func(h *lua.Host, _ *engine.Service) { h.Memory = guard }

	// Without the engine's timeout policy the body has no deadline: the
	// guard alone must be able to stop it.
	t.Run("a body without a deadline growing a table forever fails with the limit's message", func(t *testing.T) {
		e := loadBare(t, map[string]string{"hog.lua": hogLua}, withGuard)
		noDiags(t, e)
		got := e.callWithin(t, 30*time.Second, "hog", dsl.NewObject(dsl.Member{Key: "grow", Value: true}))
		want := `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if got := e.call(t, "hog", nil); !strings.Contains(got, `"value":"ok 0"`) {
			t.Errorf("the next call is not served by a fresh instance: %s", got)
		}
		if live := liveHeapWithin(5*time.Second, guard.Limit()); live > guard.Limit() {
			t.Errorf("the live heap is %d MiB after the call failed: the script goes on, or its memory is held", live/scripting.MiB)
		}
	})
	t.Run("a top level growing a table forever is a diagnostic and the process lives on", func(t *testing.T) {
		// Loaded alone: a plugin whose top level ran beside it, as the
		// loader runs them, would be stopped too (see MemoryGuard).
		e := load(t, map[string]string{"load.lua": "local kept, chunk = {}, string.rep('x', 1024 * 1024)\nwhile true do kept[#kept + 1] = chunk .. #kept end\n"}, withGuard)
		if got := e.diagnostics(); len(got) != 1 || got[0] != "load.lua: "+msg {
			t.Errorf("diagnostics %q, want [%q]", got, "load.lua: "+msg)
		}
		e = load(t, map[string]string{"hog.lua": hogLua}, withGuard)
		if got := e.call(t, "hog", nil); !strings.Contains(got, `"value":"ok 0"`) {
			t.Errorf("a plugin loaded next does not serve: %s", got)
		}
	})
}

// spinLua's "sum" adds the numbers up to 1e6: a tight loop.
const spinLua = `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "sum", description = "", parameters = {},
  output = { schema = { type = "number" }, render = function(a, v) return { { type = "text", text = tostring(v) } } end },
  execute = function() local n = 0 for i = 1, 1000000 do n = n + i end return n end,
})
`

// BenchmarkLuaTightLoopMemoryGuard is a tight loop in a body that has no
// deadline, without and with a memory guard: the guard makes the state check
// its context at every instruction, as a deadline does.
func BenchmarkLuaTightLoopMemoryGuard(b *testing.B) {
	for _, tc := range []struct {
		name  string
		guard *scripting.MemoryGuard
	}{
		{"without a guard", nil},
		{"with a guard", scripting.NewMemoryGuard(1<<40, scripting.MemoryGuardOptions{})},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := loadBare(b, map[string]string{"sum.lua": spinLua}, func(h *lua.Host, _ *engine.Service) { h.Memory = tc.guard })
			in := engine.Input{CallID: "c1", Name: "sum", Arguments: dsl.NewObject()}
			for b.Loop() {
				if r := e.svc.Call(context.Background(), in); r.IsError {
					b.Fatal(r.Error.Message)
				}
			}
		})
	}
}
