//go:build unix

package js_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/js"
)

// run_code at scale through the full pipeline (issue 14's targets): 10,000
// sub-calls in one program (time linear in the count, retained memory flat),
// the compute budget's overshoot, and the throughput of two programs at once
// on two cores against one.

// scaleService is a service with the greet Go tool registered and opts.
func scaleService(b *testing.B, opts ...engine.Option) *engine.Service {
	b.Helper()
	svc := engine.New(opts...)
	if _, err := svc.Global().Register(scaleGreet(b)); err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkRunCodeScale runs one program of n awaited sub-calls to a Go
// tool per op, for n of 100, 1,000 and 10,000: time linear in the count is
// a flat µs/sub-call across them, under the default bounds (a run's
// sub-calls do not count against the engine's nested-call budget).
func BenchmarkRunCodeScale(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprintf("sub-calls=%d", n), func(b *testing.B) {
			run := ptcBench(b, scaleService(b))
			mustValue(b, run(0, subCallProgram("greet", 2)), `"result":`)
			program := subCallProgram("greet", n)
			b.ReportAllocs()
			i := 1
			for b.Loop() {
				if r := run(i, program); r.IsError {
					b.Fatal(r.Error.Message)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/sub-call")
		})
	}
}

// settled collects garbage until the heap in use stops shrinking (the base
// pool's builder may still be finishing a replacement) and returns it with
// the number of live goroutines.
func settled() (heapInuse uint64, goroutines int) {
	var ms runtime.MemStats
	prev := ^uint64(0)
	for range 5 {
		time.Sleep(50 * time.Millisecond)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse >= prev {
			break
		}
		prev = ms.HeapInuse
	}
	return ms.HeapInuse, runtime.NumGoroutine()
}

const mib = 1 << 20

// BenchmarkRunCodeScaleMemory runs the 10,000-sub-call program once per op
// (run it with -benchtime 20x) and reports the heap in use after a GC and
// the live goroutines before the first run, after it, and after the last:
// retained memory flat is after-first ≈ after-last.
func BenchmarkRunCodeScaleMemory(b *testing.B) {
	const n = 10000
	run := ptcBench(b, scaleService(b))
	program := subCallProgram("greet", n)
	heap0, gr0 := settled()
	i := 0
	for b.Loop() {
		if r := run(i, program); r.IsError {
			b.Fatal(r.Error.Message)
		}
		if i == 0 {
			b.StopTimer()
			heap1, gr1 := settled()
			b.ReportMetric(float64(heap1)/mib, "heap-after-first-MiB")
			b.ReportMetric(float64(gr1), "goroutines-after-first")
			b.StartTimer()
		}
		i++
	}
	heapN, grN := settled()
	b.ReportMetric(float64(heap0)/mib, "heap-before-MiB")
	b.ReportMetric(float64(heapN)/mib, "heap-after-last-MiB")
	b.ReportMetric(float64(gr0), "goroutines-before")
	b.ReportMetric(float64(grN), "goroutines-after-last")
	b.ReportMetric(float64(i), "runs")
}

// overshootBudgetMs is the compute budget of the hot loops.
const overshootBudgetMs = 50

// hotLoop spins until its budget stops it.
const hotLoop = `for (;;) {}`

// BenchmarkComputeOvershoot runs a hot loop under a 50 ms compute budget
// per op (run it with -benchtime 100x), through the runtime alone and
// through the pipeline, and reports the wall time past the budget: p50, p99
// and max, in ms.
func BenchmarkComputeOvershoot(b *testing.B) {
	budgets := ptc.DefaultBudgets()
	budgets.ComputeMs = overshootBudgetMs
	want := ptc.ComputeBudgetFailure(overshootBudgetMs)
	b.Run("runtime", func(b *testing.B) {
		rt, err := js.NewProgramRuntime(js.ProgramOptions{Budgets: budgets})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rt.Close() })
		benchOvershoot(b, func() {
			res, err := rt.Run(context.Background(), ptc.Request{Program: hotLoop})
			if err != nil {
				b.Fatal(err)
			}
			if res.Err == nil || *res.Err != *want {
				b.Fatalf("got %+v, want %+v", res.Err, want)
			}
		})
	})
	b.Run("pipeline", func(b *testing.B) {
		run := ptcBenchWith(b, engine.New(), js.ProgramOptions{Budgets: budgets})
		i := 0
		benchOvershoot(b, func() {
			r := run(i, hotLoop)
			i++
			if !r.IsError || !strings.Contains(r.Error.Message, want.Message) {
				b.Fatalf("got %+v, want a failure with %q", r.Error, want.Message)
			}
		})
	})
}

