package js

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/dsh-go/dsh/ptc"
)

// newWarmRuntime is a program runtime keeping warm base runtimes, closed
// after the test.
func newWarmRuntime(t testing.TB, warm int) *ProgramRuntime {
	t.Helper()
	rt, err := NewProgramRuntime(ProgramOptions{WarmRuntimes: warm})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// idleBases waits until the pool holds n idle bases and returns them.
func idleBases(t *testing.T, rt *ProgramRuntime, n int) []*programBase {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		idle := rt.pool.Idle()
		if len(idle) == n {
			return idle
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d idle bases, want %d", len(idle), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestWarmRuntimesAreNeverReused(t *testing.T) {
	for _, warm := range []int{-1, 1, 2} {
		t.Run(fmt.Sprintf("warm=%d", warm), func(t *testing.T) {
			rt := newWarmRuntime(t, warm)
			for i := range 4 {
				// Each run pollutes what the next one would see if it
				// shared a runtime.
				got := resultJSON(t, runProgram(t, rt, context.Background(), toolsNS(echoBinding("")), `
const seen = [typeof globalThis.leak, typeof Object.prototype.polluted, typeof tools.extra, JSON.stringify === globalThis.mine];
globalThis.leak = 1;
Object.prototype.polluted = 1;
try { tools.extra = 1 } catch {}
globalThis.mine = JSON.stringify = () => "x";
return seen`))
				if want := `{"logs":[],"value":["undefined","undefined","undefined",false]}`; got != want {
					t.Fatalf("run %d: got %s, want %s", i, got, want)
				}
			}
		})
	}
}

func TestARunDisposesOfTheBaseItTook(t *testing.T) {
	rt := newWarmRuntime(t, 1)
	base := idleBases(t, rt, 1)[0]
	runProgram(t, rt, context.Background(), nil, `return 1`)
	select {
	case <-base.loop.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the base a run took is still running")
	}
	if again := idleBases(t, rt, 1)[0]; again == base {
		t.Fatal("a used base went back to the pool")
	}
}

func TestCloseDisposesOfTheWarmRuntimes(t *testing.T) {
	rt, err := NewProgramRuntime(ProgramOptions{WarmRuntimes: 3})
	if err != nil {
		t.Fatal(err)
	}
	bases := idleBases(t, rt, 3)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	for i, b := range bases {
		select {
		case <-b.loop.Done():
		default:
			t.Errorf("idle base %d still runs after Close", i)
		}
	}
	select {
	case <-rt.pool.Done():
	default:
		t.Error("the builder still runs after Close")
	}
	if _, err := rt.Run(context.Background(), ptc.Request{Program: "return 1"}); err == nil {
		t.Error("a run after Close did not fail")
	}
	_ = rt.Close() // idempotent
}

func TestCloseWhileTheBuilderBuilds(t *testing.T) {
	for range 5 {
		rt, err := NewProgramRuntime(ProgramOptions{WarmRuntimes: 2})
		if err != nil {
			t.Fatal(err)
		}
		_ = rt.Close() // goleak (TestMain) checks nothing is left
	}
}

// benchTrivial runs `return 1+1` b.N times, pausing between runs.
func benchTrivial(b *testing.B, warm int, pause time.Duration) {
	rt := newWarmRuntime(b, warm)
	req := ptc.Request{Program: "return 1+1", Bindings: toolsNS(echoBinding(""))}
	ctx := context.Background()
	if res, err := rt.Run(ctx, req); err != nil || res.Err != nil { // compiled once
		b.Fatal(err, res.Err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if pause > 0 {
			b.StopTimer()
			time.Sleep(pause)
			b.StartTimer()
		}
		start := time.Now()
		res, err := rt.Run(ctx, req)
		lat = append(lat, time.Since(start))
		if err != nil || res.Err != nil {
			b.Fatal(err, res.Err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
}

// BenchmarkProgramTrivialNoPool is BenchmarkProgramTrivial with no warm
// runtimes: every run builds its own.
func BenchmarkProgramTrivialNoPool(b *testing.B) { benchTrivial(b, -1, 0) }

// BenchmarkProgramTrivialWarm is a trivial run's latency when runs come 5 ms
// apart, as the model's calls do: the builder has refilled the pool by then.
func BenchmarkProgramTrivialWarm(b *testing.B) {
	b.Run("pool", func(b *testing.B) { benchTrivial(b, DefaultWarmRuntimes, 5*time.Millisecond) })
	b.Run("nopool", func(b *testing.B) { benchTrivial(b, -1, 5*time.Millisecond) })
}
