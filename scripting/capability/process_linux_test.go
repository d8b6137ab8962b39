package capability_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/capability"
)

// procEntry is one process as /proc shows it.
type procEntry struct {
	pid, ppid int
	state     byte
	comm      string
	environ   []byte
}

// procs lists the processes /proc shows now.
func procs(t *testing.T) []procEntry {
	t.Helper()
	names, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []procEntry
	for _, n := range names {
		pid, err := strconv.Atoi(n.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + n.Name() + "/stat")
		if err != nil {
			continue
		}
		open, i := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		f := strings.Fields(string(b[i+1:]))
		if open < 0 || len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		env, _ := os.ReadFile("/proc/" + n.Name() + "/environ")
		out = append(out, procEntry{pid: pid, ppid: ppid, state: f[0][0], comm: string(b[open+1 : i]), environ: env})
	}
	return out
}

// leftovers lists the live processes carrying mark in their environment,
// and the zombies dsh (this process) has not reaped.
func leftovers(t *testing.T, mark string) []string {
	t.Helper()
	var out []string
	self := os.Getpid()
	for _, p := range procs(t) {
		switch {
		case p.state != 'Z' && bytes.Contains(p.environ, []byte("MARK="+mark+"\x00")):
			out = append(out, "live "+strconv.Itoa(p.pid)+" "+p.comm)
		case p.state == 'Z' && p.ppid == self:
			out = append(out, "zombie child "+strconv.Itoa(p.pid)+" "+p.comm)
		}
	}
	return out
}

