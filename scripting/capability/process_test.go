package capability_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/capability"
)

func TestRun(t *testing.T) {
	f := newFixture(t, capability.Config{})
	write(t, f.path("sub/x"), "")
	write(t, f.path("notexec.sh"), "#!/bin/sh\necho hi\n")
	symlink(t, t.TempDir(), f.path("out"))
	write(t, f.path("garbage"), "\x00\x01 not a program")
	if err := os.Chmod(f.path("garbage"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, want string
	}{
		{"output, exit code and counts come back", `[["sh","-c","echo out; echo err >&2; exit 3"]]`,
			`{"stdout":"out\n","stderr":"err\n","exitCode":3,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":4,"stderrBytes":4}`},
		{"stdin is fed to the program", `[["cat"],{"stdin":"hello"}]`,
			`{"stdout":"hello","stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":5,"stderrBytes":0}`},
		{"without stdin the program reads nothing", `[["cat"]]`,
			`{"stdout":"","stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":0,"stderrBytes":0}`},
		{"env adds variables", `[["sh","-c","printf %s \"$FOO\""],{"env":{"FOO":"bar baz"}}]`,
			`{"stdout":"bar baz","stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":7,"stderrBytes":0}`},
		{"cwd is inside the workspace", `[["pwd"],{"cwd":"sub"}]`,
			`{"stdout":` + quote(f.path("sub")+"\n") + `,"stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":` + strconv.Itoa(len(f.path("sub"))+1) + `,"stderrBytes":0}`},
		{"a program killed by a signal has no exit code", `[["sh","-c","kill -KILL $$"]]`,
			`{"stdout":"","stderr":"","exitCode":null,"signal":"SIGKILL","truncated":false,"timedOut":false,"stdoutBytes":0,"stderrBytes":0}`},
		{"a program that does not read a big stdin still finishes", `[["true"],{"stdin":` + quote(strings.Repeat("x", 4<<20)) + `}]`,
			`{"stdout":"","stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":0,"stderrBytes":0}`},
		{"invalid UTF-8 output is replaced", `[["printf","a\\377b"]]`,
			`{"stdout":"a` + "\ufffd" + `b","stderr":"","exitCode":0,"signal":null,"truncated":false,"timedOut":false,"stdoutBytes":3,"stderrBytes":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ok(t, "process", "run", tt.args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("the environment is minimal", func(t *testing.T) {
		t.Setenv("DSH_SECRET_FOR_TEST", "leak")
		got := f.ok(t, "process", "run", `[["env"],{"env":{"EXTRA":"1"}}]`)
		if strings.Contains(got, "DSH_SECRET_FOR_TEST") || !strings.Contains(got, "EXTRA=1") || !strings.Contains(got, "PATH=") {
			t.Errorf("got %s", got)
		}
	})
	errs := []struct {
		name, args, code, msg string
	}{
		{"a missing program is ENOEXEC", `[["no-such-program-dsh"]]`, "ENOEXEC", "ENOEXEC: run: program not found in PATH: no-such-program-dsh"},
		{"a program is looked up in the child's PATH", `[["sh"],{"env":{"PATH":null}}]`, "ENOEXEC", "ENOEXEC: run: program not found in PATH: sh"},
		{"a file that is not executable is ENOEXEC", `[["./notexec.sh"]]`, "ENOEXEC", "ENOEXEC: run: not executable: ./notexec.sh"},
		{"a file the kernel cannot execute is ENOEXEC", `[["./garbage"]]`, "ENOEXEC", "ENOEXEC: run: cannot execute: ./garbage"},
		{"a missing path is ENOEXEC", `[["./nope"]]`, "ENOEXEC", "ENOEXEC: run: no such program: ./nope"},
		{"a cwd outside is EOUTSIDE", `[["pwd"],{"cwd":"../"}]`, "EOUTSIDE", "EOUTSIDE: path resolves outside the workspace: ../"},
		{"a cwd through a symlink out is EOUTSIDE", `[["pwd"],{"cwd":"out"}]`, "EOUTSIDE", "EOUTSIDE: path resolves outside the workspace: out"},
		{"a missing cwd is ENOENT", `[["pwd"],{"cwd":"nope"}]`, "ENOENT", "ENOENT: no such file or directory: nope"},
		{"a file as cwd is ENOTDIR", `[["pwd"],{"cwd":"sub/x"}]`, "ENOTDIR", "ENOTDIR: not a directory: sub/x"},
		{"argv that is not an array is EINVAL", `["ls -l"]`, "EINVAL", "EINVAL: run: argv must be a non-empty array of strings"},
		{"an empty argv is EINVAL", `[[]]`, "EINVAL", "EINVAL: run: argv must be a non-empty array of strings"},
		{"a non-string argument is EINVAL", `[["echo",1]]`, "EINVAL", "EINVAL: run: argv[1] must be a string"},
		{"an empty program is EINVAL", `[[""]]`, "EINVAL", "EINVAL: run: argv[0] must not be empty"},
		{"a bad timeout is EINVAL", `[["true"],{"timeoutMs":0}]`, "EINVAL", "EINVAL: run: options.timeoutMs must be a positive integer of at most 2147483647"},
		{"a non-string env value is EINVAL", `[["true"],{"env":{"A":1}}]`, "EINVAL", `EINVAL: run: options.env["A"] must be a string or null`},
		{"a bad env name is EINVAL", `[["true"],{"env":{"A=B":"1"}}]`, "EINVAL", `EINVAL: run: options.env has a bad variable name "A=B"`},
		{"a non-string stdin is EINVAL", `[["true"],{"stdin":1}]`, "EINVAL", "EINVAL: run: options.stdin must be a string"},
		{"a shell string option is EINVAL", `[["true"],{"shell":true}]`, "EINVAL", "EINVAL: run: unknown option options.shell"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			e := f.fail(t, "process", "run", tt.args)
			if e.Code() != tt.code || e.Message != tt.msg {
				t.Errorf("got %s %q\nwant %s %q", e.Code(), e.Message, tt.code, tt.msg)
			}
		})
	}
}

// pidFile waits for the program to write its grandchild's pid to path.
func pidFile(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("pid file holds %q", b)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the program did not write its pid file")
	return 0
}

// waitDead fails the test unless pid is gone (or a zombie) within a
// generous bound.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(b), ')'); i > 0 && strings.HasPrefix(string(b[i:]), ") Z") {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	t.Fatalf("process %d is still alive", pid)
}

func TestRunStopsItsProcessGroup(t *testing.T) {
	f := newFixture(t, capability.Config{KillGrace: testtime.D(200 * time.Millisecond)})
	// The timeout is what these cases are about, and the program must have
	// started and printed before it: scaled (internal/testtime).
	timeout := `{"timeoutMs":` + strconv.FormatInt(testtime.Ms(100), 10) + `}`
	t.Run("a timeout resolves with timedOut and the output so far", func(t *testing.T) {
		start := time.Now()
		got := f.ok(t, "process", "run", `[["sh","-c","echo started; exec sleep 30"],`+timeout+`]`)
		want := `{"stdout":"started\n","stderr":"","exitCode":null,"signal":"SIGTERM","truncated":false,"timedOut":true,"stdoutBytes":8,"stderrBytes":0}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if time.Since(start) > 10*time.Second {
			t.Error("the timeout did not stop the program")
		}
	})
	t.Run("a program that ignores TERM is killed after the grace", func(t *testing.T) {
		got := f.ok(t, "process", "run", `[["sh","-c","trap '' TERM; echo ready; sleep 30; echo late"],`+timeout+`]`)
		want := `{"stdout":"ready\n","stderr":"","exitCode":null,"signal":"SIGKILL","truncated":false,"timedOut":true,"stdoutBytes":6,"stderrBytes":0}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("cancelling kills the program and its grandchild", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		pidPath := f.path("cancel.pid")
		errc := make(chan error, 1)
		go func() {
			_, err := f.call(ctx, t, "process", "run", `[["sh","-c","sleep 30 & echo $! > cancel.pid; wait"]]`)
			errc <- err
		}()
		pid := pidFile(t, pidPath)
		cancel()
		err := <-errc
		if err == nil || err.Error() != "ECANCELED: run was cancelled: sh" {
			t.Errorf("got %v", err)
		}
		waitDead(t, pid)
	})
	t.Run("a grandchild holding the pipes does not hold up the result, and is killed", func(t *testing.T) {
		start := time.Now()
		got := f.ok(t, "process", "run", `[["sh","-c","sleep 30 & echo $! > bg.pid; echo done"]]`)
		if !strings.HasPrefix(got, `{"stdout":"done\n","stderr":"","exitCode":0,`) {
			t.Errorf("got %s", got)
		}
		if time.Since(start) > 10*time.Second {
			t.Error("run waited for the grandchild")
		}
		waitDead(t, pidFile(t, f.path("bg.pid")))
	})
	t.Run("a grandchild that left the group and holds the pipes is given up on after the grace", func(t *testing.T) {
		if _, err := exec.LookPath("setsid"); err != nil {
			t.Skip("no setsid")
		}
		start := time.Now()
		got := f.ok(t, "process", "run", `[["sh","-c","setsid sh -c 'echo $$ > esc.pid; exec sleep 30' & while [ ! -s esc.pid ]; do sleep 0.01; done; echo done"]]`)
		pid := pidFile(t, f.path("esc.pid"))
		defer func() { _ = syscall.Kill(pid, syscall.SIGKILL) }()
		if !strings.HasPrefix(got, `{"stdout":"done\n","stderr":"","exitCode":0,`) {
			t.Errorf("got %s", got)
		}
		if time.Since(start) > 10*time.Second {
			t.Error("run waited for the escaped grandchild")
		}
	})
	t.Run("a pre-cancelled call starts nothing", func(t *testing.T) {
		e := f.failCtx(cancelledCtx(), t, "process", "run", `[["sh","-c","echo x > started"]]`)
		if e.Message != "ECANCELED: run was cancelled: sh" {
			t.Errorf("got %q", e.Message)
		}
		if _, err := os.Stat(f.path("started")); !os.IsNotExist(err) {
			t.Error("the program ran")
		}
	})
}

func TestRunCapsOutput(t *testing.T) {
	f := newFixture(t, capability.Config{MaxOutputBytes: 1 << 20})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := f.ok(t, "process", "run", `[["sh","-c","yes | head -c 50000000; yes e | head -c 3000000 >&2"]]`)
	runtime.ReadMemStats(&after)
	if !strings.HasSuffix(got, `"exitCode":0,"signal":null,"truncated":true,"timedOut":false,"stdoutBytes":50000000,"stderrBytes":3000000}`) {
		t.Errorf("got ...%s", got[len(got)-150:])
	}
	if want := `{"stdout":"` + strings.Repeat(`y\n`, 1<<19) + `","stderr":"` + strings.Repeat(`e\n`, 1<<19) + `"`; !strings.HasPrefix(got, want) {
		t.Error("the kept output is not the first MiB of each stream")
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 40<<20 {
		t.Errorf("run allocated %d MB for 53 MB of output", alloc>>20)
	}
}
