package lua_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

const greetLua = `local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "greet",
  description = "Greet someone by name.",
  parameters = { name = { type = "string", required = true } },
  output = {
    schema = { type = "object", additionalProperties = false, properties = { greeting = { type = "string" } } },
    render = function(args, value) return { { type = "text", text = value.greeting } } end,
  },
  execute = function(args) return { greeting = "Hello, " .. args.name .. "!" } end,
})
`

// benchGreet measures greet("Ada") on files loaded by the Lua host.
func benchGreet(b *testing.B, files map[string]string) {
	hosttest.Load(b, hosttest.Lua, hosttest.Config{}, files).Bench(b,
		engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})})
}

// BenchmarkLuaGreet is the greet tool written in Lua, through the full
// pipeline (target: 15 µs per call).
func BenchmarkLuaGreet(b *testing.B) {
	benchGreet(b, map[string]string{"greet.lua": greetLua})
}

// BenchmarkLuaGreetPreListener adds a pass-through Lua pre-execute listener
// (target: 6 µs more than BenchmarkLuaGreet).
func BenchmarkLuaGreetPreListener(b *testing.B) {
	benchGreet(b, map[string]string{
		"greet.lua":  greetLua,
		"policy.lua": `require("dsh").on("tools/pre-execute", function(exec, next) return next() end)`,
	})
}

// BenchmarkLuaCancellationLatency measures how long after its deadline plus
// the grace period a body in `while true do end` ends; it reports the p50
// and p99 over 50 calls (target: p99 within 5 ms), whatever b.N is (its
// ns/op means nothing).
func BenchmarkLuaCancellationLatency(b *testing.B) {
	const timeout, grace = 20 * time.Millisecond, 10 * time.Millisecond
	e := load(b, map[string]string{"spin.lua": tool("spin", `{ type = "string" }`, `while true do end`, "timeout_ms = 20,")},
		func(h *lua.Host, _ *engine.Service) { h.Grace = grace })
	if len(e.diags) > 0 {
		b.Fatal(e.diagnostics())
	}
	in := engine.Input{CallID: "c1", Name: "spin", Arguments: dsl.NewObject()}
	var lat []time.Duration
	for range 50 {
		start := time.Now()
		r := e.svc.Call(context.Background(), in)
		lat = append(lat, time.Since(start)-timeout-grace)
		if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != "TOOL_TIMEOUT" {
			b.Fatalf("not a timeout: %+v", r.Error)
		}
	}
	for b.Loop() {
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*99/100])/float64(time.Millisecond), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2])/float64(time.Millisecond), "p50-ms")
}