// benchOvershoot times run once per op and reports its wall time less the
// budget, by percentile.
func benchOvershoot(b *testing.B, run func()) {
	b.Helper()
	run() // warm: compile the program, fill the base pool
	budget := overshootBudgetMs * time.Millisecond
	var over []time.Duration
	for b.Loop() {
		start := time.Now()
		run()
		over = append(over, time.Since(start)-budget)
	}
	slices.Sort(over)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(percentile(over, 50)), "p50-overshoot-ms")
	b.ReportMetric(ms(percentile(over, 99)), "p99-overshoot-ms")
	b.ReportMetric(ms(over[len(over)-1]), "max-overshoot-ms")
}

// percentile is the p-th percentile of sorted samples (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	k := (len(sorted)*p + 99) / 100
	return sorted[max(k, 1)-1]
}

// parallelPrograms are the programs whose throughput is compared with one
// and with two callers.
var parallelPrograms = []struct{ name, program string }{
	{"trivial", "return 1+1"},
	{"sub-calls=200", subCallProgram("greet", 200)},
	{"compute", `let s = 0;
for (let i = 0; i < 1e5; i++) s += i;
for (let i = 0; i < 3; i++) { const r = await tools.greet({name: "n" + i}); s += r.greeting.length; }
return s;`},
}

// parallelBatch is how many programs each phase of an op runs.
const parallelBatch = 8

// BenchmarkRunCodeParallel compares, per program, the throughput of one
// caller with that of two callers at once, on one service and runtime. Each
// op runs a batch of programs on one caller, then the same batch split over
// two callers; the phases interleave so that the machine's noise falls on
// both. It reports programs/s of each, their ratio (the target is ≥ 1.6) and
// the process's CPU use in each phase (cores busy, and CPU time per
// program: all of the process's, the pool's builder and the GC included,
// which is what bounds the throughput of two callers). The go-control case
// runs a fixed amount of pure Go work (hashing) in place of a program: its
// ratio is what the machine gives two goroutines at the time.
func BenchmarkRunCodeParallel(b *testing.B) {
	b.Run("go-control", func(b *testing.B) {
		data := make([]byte, 64<<10)
		benchParallel(b, func(int) error {
			for range 64 { // about 3 ms
				sha256.Sum256(data)
			}
			return nil
		})
	})
	for _, pp := range parallelPrograms {
		for _, pool := range []struct {
			name string
			warm int
		}{{"", 0}, {"/no-pool", -1}} {
			// Without the warm pool each caller builds its runtimes on its
			// own goroutine: no CPU of the phase goes to a builder.
			b.Run(pp.name+pool.name, func(b *testing.B) {
				run := ptcBenchWith(b, scaleService(b), js.ProgramOptions{WarmRuntimes: pool.warm})
				mustValue(b, run(0, pp.program), `"result":`)
				benchParallel(b, func(i int) error {
					if r := run(i, pp.program); r.IsError {
						return errors.New(r.Error.Message)
					}
					return nil
				})
			})
		}
	}
}

// benchParallel runs, per op, a phase of one caller then a phase of two
// callers of work, and reports their throughput, ratio and CPU use.
// Other goroutines of the process (the base pool's builder, the GC) count
// in the CPU use of the phase they run in.
func benchParallel(b *testing.B, work func(i int) error) {
	b.Helper()
	var next atomic.Int64
	var wall1, wall2, cpu1, cpu2 time.Duration
	for b.Loop() {
		w, c := parallelPhase(b, work, 1, &next)
		wall1, cpu1 = wall1+w, cpu1+c
		w, c = parallelPhase(b, work, 2, &next)
		wall2, cpu2 = wall2+w, cpu2+c
	}
	programs := float64(b.N * parallelBatch)
	b.ReportMetric(programs/wall1.Seconds(), "programs/s-1-caller")
	b.ReportMetric(programs/wall2.Seconds(), "programs/s-2-callers")
	b.ReportMetric(wall1.Seconds()/wall2.Seconds(), "ratio")
	b.ReportMetric(cpu1.Seconds()/wall1.Seconds(), "cores-busy-1-caller")
	b.ReportMetric(cpu2.Seconds()/wall2.Seconds(), "cores-busy-2-callers")
	b.ReportMetric(float64(cpu1.Milliseconds())/programs, "cpu-ms/program-1-caller")
	b.ReportMetric(float64(cpu2.Milliseconds())/programs, "cpu-ms/program-2-callers")
}

// parallelPhase runs work parallelBatch times split over callers goroutines
// and returns the wall time and the process's CPU time (user and system) it
// took. The callers' goroutines, and those they start, carry the pprof
// label phase=callers-<callers> (select them with -tagfocus).
func parallelPhase(b *testing.B, work func(i int) error, callers int, next *atomic.Int64) (wall, cpu time.Duration) {
	cpu0 := processCPU(b)
	start := time.Now()
	labels := pprof.Labels("phase", "callers-"+strconv.Itoa(callers))
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			pprof.Do(context.Background(), labels, func(context.Context) {
				for range parallelBatch / callers {
					if err := work(int(next.Add(1))); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	wg.Wait()
	wall = time.Since(start)
	if b.Failed() {
		b.FailNow()
	}
	return wall, processCPU(b) - cpu0
}

// processCPU is the CPU time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
