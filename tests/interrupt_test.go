package tests

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dsh-go/dsh/internal/testtime"
)

// cmdInterrupt implements "interrupt WITHIN FILE CODE PROG [ARGS...]": it
// starts PROG, waits (at most a minute) until FILE exists, sends PROG an
// interrupt (SIGINT, as Ctrl-C does), and requires it to exit with status
// CODE within WITHIN of the signal, scaled by the tests' time scale
// (internal/testtime). PROG's output is the command's.
func cmdInterrupt(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! interrupt")
	}
	if len(args) < 4 {
		ts.Fatalf("usage: interrupt WITHIN FILE CODE PROG [ARGS...]")
	}
	within, err := time.ParseDuration(args[0])
	if err != nil {
		ts.Fatalf("interrupt: bad duration %q", args[0])
	}
	within = testtime.D(within)
	want, err := strconv.Atoi(args[2])
	if err != nil {
		ts.Fatalf("interrupt: bad exit status %q", args[2])
	}
	prog, err := exec.LookPath(args[3])
	ts.Check(err)
	cmd := exec.Command(prog, args[4:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PWD=" + cmd.Dir}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "NO_COLOR", "GORACE", "EXAMPLES", "PLUGINS", "DEMO", "DEMOPLUGINS"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		ts.Stdout().Write(stdout.Bytes())
		ts.Stderr().Write(stderr.Bytes())
	}()

	file := ts.MkAbs(args[1])
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(file); err == nil {
			break
		}
		select {
		case err := <-done:
			ts.Fatalf("%s exited (%v) before %s appeared", args[3], err, args[1])
		default:
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			ts.Fatalf("interrupt: %s did not appear within a minute", args[1])
		}
	}
	sent := time.Now()
	ts.Check(cmd.Process.Signal(os.Interrupt))
	var werr error
	select {
	case werr = <-done:
	case <-time.After(within):
		_ = cmd.Process.Kill()
		<-done
		ts.Fatalf("%s did not exit within %v of the interrupt", args[3], within)
	}
	took := time.Since(sent)
	ts.Logf("%s exited %v after the interrupt", args[3], took.Round(time.Millisecond))
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(werr, &ee):
		got = ee.ExitCode()
	case werr != nil:
		ts.Fatalf("interrupt: %v", werr)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d %v after the interrupt, want %d", args[3], got, took.Round(time.Millisecond), want)
	}
}
