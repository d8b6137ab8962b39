//go:build !linux

package capability

import (
	"syscall"

	"github.com/dsh-go/dsh/internal/reaper"
)

// setDeathSignal does nothing: a parent-death signal is Linux's.
func setDeathSignal(*syscall.SysProcAttr) {}

// BecomeSubreaper makes the calling process a child subreaper on Linux; on
// this system it returns an error wrapping errors.ErrUnsupported.
func BecomeSubreaper() error { return reaper.BecomeSubreaper() }
