package js

import (
	"errors"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
)

// watch returns the loop hook that enters the host's memory guard while an
// instance runs script code (nil without a guard). The loop's entries cover
// calls, top levels, and the work calls leave behind (timers, settlements);
// an instance only awaiting is not running script code, and is not stopped
// when another pushes the heap past the limit.
func (h *Host) watch() func(l *eventloop.Loop) func() {
	g := h.Memory
	if g == nil {
		return nil
	}
	return func(l *eventloop.Loop) func() { return g.Enter(loopVictim{l}) }
}

// loopVictim is an instance's loop as the memory guard stops it: broken with
// the guard's error, so that every call on it fails with exactly that
// message and the pool replaces the instance.
type loopVictim struct{ l *eventloop.Loop }

// Interrupt breaks the loop for cause.
func (v loopVictim) Interrupt(cause error) { v.l.Break(cause) }

// memoryLimit returns the memory guard's error when err is that of a call
// the guard stopped, so that the call fails with exactly its message.
func memoryLimit(err error) (*scripting.MemoryLimitError, bool) {
	if err == nil {
		return nil, false
	}
	var mle *scripting.MemoryLimitError
	if errors.As(err, &mle) {
		return mle, true
	}
	return nil, false
}
