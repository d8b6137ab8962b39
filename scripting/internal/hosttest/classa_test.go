package hosttest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// plugins is the plugin every case loads, per language: tools that spin,
// wedge in the stall module, or answer at once with their instance's id.
var plugins = map[string]string{
	"js": `%INSTANCES%
const { defineTool, tools, on } = require("dsh");
const stall = require("dsh/stall");
const me = String(Math.random());
const out = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
const tool = (name, timeoutMs, execute) => tools.register(defineTool({
  name, description: "", parameters: { ms: { type: "number" } }, output: out,
  isConcurrencySafe: () => true, ...(timeoutMs ? { timeoutMs } : {}), execute }));
tool("spin", 100, () => { for (;;) {} });
tool("wedge", 100, async (args) => { await stall.sleep(args.ms); return me; });
tool("hold", 0, async (args) => { await stall.sleep(args.ms); return me; });
tool("ok", 0, () => me);
tool("inner", 0, () => "inner");
tool("outer", 100, async (args, exec) => {
  const r = await tools.call("inner", {}, exec);
  return "outer: " + JSON.stringify(r);
});
on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "inner") await stall.sleep(400);
  return next();
});
on("tools/result", () => {});
`,
	"lua": `local dsh = require("dsh")
%INSTANCES%
local me = tostring({})
local out = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end }
local function tool(name, timeout, execute)
  dsh.tools.register(dsh.define_tool { name = name, description = "", parameters = { ms = { type = "number" } },
    output = out, is_concurrency_safe = function() return true end, timeout_ms = timeout, execute = execute })
end
tool("spin", 100, function() while true do end end)
tool("wedge", 100, function(args) dsh.stall.sleep(args.ms) return me end)
tool("hold", nil, function(args) dsh.stall.sleep(args.ms) return me end)
tool("ok", nil, function() return me end)
tool("inner", nil, function() return "inner" end)
tool("outer", 100, function(args, exec)
  local r = dsh.tools.call("inner", {}, exec)
  return "outer: " .. tostring(r.isError)
end)
dsh.on("tools/pre-execute", function(exec, next)
  if exec.name == "inner" then dsh.stall.sleep(400) end
  return next()
end)
dsh.on("tools/result", function() end)
`,
}

var instancesDecl = map[string]string{"js": `exports.instances = 2;`, "lua": `dsh.instances(2)`}

const timedOut = `{"isError":true,"error":{"message":"tool call timed out after 100ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 100ms"}]}`

// variant is a host setup the table runs under.
type variant struct {
	name      string
	lang      hosttest.Lang
	syncStall bool // JavaScript: the stall blocks the loop itself (stuck inside goja's Go code)
	// awaits: a script in the stall waits (JavaScript awaiting host work)
	// instead of being stuck in it, so its deadline ends its call without
	// interrupting the instance, which goes on serving.
	awaits bool
}

func variants() []variant {
	return []variant{
		{"js", hosttest.JS, false, true},
		{"js with a synchronous host function", hosttest.JS, true, false},
		{"lua", hosttest.Lua, false, false},
	}
}

// setup loads the plugin (with n instances) for v.
func setup(t *testing.T, v variant, n int) (*hosttest.Env, *hosttest.Stall) {
	t.Helper()
	stall := &hosttest.Stall{Sync: v.syncStall}
	// Registered first, so it runs last: every sleep has ended before the
	// goroutine leak check.
	t.Cleanup(stall.Wait)
	src := plugins[v.lang.Name]
	decl := ""
	if n > 1 {
		decl = instancesDecl[v.lang.Name]
	}
	src = strings.Replace(src, "%INSTANCES%", decl, 1)
	e := hosttest.Load(t, v.lang, hosttest.Config{Grace: 50 * time.Millisecond, Modules: []scripting.Module{stall.Module()}},
		map[string]string{"p" + v.lang.Ext: src})
	e.NoDiagnostics(t)
	return e, stall
}

func value(t *testing.T, r *engine.Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("the call failed: %s", r.Error.Message)
	}
	s, _ := r.Value.(string)
	return s
}

// within fails the test if f takes longer than d, scaled by the tests' time
// scale (internal/testtime): a bound against a hang. What must beat a stall
// is checked by order (stillStalled).
func within(t *testing.T, what string, d time.Duration, f func()) {
	t.Helper()
	d = testtime.D(d)
	start := time.Now()
	f()
	if took := time.Since(start); took > d {
		t.Errorf("%s took %v, more than %v", what, took, d)
	}
}

// stillStalled fails the test unless a stall sleep is still under way: what
// was just done did not wait for it.
func stillStalled(t *testing.T, s *hosttest.Stall, what string) {
	t.Helper()
	if s.Running() == 0 {
		t.Errorf("%s waited for the stalled host function to return", what)
	}
}

// waitRunning waits until n stall sleeps are under way.
func waitRunning(t *testing.T, s *hosttest.Stall, n int) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if s.Running() >= n {
			return
		}
	}
	t.Fatalf("%d sleeps never started", n)
}

