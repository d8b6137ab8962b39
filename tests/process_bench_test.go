package tests

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/process"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// run_code under process isolation (issue 16's figures, BENCHMARKS.md "run_code
// under process isolation"): each benchmark runs the same programs in-process
// and in child dsh processes (ptc/process, children of a dsh built from this
// tree), side by side, so that one run gives both and their ratio.
//
// The layers: "pipeline" is an outer run_code call through the PTC executor
// (svc.Call), its sub-calls going through the engine to a Go tool;
// "runtime" and "binding" are the program runtime alone (Runtime.Run), its
// sub-calls going to a bare ptc.Binding.

// The modes a benchmark compares.
const (
	pbInProcess = "in-process"
	pbProcess   = "process"
)

// pbLang is one language's programs.
type pbLang struct {
	name string
	lang ptc.Language
	// subCalls awaits tools.greet n times, returning the greetings' total
	// length; compute is a CPU-bound loop of 200,000 iterations; blowup
	// grows the heap by 1 MiB strings without end.
	subCalls func(n int) string
	compute  string
	blowup   string
}

var pbLangs = []pbLang{
	{
		name: "ts", lang: ptc.TypeScript,
		subCalls: func(n int) string {
			return fmt.Sprintf(`let s = 0;
for (let i = 1; i <= %d; i++) { const r = await tools.greet({name: "n" + i}); s += r.greeting.length; }
return s;`, n)
		},
		compute: `let s = 0; for (let i = 0; i < 200000; i++) { s = (s + i * 7) % 1000003; } return s;`,
		blowup: `const a: string[] = [];
for (;;) a.push("x".repeat(1 << 20) + a.length);`,
	},
	{
		name: "lua", lang: ptc.Lua,
		subCalls: func(n int) string {
			return fmt.Sprintf(`local s = 0
for i = 1, %d do s = s + #tools.greet{name = "n" .. i}.greeting end
return s`, n)
		},
		compute: `local s = 0 for i = 0, 199999 do s = (s + i * 7) % 1000003 end return s`,
		blowup: `local t = {}
for i = 1, 1e9 do t[i] = string.rep("x", 1048576) .. i end`,
	},
}

// pbSubCallsWant is what subCalls(n) returns: the lengths of "Hello, n<i>!".
func pbSubCallsWant(n int) string {
	s := 0
	for i := 1; i <= n; i++ {
		s += len(fmt.Sprintf("Hello, n%d!", i))
	}
	return fmt.Sprint(s)
}

// pbComputeWant is what compute returns.
func pbComputeWant() string {
	s := 0
	for i := range 200000 {
		s = (s + i*7) % 1000003
	}
	return fmt.Sprint(s)
}

// pbBinary is the dsh the children run (built without the race detector),
// shared by the benchmarks running at a time: the first builds it, the
// last to end removes it. Only the benchmarks build it, so plain go test
// never does.
var pbBinary struct {
	mu    sync.Mutex
	users int
	dir   string
}

// pbDsh returns the path of the children's dsh for the duration of b (a
// top-level benchmark, so that its sub-benchmarks share one build).
func pbDsh(b *testing.B) string {
	b.Helper()
	pbBinary.mu.Lock()
	defer pbBinary.mu.Unlock()
	if pbBinary.users == 0 {
		goBin, err := exec.LookPath("go")
		if err != nil {
			b.Fatalf("building dsh needs the go command on PATH: %v", err)
		}
		dir, err := os.MkdirTemp("", "dsh-process-bench-")
		if err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, "dsh"), "github.com/dsh-go/dsh/cmd/dsh").CombinedOutput(); err != nil {
			_ = os.RemoveAll(dir)
			b.Fatalf("go build: %v\n%s", err, out)
		}
		pbBinary.dir = dir
	}
	pbBinary.users++
	b.Cleanup(func() {
		pbBinary.mu.Lock()
		defer pbBinary.mu.Unlock()
		if pbBinary.users--; pbBinary.users == 0 {
			_ = os.RemoveAll(pbBinary.dir)
		}
	})
	return filepath.Join(pbBinary.dir, "dsh")
}

// pbRuntimeOptions are a benchmark's runtime settings: budgets (zero for
// the defaults), and under process isolation the children's dsh, the pool
// and recycling.
type pbRuntimeOptions struct {
	bin          string // the children's dsh (pbDsh)
	budgets      ptc.Budgets
	pool         int
	recycleAfter int
}

