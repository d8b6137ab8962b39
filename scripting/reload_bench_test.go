package scripting_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
)

// The hot-reload figures: how long a saved file takes to serve, how long a
// swap stalls the calls dispatched meanwhile, and how much a storm of
// reloads costs the calls' throughput. Run with a fixed count, e.g.
//
//	go test -run '^$' -bench 'ReloadWriteToServing|ReloadSwapStall' -benchtime 100x ./scripting/
//	go test -run '^$' -bench ReloadStormThroughput -benchtime 40000x ./scripting/
//
// (the storm needs enough calls, b.N, to span several reloads).

// benchVersion is version n of a plugin with a tool and a pre-execute
// policy.
func benchVersion(n int) string {
	return fmt.Sprintf(`const { defineTool, tools, on } = require("dsh");
tools.register(defineTool({
  name: "ver", description: "The version.", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  isConcurrencySafe: () => true,
  async execute() { return "v%d"; },
}));
on("tools/pre-execute", (exec, next) => next());
`, n)
}

// saveFile writes a file as editors do: a temporary renamed over it.
func saveFile(b *testing.B, dir, rel, text string) {
	b.Helper()
	p := filepath.Join(dir, rel)
	tmp := filepath.Join(dir, "."+rel+".swp")
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		b.Fatal(err)
	}
}

// benchReloader starts a reloader over a directory holding version 0.
func benchReloader(b *testing.B, debounce time.Duration, onReload func(scripting.ReloadEvent)) (*scripting.Reloader, *engine.Service, string) {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ver.js"), []byte(benchVersion(0)), 0o644); err != nil {
		b.Fatal(err)
	}
	svc := engine.New()
	r := &scripting.Reloader{Loader: &scripting.Loader{Service: svc, Hosts: []scripting.Host{&js.Host{}}},
		Dirs: []string{dir}, Debounce: debounce, OnReload: onReload}
	if err := r.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			b.Error(err)
		}
	})
	return r, svc, dir
}