func args(t *testing.T, ms int) any {
	t.Helper()
	return hosttest.Args(t, fmt.Sprintf(`{"ms":%d}`, ms))
}

// TestReplacingAnInterruptedInstanceNeverBlocks is issue 12's class A for
// both hosts: each case ends with a short message within a generous bound,
// and the plugin's next call is served by a healthy instance.
func TestReplacingAnInterruptedInstanceNeverBlocks(t *testing.T) {
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			t.Run("a body in an endless loop times out and the next call is served by a fresh instance", func(t *testing.T) {
				e, _ := setup(t, v, 1)
				before := value(t, e.Call(context.Background(), "ok", nil))
				within(t, "the spinning call", 2*time.Second, func() {
					if got := hosttest.JSON(t, e.Call(context.Background(), "spin", nil).JSON()); got != timedOut {
						t.Errorf("got  %s\nwant %s", got, timedOut)
					}
				})
				within(t, "the next call", 2*time.Second, func() {
					if after := value(t, e.Call(context.Background(), "ok", nil)); after == before {
						t.Error("the next call was served by the interrupted instance")
					}
				})
			})
			t.Run("a body stuck in a host function that ignores its context fails at its deadline and blocks no other call", func(t *testing.T) {
				e, stall := setup(t, v, 1)
				before := value(t, e.Call(context.Background(), "ok", nil))
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					within(t, "the wedged call", time.Second, func() {
						if got := hosttest.JSON(t, e.Call(context.Background(), "wedge", args(t, 2000)).JSON()); got != timedOut {
							t.Errorf("got  %s\nwant %s", got, timedOut)
						}
						stillStalled(t, stall, "the wedged call")
					})
				}()
				waitRunning(t, stall, 1)
				// A call made while the instance is wedged is served well
				// before the host function returns (2s): at once when the
				// interpreter is free, or by a fresh instance once the wedged
				// one was interrupted.
				within(t, "a concurrent call", time.Second, func() {
					value(t, e.Call(context.Background(), "ok", nil))
					stillStalled(t, stall, "a concurrent call")
				})
				wg.Wait()
				within(t, "the next call", time.Second, func() {
					switch after := value(t, e.Call(context.Background(), "ok", nil)); {
					case v.awaits && after != before:
						t.Error("an instance whose script was waiting, not running, was replaced")
					case !v.awaits && after == before:
						t.Error("the next call was served by the interrupted instance")
					}
				})
			})
			t.Run("a composite tool whose nested call is cancelled while a policy of the same plugin decides ends, and nothing hangs", func(t *testing.T) {
				e, stall := setup(t, v, 1)
				within(t, "the composite call", 2*time.Second, func() {
					if got := hosttest.JSON(t, e.Call(context.Background(), "outer", nil).JSON()); got != timedOut {
						t.Errorf("got  %s\nwant %s", got, timedOut)
					}
				})
				within(t, "the next call", 2*time.Second, func() {
					value(t, e.Call(context.Background(), "ok", nil))
				})
				stall.Wait()
				within(t, "a nested call once the policy is quick", 2*time.Second, func() {
					value(t, e.Call(context.Background(), "ok", nil))
				})
			})
			t.Run("with two instances and one wedged, calls go to the healthy one", func(t *testing.T) {
				e, stall := setup(t, v, 2)
				var wg sync.WaitGroup
				wg.Add(1)
				var wedged string
				go func() {
					defer wg.Done()
					wedged = value(t, e.Call(context.Background(), "hold", args(t, int(testtime.Ms(1000)))))
				}()
				waitRunning(t, stall, 1)
				seen := map[string]bool{}
				within(t, "five calls", time.Second, func() {
					for range 5 {
						seen[value(t, e.Call(context.Background(), "ok", nil))] = true
					}
					stillStalled(t, stall, "five calls")
				})
				wg.Wait()
				if len(seen) != 1 || seen[wedged] {
					t.Errorf("the calls went to %d instances, the wedged one among them: %v", len(seen), seen[wedged])
				}
			})
			t.Run("disposing the plugin while a call is wedged returns promptly", func(t *testing.T) {
				e, stall := setup(t, v, 1)
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					if got := hosttest.JSON(t, e.Call(context.Background(), "wedge", args(t, 2000)).JSON()); got != timedOut {
						t.Errorf("got  %s\nwant %s", got, timedOut)
					}
				}()
				waitRunning(t, stall, 1)
				within(t, "the disposal", time.Second, func() {
					if err := scripting.DisposeAll(context.Background(), e.Loaded); err != nil {
						t.Error(err)
					}
					stillStalled(t, stall, "the disposal")
				})
				wg.Wait()
				if r := e.Call(context.Background(), "ok", nil); !r.IsError {
					t.Error("a disposed plugin served a call")
				}
			})
		})
	}
}
