package ptc

import (
	"errors"
	"math"
)

// Budget bounds and defaults (§3.2, §7).
const (
	DefaultComputeMs           = 60_000
	DefaultMaxWallMs           = 600_000
	DefaultMaxOutputBytes      = 67_108_864
	DefaultMaxMemoryMB         = 512
	DefaultMaxParallelSubCalls = 10
	// DefaultMaxSubCalls is how many tool calls one run may make (not in
	// the spec: a bound of dsh's own, see Options.MaxSubCalls).
	DefaultMaxSubCalls = 100_000

	// MaxWallMsLimit is the largest maxWallMs (2^31 − 1 ms, about 24.9 days).
	MaxWallMsLimit = 2_147_483_647
	// MinOutputBytes is the smallest output cap: an empty logs array and an
	// empty failure message ([] and "").
	MinOutputBytes = 4
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER (2^53 − 1).
const maxSafeInteger = 1<<53 - 1

// Budgets are a runtime's limits (§3.2). They are float64 because they are
// validated as the JavaScript numbers a configuration gives; Validate says
// which values a runtime accepts.
type Budgets struct {
	ComputeMs      float64 // busy time of the interpreter, in ms
	MaxWallMs      float64 // elapsed-time ceiling, in ms, never paused
	MaxOutputBytes float64 // the output ledger's cap (§3.3)
	MaxMemoryMB    float64 // a child's memory cap under process isolation, in MiB
}

// DefaultBudgets returns the defaults of §7.
func DefaultBudgets() Budgets {
	return Budgets{
		ComputeMs:      DefaultComputeMs,
		MaxWallMs:      DefaultMaxWallMs,
		MaxOutputBytes: DefaultMaxOutputBytes,
		MaxMemoryMB:    DefaultMaxMemoryMB,
	}
}

// Validate checks b as a runtime loads it, in upstream's order and words:
// every field a finite positive number, then maxOutputBytes a safe integer
// of at least 4, then maxWallMs at most 2147483647. Messages start with
// "<prefix>: " (none when prefix is empty), e.g.
// "goja: config.computeMs must be a positive number, got -1".
func (b Budgets) Validate(prefix string) error {
	fields := [...]struct {
		key string
		v   float64
	}{
		{"computeMs", b.ComputeMs},
		{"maxWallMs", b.MaxWallMs},
		{"maxOutputBytes", b.MaxOutputBytes},
		{"maxMemoryMB", b.MaxMemoryMB},
	}
	for _, f := range fields {
		if !(isFinite(f.v) && f.v > 0) {
			return prefixed(prefix, "config."+f.key+" must be a positive number, got "+jsNumber(f.v))
		}
	}
	if !isSafeInteger(b.MaxOutputBytes) || b.MaxOutputBytes < MinOutputBytes {
		return prefixed(prefix, "config.maxOutputBytes must be a safe integer of at least 4, got "+jsNumber(b.MaxOutputBytes))
	}
	if b.MaxWallMs > MaxWallMsLimit {
		return prefixed(prefix, "config.maxWallMs must be at most 2147483647, got "+jsNumber(b.MaxWallMs))
	}
	return nil
}

// ValidateMaxParallelSubCalls checks the sub-call overlap cap: an integer of
// at least 1, else "maxParallelSubCalls must be a positive integer".
func ValidateMaxParallelSubCalls(n float64) error {
	if !isFinite(n) || n != math.Trunc(n) || n < 1 {
		return errors.New("maxParallelSubCalls must be a positive integer")
	}
	return nil
}

// prefixed is an error "<prefix>: <msg>", or msg alone without a prefix.
func prefixed(prefix, msg string) error {
	if prefix == "" {
		return errors.New(msg)
	}
	return errors.New(prefix + ": " + msg)
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// isSafeInteger is JavaScript's Number.isSafeInteger.
func isSafeInteger(x float64) bool {
	return isFinite(x) && x == math.Trunc(x) && math.Abs(x) <= maxSafeInteger
}
