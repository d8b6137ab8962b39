package scripting

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// gcSettings reads the collector's percent and the soft memory limit
// without changing them.
func gcSettings() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// TestTuneGC changes process-wide settings: it restores them, and it runs
// alone (t.Setenv forbids t.Parallel).
func TestTuneGC(t *testing.T) {
	percent0, limit0 := gcSettings()
	t.Cleanup(func() {
		debug.SetGCPercent(percent0)
		debug.SetMemoryLimit(limit0)
	})
	const start, startLimit = 123, 7 << 30
	for _, tc := range []struct {
		name        string
		env         map[string]string // set; every other of GOGC and GOMEMLIMIT is unset
		percent     int
		memoryLimit int64
		wantPercent int
		wantLimit   int64
	}{
		{name: "sets the percent and one and a half times the memory limit",
			percent: 400, memoryLimit: 1024 * MiB, wantPercent: 400, wantLimit: 1536 * MiB},
		{name: "leaves the soft limit when the memory limit is zero",
			percent: 800, wantPercent: 800, wantLimit: startLimit},
		{name: "leaves the percent when it is zero",
			memoryLimit: 64 * MiB, wantPercent: start, wantLimit: 96 * MiB},
		{name: "leaves both when both are zero or negative",
			percent: -1, memoryLimit: -1, wantPercent: start, wantLimit: startLimit},
		{name: "leaves the percent that GOGC in the environment set",
			env: map[string]string{"GOGC": "150"}, percent: 400, memoryLimit: 10 * MiB, wantPercent: start, wantLimit: 15 * MiB},
		{name: "leaves the soft limit that GOMEMLIMIT in the environment set",
			env: map[string]string{"GOMEMLIMIT": "1GiB"}, percent: 400, memoryLimit: 10 * MiB, wantPercent: 400, wantLimit: startLimit},
		{name: "saturates a memory limit whose half again overflows",
			percent: 400, memoryLimit: math.MaxInt64 - 1, wantPercent: 400, wantLimit: math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
				t.Setenv(k, "restored after the test")
				if v, ok := tc.env[k]; ok {
					t.Setenv(k, v)
				} else if err := os.Unsetenv(k); err != nil {
					t.Fatal(err)
				}
			}
			debug.SetGCPercent(start)
			debug.SetMemoryLimit(startLimit)
			TuneGC(tc.percent, tc.memoryLimit)
			if p, l := gcSettings(); p != tc.wantPercent || l != tc.wantLimit {
				t.Errorf("after TuneGC(%d, %d): GOGC %d, soft limit %d; want %d, %d",
					tc.percent, tc.memoryLimit, p, l, tc.wantPercent, tc.wantLimit)
			}
		})
	}
}