// pbRuntime returns a program runtime of l's language in mode, closed when
// b ends.
func pbRuntime(b *testing.B, l pbLang, mode string, o pbRuntimeOptions) ptc.Runtime {
	b.Helper()
	var rt ptc.Runtime
	var err error
	switch {
	case mode == pbProcess:
		rt, err = process.NewRuntime(process.Options{Language: l.lang, Budgets: o.budgets, Path: o.bin,
			Pool: o.pool, RecycleAfter: o.recycleAfter})
	case l.lang == ptc.Lua:
		rt, err = lua.NewProgramRuntime(lua.ProgramOptions{Budgets: o.budgets})
	default:
		rt, err = js.NewProgramRuntime(js.ProgramOptions{Budgets: o.budgets})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	return rt
}

// pbRunner runs one program, the i-th, and returns its value as JSON text
// or its failure as an error.
type pbRunner func(i int, program string) (string, error)

// pbGreet returns {greeting: "Hello, <name>!"} for {name}.
func pbGreet(args any) (any, error) {
	o, ok := args.(*dsl.Object)
	if !ok {
		return nil, fmt.Errorf("greet: want an object, got %T", args)
	}
	n, _ := o.Get("name")
	s, _ := n.(string)
	return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + s + "!"}), nil
}

// pbRuntimeRunner runs programs on rt alone, with tools.greet a bare
// binding.
func pbRuntimeRunner(rt ptc.Runtime) pbRunner {
	ns := []ptc.Namespace{{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: []ptc.Binding{
		{Name: "greet", Call: func(_ context.Context, args any) (any, error) { return pbGreet(args) }},
	}}}
	return func(_ int, program string) (string, error) {
		res, err := rt.Run(context.Background(), ptc.Request{Program: program, Bindings: ns})
		if err != nil {
			return "", err
		}
		if res.Err != nil {
			return "", fmt.Errorf("%s: %s", res.Err.Kind, res.Err.Message)
		}
		v, err := dsl.Marshal(res.Value)
		return string(v), err
	}
}

// pbPipelineRunner gives agent "main" the PTC executor over rt and runs
// programs as outer run_code calls, tools.greet being a Go tool of the
// engine. The value is the result's JSON text.
func pbPipelineRunner(b *testing.B, rt ptc.Runtime) pbRunner {
	b.Helper()
	svc := engine.New()
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	params, err := dsl.Params(dsl.Prop("name", dsl.String().Required())).Compile()
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Global().Register(&engine.Definition{Name: "greet", Description: "Greet.", Parameters: params,
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties",
				Value: dsl.NewObject(dsl.Member{Key: "greeting", Value: str})}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("hi")}, nil },
		},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) { return pbGreet(args) },
	}); err != nil {
		b.Fatal(err)
	}
	exec, err := ptc.NewExecutor(svc, rt, ptc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(exec)
	return func(i int, program string) (string, error) {
		r := svc.Call(context.Background(), engine.Input{CallID: fmt.Sprintf("c%d", i), Name: ptc.ToolName, Agent: agent,
			Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: program}, dsl.Member{Key: "description", Value: "Benchmark a program"})})
		if r.IsError {
			return "", errors.New(r.Error.Message)
		}
		v, err := dsl.Marshal(r.JSON())
		return string(v), err
	}
}

// pbRunnerFor is the runner of layer ("pipeline" or "runtime") over rt.
func pbRunnerFor(b *testing.B, layer string, rt ptc.Runtime) pbRunner {
	b.Helper()
	if layer == "pipeline" {
		return pbPipelineRunner(b, rt)
	}
	return pbRuntimeRunner(rt)
}

// pbWarm runs program a few times, checking that its value's JSON text
// holds want, and then leaves a process runtime's pool time to fill.
func pbWarm(b *testing.B, run pbRunner, mode, program, want string) {
	b.Helper()
	if err := pbCheck(run, program, want); err != nil {
		b.Fatal(err)
	}
	if mode == pbProcess {
		time.Sleep(500 * time.Millisecond)
	}
}

// pbCheck runs program three times, checking that its value's JSON text
// holds want.
func pbCheck(run pbRunner, program, want string) error {
	for i := range 3 {
		got, err := run(-1-i, program)
		if err != nil {
			return err
		}
		if !strings.Contains(got, want) {
			return fmt.Errorf("the program returned %s, want %s in it", got, want)
		}
	}
	return nil
}

