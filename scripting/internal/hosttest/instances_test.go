package hosttest_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// spinPlugin is a CPU-bound concurrency-safe tool, "spin", that returns the
// id of the instance that ran it. %DECL% is replaced by the instance count's
// declaration.
var spinPlugin = hosttest.Source{
	JS: `%DECL%
const { defineTool, tools } = require("dsh");
const me = String(Math.random());
tools.register(defineTool({
  name: "spin",
  description: "Burn CPU.",
  parameters: { n: { type: "integer", required: true } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  execute(args) { let x = 0; for (let i = 0; i < args.n; i++) x = (x * 31 + i) % 1000003; return me; },
}));
`,
	Lua: `local dsh = require("dsh")
%DECL%
local me = tostring({})
dsh.tools.register(dsh.define_tool {
  name = "spin", description = "Burn CPU.",
  parameters = { n = { type = "integer", required = true } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  is_concurrency_safe = function() return true end,
  execute = function(args) local x = 0 for i = 1, args.n do x = (x * 31 + i) % 1000003 end return me end,
})
`,
}

// spin is spinPlugin in lang with the declaration decl.
func spin(lang hosttest.Lang, decl hosttest.Source) string {
	return strings.Replace(spinPlugin.In(lang), "%DECL%", decl.In(lang), 1)
}

// spinSteps is how many steps a "spin" call burns, per language: long
// enough that calls overlap, yet short under the race detector.
var spinSteps = map[string]float64{"js": 1e5, "lua": 2e5}

// spinIn is the "spin" call that burns n steps.
func spinIn(n float64) engine.Input {
	return engine.Input{CallID: "c", Name: "spin", Arguments: dsl.NewObject(dsl.Member{Key: "n", Value: n})}
}

func TestInstancesServeCallsInParallel(t *testing.T) {
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				decl hosttest.Source
				want int
			}{
				// JavaScript's own spelling.
				{"an instances export", hosttest.Source{JS: "exports.instances = 2;"}, 2},
				{"dsh.instances(2)", hosttest.Source{JS: `require("dsh").instances(2);`, Lua: `dsh.instances(2)`}, 2},
				{"the default", hosttest.Source{}, 1},
			} {
				if tc.want > 1 && tc.decl.In(lang) == "" {
					continue
				}
				t.Run(tc.name+" gives that many instances", func(t *testing.T) {
					e := hosttest.Load(t, lang, hosttest.Config{}, map[string]string{lang.File("spin"): spin(lang, tc.decl)})
					e.NoDiagnostics(t)
					seen := map[string]bool{}
					var mu sync.Mutex
					var wg sync.WaitGroup
					for range 8 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							r := e.Service.Call(context.Background(), spinIn(spinSteps[lang.Name]))
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
			for _, tc := range []struct {
				name string
				decl hosttest.Source
				at   hosttest.Source // the position in the diagnostic, after the file name
			}{
				{"a bad instance count is a diagnostic at its line", hosttest.Source{JS: `require("dsh").instances(65);`, Lua: `dsh.instances(65)`}, hosttest.Source{JS: ":1:16", Lua: ":2"}},
				// JavaScript's own spelling.
				{"a bad instances export is a diagnostic", hosttest.Source{JS: "exports.instances = 0;"}, hosttest.Source{}},
			} {
				if tc.decl.In(lang) == "" {
					continue
				}
				t.Run(tc.name, func(t *testing.T) {
					e := hosttest.Load(t, lang, hosttest.Config{}, map[string]string{lang.File("spin"): spin(lang, tc.decl)})
					want := lang.File("spin") + tc.at.In(lang) + ": instances must be an integer from 1 to 64"
					if got := strings.Join(e.Diagnostics(), "\n"); got != want {
						t.Errorf("got  %s\nwant %s", got, want)
					}
				})
			}
		})
	}
}

// BenchmarkCPUInstances compares the throughput of a CPU-bound
// concurrency-safe tool with 1 and 2 instances.
func BenchmarkCPUInstances(b *testing.B) {
	two := hosttest.Source{JS: "exports.instances = 2;", Lua: "dsh.instances(2)"}
	for _, lang := range hosttest.Langs() {
		for _, bc := range []struct {
			name string
			decl hosttest.Source
		}{{"one instance", hosttest.Source{}}, {"two instances", two}} {
			b.Run(lang.Name+"/"+bc.name, func(b *testing.B) {
				e := hosttest.Load(b, lang, hosttest.Config{}, map[string]string{lang.File("spin"): spin(lang, bc.decl)})
				e.NoDiagnostics(b)
				in := spinIn(2e5)
				b.SetParallelism(2)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if r := e.Service.Call(context.Background(), in); r.IsError {
							b.Error(r.Error.Message)
						}
					}
				})
			})
		}
	}
}

// registrarPlugin's "make" registers "made", which answers with the id of
// the instance that ran "make"; it has two instances.
var registrarPlugin = hosttest.Source{
	JS: `exports.instances = 2;
const { defineTool, tools } = require("dsh");
const me = String(Math.random());
tools.register(defineTool({
  name: "make", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  execute() {
    tools.register(defineTool({
      name: "made", description: "", parameters: {},
      output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
      execute() { return me; },
    }));
    return me;
  },
}));
`,
	Lua: `local dsh = require("dsh")
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
`,
}

func TestARegistrationMadeInACallIsServedByTheInstanceThatMadeIt(t *testing.T) {
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			e := hosttest.Load(t, lang, hosttest.Config{}, map[string]string{lang.File("dyn"): registrarPlugin.In(lang)})
			e.NoDiagnostics(t)
			r := e.Service.Call(context.Background(), engine.Input{CallID: "c", Name: "make", Arguments: dsl.NewObject()})
			if r.IsError {
				t.Fatal(r.Error.Message)
			}
			maker := r.Value
			for range 6 {
				r := e.Service.Call(context.Background(), engine.Input{CallID: "c", Name: "made", Arguments: dsl.NewObject()})
				if r.IsError || r.Value != maker {
					t.Fatalf("the dynamic tool ran on another instance or failed: %+v (maker %v)", r.Value, maker)
				}
			}
		})
	}
}
