//go:build !linux

package tests

import (
	"io"
	"os/exec"
)

// runOnPty is supported on Linux only (it opens /dev/ptmx).
func runOnPty(*exec.Cmd, []byte, bool, io.Writer) (int, error) { return 0, errNoPty }