// pbPercentiles reports the p50, p90 and p99 of lat, in µs, under the
// names prefix-p50-µs and so on.
func pbPercentiles(b *testing.B, prefix string, lat []time.Duration) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	for _, p := range []struct {
		name string
		at   int
	}{{"p50", len(lat) / 2}, {"p90", len(lat) * 9 / 10}, {"p99", len(lat) * 99 / 100}} {
		b.ReportMetric(float64(lat[p.at].Nanoseconds())/1e3, prefix+p.name+"-µs")
	}
}

// BenchmarkProcessTrivial is `return 1+1`, in-process and in a child, as an
// outer run_code call (pipeline) and on the runtime alone (runtime), back
// to back and 5 ms apart (as a model's calls come: the pool and the
// child's own warm runtime are refilled between runs); under process
// isolation also fresh: each run the first of a child started ahead of
// need (RecycleAfter 1, two kept ready, runs 300 ms apart), as after a
// crash, a timeout or a recycling; and cold: no pool and a child per run,
// what a run costs when no child is ready (a child's start included).
func BenchmarkProcessTrivial(b *testing.B) {
	bin := pbDsh(b)
	paces := []struct {
		name string
		gap  time.Duration
	}{{"back_to_back", 0}, {"spaced", 5 * time.Millisecond}}
	for _, l := range pbLangs {
		b.Run(l.name, func(b *testing.B) {
			for _, mode := range []string{pbInProcess, pbProcess} {
				b.Run(mode, func(b *testing.B) {
					for _, layer := range []string{"pipeline", "runtime"} {
						b.Run(layer, func(b *testing.B) {
							for _, pace := range paces {
								b.Run(pace.name, func(b *testing.B) {
									run := pbRunnerFor(b, layer, pbRuntime(b, l, mode, pbRuntimeOptions{bin: bin}))
									pbWarm(b, run, mode, "return 1+1", "2")
									pbLatencies(b, pace.gap, func(i int) error {
										_, err := run(i, "return 1+1")
										return err
									})
								})
							}
							if mode != pbProcess || layer != "runtime" {
								return
							}
							for _, c := range []struct {
								name string
								gap  time.Duration
								opts pbRuntimeOptions
							}{
								{"fresh", 300 * time.Millisecond, pbRuntimeOptions{bin: bin, pool: 2, recycleAfter: 1}},
								{"cold", 0, pbRuntimeOptions{bin: bin, pool: -1, recycleAfter: 1}},
							} {
								b.Run(c.name, func(b *testing.B) {
									run := pbRuntimeRunner(pbRuntime(b, l, mode, c.opts))
									pbWarm(b, run, mode, "return 1+1", "2")
									pbLatencies(b, c.gap, func(i int) error {
										_, err := run(i, "return 1+1")
										return err
									})
								})
							}
						})
					}
				})
			}
		})
	}
}

// pbLatencies times b.N calls of run, gap apart (the gaps not timed), and
// reports their percentiles.
func pbLatencies(b *testing.B, gap time.Duration, run func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if gap > 0 {
			b.StopTimer()
			time.Sleep(gap)
			b.StartTimer()
		}
		start := time.Now()
		err := run(i)
		lat = append(lat, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	pbPercentiles(b, "", lat)
}

// BenchmarkProcessSubCall is a loop of 1,000 awaited calls to greet in one
// program, in-process and in a child: through the PTC executor to a Go tool
// of the engine (pipeline), and on the runtime alone to a bare ptc.Binding
// (binding). µs/sub-call is ns/op / 1,000 (the run's own cost included:
// under 2 µs a sub-call, by BenchmarkProcessTrivial); the pipes' cost is
// the difference between the modes.
func BenchmarkProcessSubCall(b *testing.B) {
	bin := pbDsh(b)
	const n = 1000
	want := pbSubCallsWant(n)
	for _, l := range pbLangs {
		program := l.subCalls(n)
		b.Run(l.name, func(b *testing.B) {
			for _, mode := range []string{pbInProcess, pbProcess} {
				b.Run(mode, func(b *testing.B) {
					for _, layer := range []string{"pipeline", "binding"} {
						b.Run(layer, func(b *testing.B) {
							run := pbRunnerFor(b, layer, pbRuntime(b, l, mode, pbRuntimeOptions{bin: bin}))
							pbWarm(b, run, mode, program, want)
							b.ReportAllocs()
							b.ResetTimer()
							for i := range b.N {
								if _, err := run(i, program); err != nil {
									b.Fatal(err)
								}
							}
							b.StopTimer()
							b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/1e3, "µs/sub-call")
						})
					}
				})
			}
		})
	}
}

