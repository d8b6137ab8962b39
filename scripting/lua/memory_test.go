package lua_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The memory limit's cases both hosts share are in
// scripting/internal/hosttest.

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
