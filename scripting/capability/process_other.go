//go:build !linux

package capability

import (
	"errors"
	"fmt"
	"syscall"
	"time"
)

// setDeathSignal does nothing: a parent-death signal is Linux's.
func setDeathSignal(*syscall.SysProcAttr) {}

// BecomeSubreaper makes the calling process a child subreaper on Linux; on
// this system it returns an error wrapping errors.ErrUnsupported.
func BecomeSubreaper() error {
	return fmt.Errorf("becoming a child subreaper: %w", errors.ErrUnsupported)
}

// killLeftovers does nothing here: without /proc, only the process group
// kill stops what a call left behind.
func killLeftovers(string, int, time.Duration) {}
