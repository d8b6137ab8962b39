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
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The instance cases both hosts share are in scripting/internal/hosttest.

func TestInstancesThatRegisterDifferentlyAreADiagnostic(t *testing.T) {
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
	hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "odd.lua: instance 2 of 2: the instance made 2 registrations at top level, not 1 as the first did")
	if e.svc.Global().Get("odd") != nil {
		t.Error("the plugin loaded")
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
