package js_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

// run_code through the full pipeline (issue 14's targets): a trivial
// program as an outer call, and a loop of awaited sub-calls to a Go tool and
// to a JS tool, against calling that JS tool directly.

// ptcBench gives agent "main" of svc the PTC executor with a goja program
// runtime, and returns a function running one program as a run_code call.
func ptcBench(b *testing.B, svc *engine.Service) func(i int, program string) *engine.Result {
	b.Helper()
	return ptcBenchWith(b, svc, js.ProgramOptions{})
}

// ptcBenchWith is ptcBench with the program runtime's options given.
func ptcBenchWith(b *testing.B, svc *engine.Service, opts js.ProgramOptions) func(i int, program string) *engine.Result {
	b.Helper()
	rt, err := js.NewProgramRuntime(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	exec, err := ptc.NewExecutor(svc, rt, ptc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(exec)
	return func(i int, program string) *engine.Result {
		return svc.Call(context.Background(), engine.Input{CallID: fmt.Sprintf("c%d", i), Name: ptc.ToolName, Agent: agent,
			Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: program}, dsl.Member{Key: "description", Value: "Benchmark a program"})})
	}
}

// scaleGreet is the Go tool greet(name) returning {greeting}.
func scaleGreet(b *testing.B) *engine.Definition {
	b.Helper()
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	params, err := dsl.Params(dsl.Prop("name", dsl.String().Required())).Compile()
	if err != nil {
		b.Fatal(err)
	}
	return &engine.Definition{Name: "greet", Description: "Greet.", Parameters: params,
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties",
				Value: dsl.NewObject(dsl.Member{Key: "greeting", Value: str})}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("hi")}, nil },
		},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			n, _ := args.(*dsl.Object).Get("name")
			return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + n.(string) + "!"}), nil
		}}
}

func mustValue(b *testing.B, r *engine.Result, want string) {
	b.Helper()
	if got := hosttest.JSON(b, r.JSON()); r.IsError || !strings.Contains(got, want) {
		b.Fatalf("got %s, want %s in it", got, want)
	}
}

func BenchmarkRunCodeTrivial(b *testing.B) {
	run := ptcBench(b, engine.New())
	mustValue(b, run(0, "return 1+1"), `"result":2`)
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		if r := run(i, "return 1+1"); r.IsError {
			b.Fatal(r.Error.Message)
		}
		i++
	}
}

// BenchmarkRunCodeTrivialSpaced is BenchmarkRunCodeTrivial with the runs
// 5 ms apart, as a model's calls come: the warm pool has a runtime ready
// for each. It reports the latency's p50 and p90.
func BenchmarkRunCodeTrivialSpaced(b *testing.B) {
	run := ptcBench(b, engine.New())
	mustValue(b, run(0, "return 1+1"), `"result":2`)
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		time.Sleep(5 * time.Millisecond)
		b.StartTimer()
		start := time.Now()
		r := run(i+1, "return 1+1")
		lat = append(lat, time.Since(start))
		if r.IsError {
			b.Fatal(r.Error.Message)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// subCallProgram awaits n calls of tool one after the other.
func subCallProgram(tool string, n int) string {
	return fmt.Sprintf(`let s = 0;
for (let i = 0; i < %d; i++) { const r = await tools.%s({name: "n" + i}); s += r.greeting.length; }
return s;`, n, tool)
}

const subCalls = 1000

func BenchmarkRunCodeSubCalls(b *testing.B) {
	b.Run("go_tool", func(b *testing.B) {
		svc := engine.New()
		if _, err := svc.Global().Register(scaleGreet(b)); err != nil {
			b.Fatal(err)
		}
		benchSubCalls(b, ptcBench(b, svc))
	})
	b.Run("js_tool", func(b *testing.B) {
		env := hosttest.Load(b, hosttest.JS, hosttest.Config{}, map[string]string{"greet.js": greetSync})
		env.NoDiagnostics(b)
		benchSubCalls(b, ptcBench(b, env.Service))
	})
	// The JS greet called directly (a model-direct call), to compare in the
	// same run: the target is a sub-call at most 1.5 times this.
	b.Run("js_tool_direct", func(b *testing.B) {
		env := hosttest.Load(b, hosttest.JS, hosttest.Config{}, map[string]string{"greet.js": greetSync})
		env.Bench(b, engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "n1"})})
	})
}

// benchSubCalls runs the loop of subCalls awaited calls per op and reports
// the time per sub-call.
func benchSubCalls(b *testing.B, run func(int, string) *engine.Result) {
	b.Helper()
	program := subCallProgram("greet", subCalls)
	mustValue(b, run(0, subCallProgram("greet", 2)), `"result":`)
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		if r := run(i, program); r.IsError {
			b.Fatal(r.Error.Message)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/subCalls, "µs/sub-call")
}
