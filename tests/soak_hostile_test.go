package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The soak of issue 12: a hostile plugin beside a healthy one. While other
// goroutines keep calling the hostile plugin's tools (a body that spins past
// its deadline, one that leaves work running, one that throws, one that
// parses deep model input), 1,000 calls of the healthy tools (JavaScript and
// Lua) all succeed with the right values, and their latency stays in the
// range of the same calls made with the hostile plugin idle.

const soakHealthyJS = `
const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "upper", description: "Upper-cases a text.", parameters: { text: { type: "string", required: true } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  async execute(args) { return args.text.toUpperCase(); },
}));
`

const soakHealthyLua = `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "lower", description = "Lower-cases a text.", parameters = { text = { type = "string", required = true } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  is_concurrency_safe = function() return true end,
  execute = function(args) return args.text:lower() end,
})
`

const soakHostileJS = `
const { defineTool, tools } = require("dsh");
const output = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
const tool = (name, execute) => tools.register(defineTool({ name, description: name,
  parameters: { s: { type: "string" } }, output, timeoutMs: 50, isConcurrencySafe: () => true, execute }));
tool("spin", async () => { for (;;) { try { for (;;) {} } catch (e) {} } });
tool("leave", async () => { const tick = () => { const t = Date.now(); while (Date.now() - t < 20) {} setTimeout(tick, 0); }; setTimeout(tick, 0); return "left"; });
tool("throw", async () => { throw new Error("hostile"); });
tool("parse", async (args) => typeof JSON.parse(args.s));
`

func TestSoakHostileBesideHealthy(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: skipped with -short")
	}
	const calls = 1000
	control := soakRun(t, false, calls)
	loaded := soakRun(t, true, calls)
	p := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	t.Logf("healthy latency p50 %v / p99 %v alone; p50 %v / p99 %v beside the hostile plugin",
		p(control, .5), p(control, .99), p(loaded, .5), p(loaded, .99))
	// Generous: the machine has two cores and the hostile calls keep one of
	// them busy; what must not happen is healthy calls queueing behind a
	// broken instance (seconds) or failing.
	if got, limit := p(loaded, .5), 5*p(control, .5)+2*time.Millisecond; got > limit {
		t.Errorf("healthy p50 latency %v beside the hostile plugin, more than %v", got, limit)
	}
	if got, limit := p(loaded, .99), 5*p(control, .99)+50*time.Millisecond; got > limit {
		t.Errorf("healthy p99 latency %v beside the hostile plugin, more than %v", got, limit)
	}
}

// soakRun loads the healthy plugins (and the hostile one) and makes calls
// healthy calls, returning their sorted latencies.
func soakRun(t *testing.T, hostile bool, calls int) []time.Duration {
	t.Helper()
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("healthy.js", soakHealthyJS)
	write("healthy.lua", soakHealthyLua)
	write("hostile.js", soakHostileJS)

	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy())
	loader := &scripting.Loader{Service: svc, Hosts: []scripting.Host{&js.Host{}, &lua.Host{}}}
	ctx := context.Background()
	loadAll(t, loader, dir, "")

	stop := make(chan struct{})
	var wg sync.WaitGroup
	hostileResults := make(chan int, 4)
	if hostile {
		deep := strings.Repeat("[", 200000) + strings.Repeat("]", 200000)
		for g, name := range []string{"spin", "leave", "throw", "parse"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				for i := 0; ; i++ {
					select {
					case <-stop:
						hostileResults <- n
						return
					default:
					}
					svc.Call(ctx, engine.Input{CallID: fmt.Sprintf("h%d-%d", g, i), Name: name, Arguments: map[string]any{"s": deep}})
					n++
				}
			}()
		}
	}

	lat := make([]time.Duration, 0, calls)
	for i := range calls {
		name, text, want := "upper", fmt.Sprintf("call %d", i), fmt.Sprintf("CALL %d", i)
		if i%2 == 1 {
			name, text, want = "lower", fmt.Sprintf("CALL %d", i), fmt.Sprintf("call %d", i)
		}
		start := time.Now()
		r := svc.Call(ctx, engine.Input{CallID: fmt.Sprintf("c%d", i), Name: name, Arguments: map[string]any{"text": text}})
		lat = append(lat, time.Since(start))
		if r.IsError {
			t.Fatalf("healthy call %d (%s) failed: %s", i, name, r.Error.Message)
		}
		if r.Value != want {
			t.Fatalf("healthy call %d (%s) = %v, want %q", i, name, r.Value, want)
		}
	}
	close(stop)
	wg.Wait()
	if hostile {
		close(hostileResults)
		for n := range hostileResults {
			if n == 0 {
				t.Errorf("a hostile tool was never called: the soak did not exercise it")
			}
		}
	}
	slices.Sort(lat)
	return lat
}