func benchCall(svc *engine.Service, id string) string {
	r := svc.Call(context.Background(), engine.Input{CallID: id, Name: "ver", Arguments: dsl.NewObject()})
	s, _ := r.Value.(string)
	return s
}

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkReloadWriteToServing measures, with the default debounce, the
// time from a file's save to its new version serving (the swap committed:
// the next call sees it).
func BenchmarkReloadWriteToServing(b *testing.B) {
	served := make(chan time.Time, 16)
	_, svc, dir := benchReloader(b, 0, func(ev scripting.ReloadEvent) {
		if ev.Kind == scripting.PluginReloaded {
			served <- ev.At
		}
	})
	var lat []time.Duration
	b.ResetTimer()
	for n := 1; n <= b.N; n++ {
		start := time.Now()
		saveFile(b, dir, "ver.js", benchVersion(n))
		at := <-served
		lat = append(lat, at.Sub(start))
		if got := benchCall(svc, "c"); got != fmt.Sprintf("v%d", n) {
			b.Fatalf("version %d saved, %q serves", n, got)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(percentile(lat, 0.5).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(slices.Max(lat).Microseconds())/1000, "max-ms")
}

// span is a call's (or a swap's) start and end.
type span struct{ from, to time.Time }

func (s span) overlaps(o span) bool { return s.from.Before(o.to) && o.from.Before(s.to) }

// BenchmarkReloadSwapStall measures how long a swap stalls the calls of the
// tool it replaces: callers dispatch without pause while versions prepared
// beforehand are swapped in. Every other iteration is a control: a version
// is prepared alike but not swapped in, and the main goroutine spins for as
// long as the last swap took instead. Calls overlapping a swap are compared
// with calls overlapping a control window (a long call is likelier to
// overlap either), so the difference is the stall the swap itself causes,
// not the machine's noise.
func BenchmarkReloadSwapStall(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ver.js"), []byte(benchVersion(0)), 0o644); err != nil {
		b.Fatal(err)
	}
	svc := engine.New()
	loader := &scripting.Loader{Service: svc, Hosts: []scripting.Host{&js.Host{}}}
	cur, err := loader.Load(context.Background(), dir, "ver.js")
	if err != nil {
		b.Fatal(err)
	}
	var stop atomic.Bool
	var mu sync.Mutex
	var calls []span
	var wg sync.WaitGroup
	for w := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []span
			for i := 0; !stop.Load(); i++ {
				s := span{from: time.Now()}
				if benchCall(svc, fmt.Sprintf("w%d-%d", w, i)) == "" {
					b.Error("a call found no tool")
					return
				}
				s.to = time.Now()
				mine = append(mine, s)
			}
			mu.Lock()
			calls = append(calls, mine...)
			mu.Unlock()
		}()
	}
	var swaps, controls []span
	var disposing sync.WaitGroup
	last := 100 * time.Microsecond
	b.ResetTimer()
	for n := 1; n <= 2*b.N; n++ {
		if err := os.WriteFile(filepath.Join(dir, "ver.js"), []byte(benchVersion(n)), 0o644); err != nil {
			b.Fatal(err)
		}
		next, err := loader.Prepare(context.Background(), dir, "ver.js")
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // the calls slowed by the preparation are over
		retired := next
		if n%2 == 0 {
			s := span{from: time.Now()}
			for time.Since(s.from) < last {
			}
			s.to = time.Now()
			controls = append(controls, s)
		} else {
			old := cur
			s := span{from: time.Now()}
			epoch, err := svc.Swap(func() error { old.Retire(); return next.Commit() })
			s.to = time.Now()
			if err != nil {
				b.Fatal(err)
			}
			swaps = append(swaps, s)
			last = s.to.Sub(s.from)
			cur, retired = next, old
			if err := svc.Drain(context.Background(), epoch); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(5 * time.Millisecond)
		disposing.Add(1)
		go func() {
			defer disposing.Done()
			_ = retired.Dispose(context.Background())
		}()
	}
	b.StopTimer()
	stop.Store(true)
	wg.Wait()
	disposing.Wait()
	_ = cur.Dispose(context.Background())

	var during, control []time.Duration
	for _, c := range calls {
		d := c.to.Sub(c.from)
		if slices.ContainsFunc(swaps, c.overlaps) {
			during = append(during, d)
		} else if slices.ContainsFunc(controls, c.overlaps) {
			control = append(control, d)
		}
	}
	var longestSwap time.Duration
	for _, s := range swaps {
		longestSwap = max(longestSwap, s.to.Sub(s.from))
	}
	µs := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }
	b.ReportMetric(µs(slices.Max(during)), "max-call-swap-µs")
	b.ReportMetric(µs(percentile(during, 0.5)), "p50-call-swap-µs")
	b.ReportMetric(µs(percentile(during, 0.99)), "p99-call-swap-µs")
	b.ReportMetric(µs(slices.Max(control)), "max-call-control-µs")
	b.ReportMetric(µs(percentile(control, 0.5)), "p50-call-control-µs")
	b.ReportMetric(µs(percentile(control, 0.99)), "p99-call-control-µs")
	b.ReportMetric(µs(longestSwap), "max-swap-µs")
}

// BenchmarkReloadStormThroughput compares the calls' throughput during a
// storm of ten reloads a second (a save every 100 ms, a debounce short
// enough for each save to reload) with the throughput without reloads.
// b.N is the number of calls of each run.
func BenchmarkReloadStormThroughput(b *testing.B) {
	var reloads atomic.Int64
	_, svc, dir := benchReloader(b, 20*time.Millisecond, func(ev scripting.ReloadEvent) {
		if ev.Kind == scripting.PluginReloaded {
			reloads.Add(1)
		}
	})
	workers := runtime.GOMAXPROCS(0)
	run := func(calls int) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := next.Add(1); i <= int64(calls); i = next.Add(1) {
					if benchCall(svc, fmt.Sprintf("w%d-%d", w, i)) == "" {
						b.Error("a call found no tool")
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	b.ResetTimer()
	quiet := run(b.N)

	stop := make(chan struct{})
	stormDone := make(chan struct{})
	go func() {
		defer close(stormDone)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			case <-t.C:
				saveFile(b, dir, "ver.js", benchVersion(n))
			}
		}
	}()
	time.Sleep(150 * time.Millisecond) // the storm is under way
	before := reloads.Load()
	storm := run(b.N)
	close(stop)
	<-stormDone
	b.StopTimer()

	b.ReportMetric(float64(b.N)/quiet.Seconds(), "calls/s-quiet")
	b.ReportMetric(float64(b.N)/storm.Seconds(), "calls/s-storm")
	b.ReportMetric(quiet.Seconds()/storm.Seconds(), "storm/quiet")
	b.ReportMetric(float64(reloads.Load()-before)/storm.Seconds(), "reloads/s")
}
