package lua

import (
	"context"
	"runtime"
	"testing"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
)

// TestDynamicEffectsAreForgottenWhenDisposed checks, from inside the host,
// that registering and disposing tools, guards and listeners from calls,
// and making definitions with define_tool, does not grow the instance: their
// callbacks, pins and define_tool records go with them.
func TestDynamicEffectsAreForgottenWhenDisposed(t *testing.T) {
	svc := engine.New()
	p := scripting.NewPlugin(svc, "churn.lua", nil)
	h := &Host{}
	src := scripting.Source{Root: t.TempDir(), Rel: "churn.lua", Code: []byte(`
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "churn", description = "", parameters = {},
  output = { schema = { type = "number" }, render = function() return {} end },
  execute = function()
    for i = 1, 200 do
      local d1 = dsh.tools.register(dsh.define_tool { name = "t" .. i, description = "", parameters = {},
        output = { schema = { type = "number" }, render = function() return {} end }, execute = function() return 1 end }, { when = function() return true end })
      local d2 = dsh.tools.guard(function() return nil end)
      local d3 = dsh.on("tools/pre-execute", function(exec, next) return next() end)
      d1() d2() d3()
    end
    return 1
  end,
})`)}
	pl, err := h.load(context.Background(), p, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Commit(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Dispose(context.Background()) })
	for range 3 {
		r := svc.Call(context.Background(), engine.Input{CallID: "c", Name: "churn", Arguments: dsl.NewObject()})
		if r.IsError {
			t.Fatal(r.Error.Message)
		}
	}
	inst := pl.instances.Instances()[0]
	count := func() (callbacks, defined, entries int) {
		v, err := inst.do(context.Background(), callSpec{what: "count"}, func(i *instance, _ *glua.LState, _ *frame) (any, error) {
			live := 0
			for k := range i.defined {
				if k.Value() != nil {
					live++
				}
			}
			return [3]int{len(i.callbacks), live, len(i.defined)}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := v.([3]int)
		return n[0], n[1], n[2]
	}
	if got, _, _ := count(); got != 1 {
		t.Errorf("the instance keeps %d callbacks, want 1 (churn's own)", got)
	}
	pins := pl.instances.Pins()
	if pins != 0 {
		t.Errorf("the pool keeps %d pins", pins)
	}
	runtime.GC()
	runtime.GC()
	if _, defined, entries := count(); defined > 1+64 || entries > 2*600 {
		t.Errorf("the instance keeps %d live define_tool records, %d entries", defined, entries)
	}
}
