package js_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// spinTool is a CPU-bound concurrency-safe tool; it returns the id of the
// instance that ran it.
func spinTool(instances string) string {
	return instances + `
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
`
}

func TestInstancesServeCallsInParallel(t *testing.T) {
	for _, tc := range []struct {
		name, decl string
		want       int
	}{
		{"an instances export", "exports.instances = 2;", 2},
		{"dsh.instances()", `require("dsh").instances(2);`, 2},
		{"the default", "", 1},
	} {
		t.Run(tc.name+" gives that many instances", func(t *testing.T) {
			e := load(t, map[string]string{"spin.js": spinTool(tc.decl)})
			if len(e.diags) > 0 {
				t.Fatal(e.diagnostics())
			}
			seen := map[string]bool{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.svc.Call(context.Background(), engine.Input{CallID: "c", Name: "spin", Arguments: dsl.NewObject(dsl.Member{Key: "n", Value: 1e5})})
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
		e := load(t, map[string]string{"spin.js": spinTool("exports.instances = 0;")})
		if got := e.diagnostics(); len(got) != 1 || !strings.Contains(got[0], "instances must be an integer from 1 to 64") {
			t.Errorf("diagnostics %q", got)
		}
	})
}

func benchSpin(b *testing.B, decl string) {
	e := load(b, map[string]string{"spin.js": spinTool(decl)})
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

// BenchmarkJSCPUOneInstance and BenchmarkJSCPUTwoInstances compare the
// throughput of a CPU-bound concurrency-safe tool with 1 and 2 instances.
func BenchmarkJSCPUOneInstance(b *testing.B)  { benchSpin(b, "") }
func BenchmarkJSCPUTwoInstances(b *testing.B) { benchSpin(b, "exports.instances = 2;") }

func TestARegistrationMadeInACallIsServedByTheInstanceThatMadeIt(t *testing.T) {
	e := load(t, map[string]string{"dyn.js": `exports.instances = 2;
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
`})
	if len(e.diags) > 0 {
		t.Fatal(e.diagnostics())
	}
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
