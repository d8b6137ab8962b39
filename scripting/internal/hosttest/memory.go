package hosttest

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting"
)

// MemoryGuard returns a guard whose limit is extra above the live heap of
// the test process, in whole MiB, and the message of the calls it stops.
func MemoryGuard(t testing.TB, extra int64) (*scripting.MemoryGuard, string) {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	limit := int64(s[0].Value.Uint64())/scripting.MiB*scripting.MiB + extra
	return scripting.NewMemoryGuard(limit, scripting.MemoryGuardOptions{}),
		fmt.Sprintf("script exceeded the memory limit (%d MiB)", limit/scripting.MiB)
}

// LiveHeapWithin collects until the live heap is at most limit, for at most
// d, and returns the last live heap.
func LiveHeapWithin(d time.Duration, limit int64) int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for end := time.Now().Add(d); ; time.Sleep(10 * time.Millisecond) {
		runtime.GC()
		metrics.Read(s)
		if live := int64(s[0].Value.Uint64()); live <= limit || time.Now().After(end) {
			return live
		}
	}
}
