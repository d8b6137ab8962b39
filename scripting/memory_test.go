package scripting_test

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/scripting"
)

// victim records the causes it was interrupted with.
type victim struct {
	mu     sync.Mutex
	causes []error
	stop   chan struct{}
}

func newVictim() *victim { return &victim{stop: make(chan struct{})} }

func (v *victim) Interrupt(cause error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.causes) == 0 {
		close(v.stop)
	}
	v.causes = append(v.causes, cause)
}

func (v *victim) interrupted() []error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]error(nil), v.causes...)
}

func TestMemoryLimitErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		want  string
	}{
		{"a whole number of MiB is printed as is", 256 * scripting.MiB, "script exceeded the memory limit (256 MiB)"},
		{"a fraction of a MiB is rounded up", 3*scripting.MiB/2 + 1, "script exceeded the memory limit (2 MiB)"},
		{"the default limit reads 1024 MiB", 1 << 30, "script exceeded the memory limit (1024 MiB)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := scripting.NewMemoryGuard(tc.limit, scripting.MemoryGuardOptions{}).Err()
			if err.Error() != tc.want {
				t.Errorf("message = %q, want %q", err, tc.want)
			}
			if !errors.Is(err, scripting.ErrMemoryLimit) {
				t.Error("errors.Is(err, ErrMemoryLimit) = false")
			}
			var mle *scripting.MemoryLimitError
			if !errors.As(err, &mle) || mle.Limit != tc.limit {
				t.Errorf("errors.As gives %+v, want limit %d", mle, tc.limit)
			}
		})
	}
}

func TestAZeroLimitTurnsTheGuardOff(t *testing.T) {
	g := scripting.NewMemoryGuard(0, scripting.MemoryGuardOptions{})
	if g != nil {
		t.Fatalf("NewMemoryGuard(0) = %v, want nil", g)
	}
	leave := g.Enter(newVictim())
	leave()
	if g.Limit() != 0 || g.Err() != nil {
		t.Errorf("a nil guard has limit %d and error %v", g.Limit(), g.Err())
	}
}

// liveHeap returns the live heap after a collection.
func liveHeap() int64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// limitAbove returns a limit of a whole number of MiB, extra above the live
// heap of the test process.
func limitAbove(extra int64) int64 {
	return (liveHeap()/scripting.MiB)*scripting.MiB + extra
}

// allocate keeps allocating 1 MiB chunks (kept live) until v is interrupted
// or max bytes are held; it returns how much it held.
func allocate(v *victim, max int64) int64 {
	var held [][]byte
	var n int64
	for n < max {
		select {
		case <-v.stop:
			return n
		default:
		}
		b := make([]byte, scripting.MiB)
		for k := 0; k < len(b); k += 4096 {
			b[k] = 1 // touch the pages, as a script's data would
		}
		held = append(held, b)
		n += int64(len(b))
		time.Sleep(50 * time.Microsecond) // a script's pace, roughly
	}
	runtime.KeepAlive(held)
	return n
}

func TestTheGuardStopsTheCallsRunningWhenTheHeapPassesTheLimit(t *testing.T) {
	limit := limitAbove(64 * scripting.MiB)
	g := scripting.NewMemoryGuard(limit, scripting.MemoryGuardOptions{})
	hog, bystander, gone := newVictim(), newVictim(), newVictim()

	leaveGone := g.Enter(gone)
	leaveGone() // left before: not running when the limit passes
	leaveBystander := g.Enter(bystander)
	defer leaveBystander()
	leave := g.Enter(hog)
	held := allocate(hog, 4*limit)
	leave()
	leave() // leaving twice is harmless

	want := fmt.Sprintf("script exceeded the memory limit (%d MiB)", limit/scripting.MiB)
	for _, tc := range []struct {
		name string
		v    *victim
		want int
	}{
		{"the call that allocates is interrupted once", hog, 1},
		{"another call running then is interrupted too", bystander, 1},
		{"a call that had left is not", gone, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			causes := tc.v.interrupted()
			if len(causes) != tc.want {
				t.Fatalf("interrupted %d times, want %d", len(causes), tc.want)
			}
			for _, c := range causes {
				if c.Error() != want || !errors.Is(c, scripting.ErrMemoryLimit) {
					t.Errorf("cause = %q, want %q matching ErrMemoryLimit", c, want)
				}
			}
		})
	}
	t.Run("the allocation stops soon after the limit", func(t *testing.T) {
		if held > limit+64*scripting.MiB {
			t.Errorf("the victim held %d MiB before it was stopped; the limit is %d MiB", held/scripting.MiB, limit/scripting.MiB)
		}
	})
}

func TestGarbageOverTheLimitIsCollectedNotKilledFor(t *testing.T) {
	// With the collector off, garbage piles up past the limit: the guard
	// must collect it rather than stop the call.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	limit := limitAbove(32 * scripting.MiB)
	g := scripting.NewMemoryGuard(limit, scripting.MemoryGuardOptions{})
	forced := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(forced)
	before := forced[0].Value.Uint64()

	v := newVictim()
	leave := g.Enter(v)
	var sink []byte
	for n := int64(0); n < 3*limit; n += scripting.MiB {
		sink = make([]byte, scripting.MiB)
		sink[0] = 1
		time.Sleep(20 * time.Microsecond)
	}
	runtime.KeepAlive(sink)
	leave()

	if c := v.interrupted(); len(c) > 0 {
		t.Errorf("a call making only garbage was interrupted: %v", c)
	}
	metrics.Read(forced)
	if forced[0].Value.Uint64() == before {
		t.Error("the guard never collected, so the test proves nothing")
	}
}

func TestTheSamplerRunsOnlyWhileACallIsEntered(t *testing.T) {
	g := scripting.NewMemoryGuard(1<<40, scripting.MemoryGuardOptions{})
	for range 3 {
		leave := g.Enter(newVictim())
		time.Sleep(5 * time.Millisecond)
		leave()
		goleak.VerifyNone(t, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
	}
}

// BenchmarkMemoryGuardEnterLeave is what a call pays to be watched.
func BenchmarkMemoryGuardEnterLeave(b *testing.B) {
	g := scripting.NewMemoryGuard(1<<40, scripting.MemoryGuardOptions{})
	v := newVictim()
	b.ReportAllocs()
	for b.Loop() {
		g.Enter(v)()
	}
}

// BenchmarkMemoryGuardSample is one sample of the heap, what the sampler
// does every Interval while a call is entered and the heap is under the
// limit.
func BenchmarkMemoryGuardSample(b *testing.B) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	b.ReportAllocs()
	for b.Loop() {
		metrics.Read(s)
	}
}
