package lua

import (
	"errors"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// Interrupt stops the Lua code running in the instance for cause (the
// memory guard's); the instance is then discarded. It implements
// scripting.Victim.
func (i *instance) Interrupt(cause error) { i.interrupt(cause) }

// callInterrupted is the error of a call whose instance was interrupted for
// cause: the memory guard's error or the deadline's itself, so that the
// call fails with exactly its message (also when the instance was slow to
// unwind), or the cause wrapped with what was interrupted.
func callInterrupted(what string, cause error) error {
	var mle *scripting.MemoryLimitError
	if errors.As(cause, &mle) {
		return mle
	}
	var to *hostapi.TimedOut
	if errors.As(cause, &to) {
		return to
	}
	return &errCallInterrupted{what: what, cause: cause}
}
