package lua_test

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
	"github.com/dsh-go/dsh/scripting/lua"
)

// Lua run_code through the full pipeline (issue 15's targets): a trivial
// program as an outer call, a loop of awaited sub-calls to a Go tool, and
// tools.gather of ten calls to a concurrency-safe tool that waits 10 ms.

// pipelineTools registers greet(name) → {greeting} and wait(ms), a
// concurrency-safe tool that sleeps ms milliseconds.
func pipelineTools(b *testing.B, svc *engine.Service) {
	b.Helper()
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	greetParams, err := dsl.Params(dsl.Prop("name", dsl.String().Required())).Compile()
	if err != nil {
		b.Fatal(err)
	}
	waitParams, err := dsl.Params(dsl.Prop("ms", dsl.Number().Required())).Compile()
	if err != nil {
		b.Fatal(err)
	}
	render := func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("ok")}, nil }
	for _, def := range []*engine.Definition{
		{Name: "greet", Description: "Greet.", Parameters: greetParams,
			Output: engine.Output{Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties",
				Value: dsl.NewObject(dsl.Member{Key: "greeting", Value: str})}), Render: render},
			Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
				n, _ := args.(*dsl.Object).Get("name")
				return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + n.(string) + "!"}), nil
			}},
		{Name: "wait", Description: "Wait.", Parameters: waitParams,
			Output:            engine.Output{Schema: str, Render: render},
			IsConcurrencySafe: func(any) bool { return true },
			Execute: func(ctx context.Context, args any, _ *engine.Run) (any, error) {
				ms, _ := args.(*dsl.Object).Get("ms")
				select {
				case <-time.After(time.Duration(ms.(float64)) * time.Millisecond):
					return "waited", nil
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}},
	} {
		if _, err := svc.Global().Register(def); err != nil {
			b.Fatal(err)
		}
	}
}

// pipelineRun gives agent "main" the PTC executor over a Lua program
// runtime and returns a function running one program as a run_code call.
func pipelineRun(b *testing.B) func(i int, program string) *engine.Result {
	b.Helper()
	svc := engine.New()
	pipelineTools(b, svc)
	rt, err := lua.NewProgramRuntime(lua.ProgramOptions{})
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
		r := svc.Call(context.Background(), engine.Input{CallID: fmt.Sprintf("c%d", i), Name: ptc.ToolName, Agent: agent,
			Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: program}, dsl.Member{Key: "description", Value: "Benchmark a program"})})
		if r.IsError {
			b.Fatal(r.Error.Message)
		}
		return r
	}
}

func wantResult(b *testing.B, r *engine.Result, want string) {
	b.Helper()
	got, err := dsl.Marshal(r.JSON())
	if err != nil || !strings.Contains(string(got), want) {
		b.Fatalf("got %s, want %s in it", got, want)
	}
}

// BenchmarkLuaRunCodeTrivial is `return 1+1` as an outer run_code call, back
// to back and 5 ms apart (as a model's calls come: a warm state is ready).
func BenchmarkLuaRunCodeTrivial(b *testing.B) {
	b.Run("back to back", func(b *testing.B) {
		run := pipelineRun(b)
		wantResult(b, run(0, "return 1+1"), `"result":2`)
		b.ReportAllocs()
		i := 1
		for b.Loop() {
			run(i, "return 1+1")
			i++
		}
	})
	b.Run("spaced", func(b *testing.B) {
		run := pipelineRun(b)
		wantResult(b, run(0, "return 1+1"), `"result":2`)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			b.StopTimer()
			time.Sleep(5 * time.Millisecond)
			b.StartTimer()
			start := time.Now()
			run(i+1, "return 1+1")
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
		b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
	})
}

// BenchmarkLuaRunCodeSubCalls is a loop of 1,000 calls to the Go greet in
// one program, per sub-call.
func BenchmarkLuaRunCodeSubCalls(b *testing.B) {
	const n = 1000
	program := fmt.Sprintf(`local s = 0
for i = 1, %d do s = s + #tools.greet{name = "n" .. i}.greeting end
return s`, n)
	run := pipelineRun(b)
	wantResult(b, run(0, program), `"result":`)
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		run(i, program)
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/sub-call")
}

// BenchmarkLuaRunCodeGather is tools.gather of ten calls to wait{ms = 10}:
// the calls overlap, so a run takes about 10 ms, not 100.
func BenchmarkLuaRunCodeGather(b *testing.B) {
	program := `local fs = {}
for i = 1, 10 do fs[i] = function() return tools.wait{ms = 10} end end
return #tools.gather(unpack(fs))`
	run := pipelineRun(b)
	wantResult(b, run(0, program), `"result":10`)
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		run(i, program)
		i++
	}
}
