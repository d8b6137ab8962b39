package scripting

import (
	"os"
	"runtime/debug"
)

// TuneGC sets the Go collector for a process that runs scripts: the
// collector's target percentage (GOGC) to percent, and the runtime's soft
// memory limit (GOMEMLIMIT) to one and a half times memoryLimit, the limit
// in bytes given to [NewMemoryGuard] (the dsh command's --memory-limit).
// A percent or memoryLimit <= 0 leaves that setting as it is, and so does
// a GOGC or GOMEMLIMIT in the environment: the person running the process
// has the last word, as the Go runtime documents.
//
// Why a host wants it: goja boxes the numbers it computes and both
// interpreters allocate a small value per step while the live heap stays
// small, so with Go's default of 100 the collector runs very often
// (measured in BENCHMARKS.md, "Lever 3 and the targets"). A higher percent
// lets the heap grow further past what is live between collections; the
// soft limit keeps that garbage from taking the process's resident size
// far past the memory guard's limit. It is one and a half times the guard's
// limit, not the limit itself, because a soft limit at the live heap makes
// the collector run without pause while a script's heap nears the limit,
// slowing every call before the guard stops the script.
//
// Both settings are process-wide: TuneGC is for the program that owns the
// process. Call it from main, before the first script runs; the dsh
// command calls it with its own percent at start and again with its
// --memory-limit once the flags are read. Nothing in this module sets
// either on its own.
func TuneGC(percent int, memoryLimit int64) {
	if _, set := os.LookupEnv("GOGC"); percent > 0 && !set {
		debug.SetGCPercent(percent)
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); memoryLimit > 0 && !set {
		debug.SetMemoryLimit(softMemoryLimit(memoryLimit))
	}
}

// softMemoryLimit is the runtime's soft limit for a memory guard's limit:
// one and a half times it, saturating rather than overflowing.
func softMemoryLimit(limit int64) int64 {
	const most = int64(^uint64(0) >> 1)
	if limit > most/3*2 {
		return most
	}
	return limit + limit/2
}