// killMarked kills what a failed test left behind.
func killMarked(t *testing.T, mark string) {
	for _, p := range procs(t) {
		if bytes.Contains(p.environ, []byte("MARK="+mark+"\x00")) {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

// subreaper makes the test process a child subreaper for the test.
func subreaper(t *testing.T) {
	t.Helper()
	if err := capability.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

func TestRunLeavesNoDescendant(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	f := newFixture(t, capability.Config{KillGrace: 2 * time.Second})
	cases := []struct {
		name, script, opts, wantPrefix string
	}{
		{"a child that called setsid, after a normal exit",
			`setsid sh -c "sleep 60" & echo started`, ``,
			`{"stdout":"started\n","stderr":"","exitCode":0,`},
		{"a double-forked daemon, after a normal exit",
			`(setsid sh -c "sleep 60 & sleep 60 & exit 0" &); sleep 0.2; echo started`, ``,
			`{"stdout":"started\n","stderr":"","exitCode":0,`},
		{"a child that called setsid, after a timeout",
			`setsid sh -c "sleep 60" & echo started; sleep 60`, `,"timeoutMs":` + strconv.FormatInt(testtime.Ms(300), 10),
			`{"stdout":"started\n","stderr":"","exitCode":null,"signal":"SIGTERM","truncated":false,"timedOut":true,`},
		{"a daemon that replaced its environment's other variables",
			`setsid env -u PATH -u HOME sleep 60 & echo started`, ``,
			`{"stdout":"started\n","stderr":"","exitCode":0,`},
	}
	for _, reaper := range []bool{false, true} {
		for _, c := range cases {
			name := c.name + ", with dsh as a subreaper"
			if !reaper {
				name = c.name + ", without a subreaper"
			}
			t.Run(name, func(t *testing.T) {
				if reaper {
					subreaper(t)
				}
				mark := strconv.FormatInt(time.Now().UnixNano(), 36)
				t.Cleanup(func() { killMarked(t, mark) })
				start := time.Now()
				got := f.ok(t, "process", "run", `[["sh","-c",`+quote(c.script)+`],{"env":{"MARK":`+quote(mark)+`}`+c.opts+`}]`)
				if !strings.HasPrefix(got, c.wantPrefix) {
					t.Errorf("got %s", got)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("the call took %v", d)
				}
				// What the call killed is dead when it returns; without a
				// subreaper, PID 1 reaps it (or keeps it as a zombie).
				if left := leftovers(t, mark); len(left) > 0 {
					t.Errorf("left behind: %q", left)
				}
			})
		}
	}
}

// helperEnv names the workspace of the helper process TestHelperDsh.
const helperEnv = "DSH_CAPABILITY_TEST_HELPER"

// TestHelperDsh is not a test: run as a subprocess by
// TestRunChildDiesWithDsh, it stands for dsh running a program.
func TestHelperDsh(t *testing.T) {
	ws := os.Getenv(helperEnv)
	if ws == "" {
		t.Skip("a helper process for TestRunChildDiesWithDsh")
	}
	f := newFixture(t, capability.Config{Workspace: ws})
	_, _ = f.call(context.Background(), t, "process", "run", `[["sh","-c","echo $$ > child.pid; exec sleep 60"]]`)
}

func TestRunChildDiesWithDsh(t *testing.T) {
	ws := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperDsh$")
	helper.Env = append(os.Environ(), helperEnv+"="+ws)
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := pidFile(t, ws+"/child.pid")
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	waitDead(t, pid)
}

// TestRunLeavesNoAdoptedOrphan: a descendant that left the process group
// and replaced its whole environment (env -i) carries no call token; with
// dsh as a subreaper it is adopted by dsh and killed as an orphan of the
// call when the call's program ends.
func TestRunLeavesNoAdoptedOrphan(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	subreaper(t)
	f := newFixture(t, capability.Config{KillGrace: 2 * time.Second})
	// A fractional duration unique to this run names the escapee.
	secs := fmt.Sprintf("600.%d", time.Now().UnixNano()%1000000)
	alive := func() []int {
		var pids []int
		for _, p := range procs(t) {
			cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
			if p.state != 'Z' && bytes.Contains(cmd, []byte(secs)) {
				pids = append(pids, p.pid)
			}
		}
		return pids
	}
	t.Cleanup(func() {
		for _, pid := range alive() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	got := f.ok(t, "process", "run", `[["sh","-c",`+quote(`setsid env -i sleep `+secs+` </dev/null >/dev/null 2>&1 & sleep 0.2; echo started`)+`]]`)
	if !strings.HasPrefix(got, `{"stdout":"started\n"`) {
		t.Fatalf("got %s", got)
	}
	if pids := alive(); len(pids) > 0 {
		t.Errorf("the env -i escapee outlived its call: %v", pids)
	}
	if left := leftovers(t, "none"); len(left) > 0 {
		t.Errorf("left behind: %q", left)
	}
}

// TestRunTrustsNoToken: a descendant that left the process group and
// forged a call token (any value) is still an orphan of the call: dsh, as
// a subreaper, knows the children it started, and the token protects
// nothing.
func TestRunTrustsNoToken(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	subreaper(t)
	f := newFixture(t, capability.Config{KillGrace: 2 * time.Second})
	cases := []struct{ name, token string }{
		{"a made-up token", "fake"},
		{"the token dsh once gave its MCP servers", "dsh-own-child"},
		{"an empty token", ""},
	}
	for _, c := range cases {
		t.Run("an escapee carrying "+c.name+" is killed when its call ends", func(t *testing.T) {
			mark := strconv.FormatInt(time.Now().UnixNano(), 36)
			t.Cleanup(func() { killMarked(t, mark) })
			script := `setsid env DSH_CALL_TOKEN=` + c.token + ` sleep 60 </dev/null >/dev/null 2>&1 & sleep 0.2; echo started`
			got := f.ok(t, "process", "run", `[["sh","-c",`+quote(script)+`],{"env":{"MARK":`+quote(mark)+`}}]`)
			if !strings.HasPrefix(got, `{"stdout":"started\n"`) {
				t.Fatalf("got %s", got)
			}
			if left := leftovers(t, mark); len(left) > 0 {
				t.Errorf("left behind: %q", left)
			}
		})
	}
}
