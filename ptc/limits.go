package ptc

import (
	"errors"
	"fmt"
	"math"

	"github.com/dsh-go/dsh/dsl"
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
	// DefaultMaxArgumentBytes is the largest compact JSON size of one tool
	// call's arguments (16 MiB; dsh's own, see Options.MaxArgumentBytes).
	DefaultMaxArgumentBytes = 16 << 20
	// DefaultMaxArgumentDepth is the deepest nesting of one tool call's
	// arguments (dsh's own, see Options.MaxArgumentDepth): above the 3,000
	// to 5,000 levels §3.6 requires to cross intact.
	DefaultMaxArgumentDepth = 10_000
	// DefaultMaxQueuedCalls is how many of a run's tool calls may wait to
	// start (dsh's own, see Options.MaxQueuedCalls).
	DefaultMaxQueuedCalls = 10_000

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

// positiveOr is n, or def when n is 0; a negative n is refused as
// "ptc: <name> must be positive, got <n>".
func positiveOr(name string, n, def int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0:
		return 0, fmt.Errorf("ptc: %s must be positive, got %d", name, n)
	}
	return n, nil
}

// argStatus is the outcome of measuring a tool call's arguments.
type argStatus uint8

const (
	argFits    argStatus = iota
	argTooDeep           // nested deeper than the depth cap
	argTooBig            // larger than the byte cap
	argForeign           // holds a value not in dsl's form
)

// measureArguments measures v, a tool call's arguments in dsl's form (nil,
// bool, float64, string, []any, *dsl.Object), against the argument caps,
// without recursion: its nesting (the root array or object at depth 1,
// empty containers included) against maxDepth, and its compact JSON size
// (JSONValueSize's: strings as JSON.stringify writes them, numbers as
// String(n)) against maxBytes; a negative maxBytes measures depth alone. It
// stops at the first cap passed, in the order JSON text would be written,
// so a large value is read only up to the cap and a cycle ends at the depth
// cap. When it meets a value outside dsl's form it stops with argForeign.
//
// It does not judge losslessness: a NaN counts as its String, invalid UTF-8
// as JSONStringSize says, a nil container as null; dsl.Snapshot refuses
// them.
func measureArguments(v any, maxDepth int, maxBytes int64) argStatus {
	var n int64
	counting := maxBytes >= 0
	var frames [16]sizeFrame // the stack of a shallow value, without allocating
	stack := frames[:0]
	add := func(c int64) bool {
		n += c
		return !counting || n <= maxBytes
	}
	addString := func(s string) bool {
		if !counting {
			return true
		}
		c, ok := jsonStringSizeUpTo(s, maxBytes-n)
		n += c
		return ok
	}
	var num [32]byte
	for {
		switch x := v.(type) {
		case nil:
			if !add(4) {
				return argTooBig
			}
		case bool:
			c := int64(5)
			if x {
				c = 4
			}
			if !add(c) {
				return argTooBig
			}
		case float64:
			if counting && !add(int64(len(appendJSNumber(num[:0], x)))) {
				return argTooBig
			}
		case string:
			if !addString(x) {
				return argTooBig
			}
		case []any:
			if len(stack)+1 > maxDepth {
				return argTooDeep
			}
			if len(x) == 0 {
				if !add(2) {
					return argTooBig
				}
				break
			}
			if !add(1) {
				return argTooBig
			}
			stack = append(stack, sizeFrame{list: x, n: len(x)})
			v = x[0]
			continue
		case *dsl.Object:
			if x == nil {
				if !add(4) {
					return argTooBig
				}
				break
			}
			if len(stack)+1 > maxDepth {
				return argTooDeep
			}
			if x.Len() == 0 {
				if !add(2) {
					return argTooBig
				}
				break
			}
			k, first := x.At(0)
			if !add(1) || !addString(k) || !add(1) {
				return argTooBig
			}
			stack = append(stack, sizeFrame{obj: x, n: x.Len()})
			v = first
			continue
		default:
			return argForeign
		}

		// v is measured: on to the next item, closing finished containers.
		for {
			if len(stack) == 0 {
				return argFits
			}
			f := &stack[len(stack)-1]
			f.i++
			if f.i < f.n {
				if !add(1) { // the comma
					return argTooBig
				}
				if f.obj != nil {
					var k string
					k, v = f.obj.At(f.i)
					if !addString(k) || !add(1) {
						return argTooBig
					}
				} else {
					v = f.list[f.i]
				}
				break
			}
			if !add(1) { // the closing bracket
				return argTooBig
			}
			stack = stack[:len(stack)-1]
		}
	}
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
