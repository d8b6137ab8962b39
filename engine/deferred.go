package engine

import (
	"fmt"

	"github.com/dsh-go/dsh/dsl"
)

// Bounds of the context messages one call defers (see [Run.DeferContext]):
// each deferred message is kept until the call's result is built, so a
// script deferring in a loop would otherwise grow the result without end
// (400,000 small messages made a 913 MB result).
const (
	// MaxDeferredMessages bounds the number of messages one call defers.
	MaxDeferredMessages = 1000
	// MaxDeferredBytes bounds their size in all, counted as a value
	// crossing from a script is (dsl.Limits.MaxBytes: the UTF-8 bytes of
	// strings and keys, plus dsl.ValueBytes per value): the bound of one
	// such value, 64 MiB.
	MaxDeferredBytes = dsl.DefaultMaxBytes
)

// deferredLimit is the error of deferring one more message of size bytes
// after count messages of total bytes, or nil within the bounds.
func deferredLimit(count, total, size int) error {
	if count >= MaxDeferredMessages {
		return fmt.Errorf("deferred context: a call may defer at most %d messages", MaxDeferredMessages)
	}
	if total+size > MaxDeferredBytes {
		return fmt.Errorf("deferred context: a call may defer at most %d bytes of messages", MaxDeferredBytes)
	}
	return nil
}

// deferredBytes is the size of m's content and source as dsl.Limits counts
// a value, or a number above limit once it passes limit (the walk stops
// there).
func deferredBytes(m Message, limit int) int {
	n := len(m.ID) + len(m.Role)
	stack := []any{ContentJSON(m.Content), m.Source}
	for len(stack) > 0 && n <= limit {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n += dsl.ValueBytes
		switch x := v.(type) {
		case string:
			n += len(x)
		case *dsl.Object:
			for k, mv := range x.All() {
				n += len(k)
				stack = append(stack, mv)
			}
		case []any:
			stack = append(stack, x...)
		case map[string]any:
			for k, mv := range x {
				n += len(k)
				stack = append(stack, mv)
			}
		}
	}
	return n
}
