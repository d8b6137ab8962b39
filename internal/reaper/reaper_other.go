//go:build !linux

package reaper

import (
	"errors"
	"fmt"
	"time"
)

// BecomeSubreaper makes the calling process a child subreaper on Linux; on
// this system it returns an error wrapping errors.ErrUnsupported.
func BecomeSubreaper() error {
	return fmt.Errorf("becoming a child subreaper: %w", errors.ErrUnsupported)
}

// startTime is unknown here: the record matches by pid alone.
func startTime(int) (uint64, bool) { return 0, false }

// Kill does nothing here: without /proc, only the process group kill its
// caller sends stops what a program left behind.
func Kill(Leftovers, time.Duration) {}

// KillDescendants does nothing here.
func KillDescendants(time.Duration) {}
