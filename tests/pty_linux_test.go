package tests

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// runOnPty runs cmd with its standard input on a new pseudo-terminal (and,
// with onStdout, its standard output, copied to out), after typing input
// into the terminal. Echo and output processing are off, so out receives
// exactly what cmd writes. It returns cmd's exit status.
func runOnPty(cmd *exec.Cmd, input []byte, onStdout bool, out io.Writer) (int, error) {
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errNoPty, err)
	}
	defer master.Close()
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		return 0, fmt.Errorf("TIOCGPTN: %w", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		return 0, fmt.Errorf("unlockpt: %w", err)
	}
	slave, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return 0, err
	}
	defer slave.Close()
	t, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
	if err != nil {
		return 0, fmt.Errorf("TCGETS: %w", err)
	}
	t.Lflag &^= unix.ECHO
	t.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, t); err != nil {
		return 0, fmt.Errorf("TCSETS: %w", err)
	}

	cmd.Stdin = slave
	if onStdout {
		cmd.Stdout = slave
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	slave.Close() // the child holds its own copies
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(out, master)
		if errors.Is(err, syscall.EIO) { // every slave end is closed
			err = nil
		}
		copied <- err
	}()
	if _, err := master.Write(input); err != nil {
		return 0, err
	}
	werr := cmd.Wait()
	cerr := <-copied // reads return EIO once the child's copies are closed
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		return ee.ExitCode(), nil
	case werr != nil:
		return 0, werr
	}
	if cerr != nil {
		return 0, cerr
	}
	return 0, nil
}