// BenchmarkProcessParallel is throughput: 1 or 2 callers, each running the
// CPU-bound loop of 200,000 iterations back to back on one runtime (under
// process isolation with as many children kept ready as there are
// callers), b.N runs in all. runs/s is the figure; the ratio of 2 callers
// to 1 is the scaling.
func BenchmarkProcessParallel(b *testing.B) {
	bin := pbDsh(b)
	want := pbComputeWant()
	for _, l := range pbLangs {
		b.Run(l.name, func(b *testing.B) {
			for _, mode := range []string{pbInProcess, pbProcess} {
				b.Run(mode, func(b *testing.B) {
					for _, callers := range []int{1, 2} {
						b.Run(fmt.Sprintf("%d callers", callers), func(b *testing.B) {
							run := pbRuntimeRunner(pbRuntime(b, l, mode, pbRuntimeOptions{bin: bin, pool: callers}))
							// Warm as many children as there are callers.
							var wg sync.WaitGroup
							var failed atomic.Pointer[error]
							for range callers {
								wg.Go(func() {
									if err := pbCheck(run, l.compute, want); err != nil {
										failed.CompareAndSwap(nil, &err)
									}
								})
							}
							wg.Wait()
							if err := failed.Load(); err != nil {
								b.Fatal(*err)
							}
							if mode == pbProcess {
								time.Sleep(500 * time.Millisecond)
							}
							var next atomic.Int64
							b.ResetTimer()
							for range callers {
								wg.Go(func() {
									for i := int(next.Add(1)); i <= b.N; i = int(next.Add(1)) {
										if _, err := run(i, l.compute); err != nil {
											failed.CompareAndSwap(nil, &err)
											return
										}
									}
								})
							}
							wg.Wait()
							b.StopTimer()
							if err := failed.Load(); err != nil {
								b.Fatal(*err)
							}
							b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "runs/s")
						})
					}
				})
			}
		})
	}
}

// BenchmarkProcessCrash is the cost of a crash: each iteration runs
// `return 1+1` on a settled pool (warm), then a program that grows its heap
// past the child's 64 MiB cap (the child is killed or its runtime stops it:
// worker-exit, and the child is replaced), then `return 1+1` at once
// (after-crash), while the replacement starts. With 2 children kept ready
// the next run has another; with 1, the replacement has had the crash
// run's time to start; with none it must start a child. ns/op is the three
// runs and is not the figure: warm-p50-µs, after-crash-p50-µs and
// crash-run-p50-ms are.
func BenchmarkProcessCrash(b *testing.B) {
	bin := pbDsh(b)
	budgets := ptc.DefaultBudgets()
	budgets.MaxMemoryMB = process.MinMemoryMB
	budgets.ComputeMs, budgets.MaxWallMs = 10000, 20000
	for _, l := range pbLangs {
		b.Run(l.name, func(b *testing.B) {
			for _, pool := range []int{2, 1, 0} {
				b.Run(fmt.Sprintf("pool %d", pool), func(b *testing.B) {
					opts := pbRuntimeOptions{bin: bin, budgets: budgets, pool: pool}
					if pool == 0 {
						opts.pool = -1
					}
					rt := pbRuntime(b, l, pbProcess, opts)
					run := pbRuntimeRunner(rt)
					pbWarm(b, run, pbProcess, "return 1+1", "2")
					var warm, after, crash []time.Duration
					timed := func(lat *[]time.Duration, f func()) {
						start := time.Now()
						f()
						*lat = append(*lat, time.Since(start))
					}
					trivial := func(i int) {
						if _, err := run(i, "return 1+1"); err != nil {
							b.Fatal(err)
						}
					}
					b.ResetTimer()
					for i := range b.N {
						b.StopTimer()
						time.Sleep(300 * time.Millisecond) // the pool refills
						b.StartTimer()
						timed(&warm, func() { trivial(3 * i) })
						timed(&crash, func() {
							res, err := rt.Run(context.Background(), ptc.Request{Program: l.blowup})
							if err != nil {
								b.Fatal(err)
							}
							if res.Err == nil || res.Err.Kind != ptc.KindWorkerExit {
								b.Fatalf("the blowup ended with %+v, want a worker-exit failure", res.Err)
							}
						})
						timed(&after, func() { trivial(3*i + 2) })
					}
					b.StopTimer()
					pbPercentiles(b, "warm-", warm)
					pbPercentiles(b, "after-crash-", after)
					slices.Sort(crash)
					b.ReportMetric(float64(crash[len(crash)/2].Microseconds())/1e3, "crash-run-p50-ms")
				})
			}
		})
	}
}
