package lua_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/lua"
)

// spinTool is a CPU-bound concurrency-safe tool; it returns the id of the
// instance that ran it.
func spinTool(decl string) string {
	return `local dsh = require("dsh")
` + decl + `
local me = tostring({})
dsh.tools.register(dsh.define_tool {
  name = "spin", description = "Burn CPU.",
  parameters = { n = { type = "integer", required = true } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  is_concurrency_safe = function() return true end,
  execute = function(args) local x = 0 for i = 1, args.n do x = (x * 31 + i) % 1000003 end return me end,
})
`
}

func TestInstancesServeCallsInParallel(t *testing.T) {
	for _, tc := range []struct {
		name, decl string
		want       int
	}{
		{"dsh.instances(2)", `dsh.instances(2)`, 2},
		{"the default", "", 1},
	} {
		t.Run(tc.name+" gives that many instances", func(t *testing.T) {
			e := load(t, map[string]string{"spin.lua": spinTool(tc.decl)})
			noDiags(t, e)
			seen := map[string]bool{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.svc.Call(context.Background(), engine.Input{CallID: "c", Name: "spin", Arguments: dsl.NewObject(dsl.Member{Key: "n", Value: 2e5})})
					mu.Lock()
					defer mu.Unlock()
					if r.IsError {
						t.Error(r.Error.Message)
						return
					}
					seen[r.Value.(string)] = true
				}()
			}
			wg.Wait()
			if len(seen) != tc.want {
				t.Errorf("calls ran on %d instances, want %d", len(seen), tc.want)
			}
		})
	}
	t.Run("a bad instance count is a diagnostic", func(t *testing.T) {
		e := load(t, map[string]string{"spin.lua": spinTool("dsh.instances(65)")})
		want(t, strings.Join(e.diagnostics(), "\n"), "spin.lua:2: instances must be an integer from 1 to 64")
	})
	t.Run("instances that register differently are a diagnostic", func(t *testing.T) {
		var n atomic.Int64
		seq := scripting.Module{Name: "seq", Funcs: map[string]scripting.ModuleFunc{
			"next": func(context.Context, []any) (any, error) { return float64(n.Add(1)), nil },
		}}
		e := load(t, map[string]string{"odd.lua": `local dsh = require("dsh")
dsh.instances(2)
local function def(name)
  return { name = name, description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
    execute = function() return 1 end }
end
dsh.tools.register(def("odd"))
if dsh.seq.next() > 1 then dsh.tools.register(def("odder")) end
`}, func(h *lua.Host, _ *engine.Service) { h.Modules = []scripting.Module{seq} })
		want(t, strings.Join(e.diagnostics(), "\n"), "odd.lua: instance 2 of 2: the instance made 2 registrations at top level, not 1 as the first did")
		if e.svc.Global().Get("odd") != nil {
			t.Error("the plugin loaded")
		}
	})
}

func benchSpin(b *testing.B, decl string) {
	e := load(b, map[string]string{"spin.lua": spinTool(decl)})
	in := engine.Input{CallID: "c", Name: "spin", Arguments: dsl.NewObject(dsl.Member{Key: "n", Value: 2e5})}
	b.SetParallelism(2)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if r := e.svc.Call(context.Background(), in); r.IsError {
				b.Error(r.Error.Message)
			}
		}
	})
}

// BenchmarkLuaCPUOneInstance and BenchmarkLuaCPUTwoInstances compare the
// throughput of a CPU-bound concurrency-safe tool with 1 and 2 instances.
func BenchmarkLuaCPUOneInstance(b *testing.B)  { benchSpin(b, "") }
func BenchmarkLuaCPUTwoInstances(b *testing.B) { benchSpin(b, "dsh.instances(2)") }

func TestARegistrationMadeInACallIsServedByTheInstanceThatMadeIt(t *testing.T) {
	e := load(t, map[string]string{"dyn.lua": `local dsh = require("dsh")
dsh.instances(2)
local me = tostring({})
dsh.tools.register(dsh.define_tool {
  name = "make", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  is_concurrency_safe = function() return true end,
  execute = function()
    dsh.tools.register(dsh.define_tool {
      name = "made", description = "", parameters = {},
      output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
      execute = function() return me end,
    })
    return me
  end,
})
`})
	noDiags(t, e)
	r := e.svc.Call(context.Background(), engine.Input{CallID: "c", Name: "make", Arguments: dsl.NewObject()})
	if r.IsError {
		t.Fatal(r.Error.Message)
	}
	maker := r.Value
	for range 6 {
		r := e.svc.Call(context.Background(), engine.Input{CallID: "c", Name: "made", Arguments: dsl.NewObject()})
		if r.IsError || r.Value != maker {
			t.Fatalf("the dynamic tool ran on another instance or failed: %+v (maker %v)", r.Value, maker)
		}
	}
}

func TestConcurrentCallsOnOneInstanceQueue(t *testing.T) {
	e := load(t, map[string]string{"count.lua": `local dsh = require("dsh")
local n, inside = 0, 0
dsh.tools.register(dsh.define_tool {
  name = "count", description = "", parameters = {},
  output = { schema = { type = "integer" }, render = function(a, v) return { { type = "text", text = tostring(v) } } end },
  is_concurrency_safe = function() return true end,
  execute = function()
    inside = inside + 1
    if inside > 1 then error("two calls ran at once") end
    local x = 0
    for i = 1, 20000 do x = x + i end
    n = n + 1
    inside = inside - 1
    return n
  end,
})
`})
	noDiags(t, e)
	var wg sync.WaitGroup
	seen := make(chan float64, 40)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.svc.Call(context.Background(), engine.Input{CallID: "c", Name: "count", Arguments: dsl.NewObject()})
			if r.IsError {
				t.Error(r.Error.Message)
				return
			}
			seen <- r.Value.(float64)
		}()
	}
	wg.Wait()
	close(seen)
	got := map[float64]bool{}
	for v := range seen {
		got[v] = true
	}
	if len(got) != 40 {
		t.Errorf("%d distinct counts, want 40", len(got))
	}
}
