package reaper

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// subreaper makes the test process a child subreaper for the test.
func subreaper(t *testing.T) {
	t.Helper()
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
}

// needSetsid skips a test on a system without the setsid program.
func needSetsid(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
}

// marker returns a sleep duration unique to this test run, which names its
// sleeps in /proc/<pid>/cmdline; every process still holding it is killed
// when the test ends.
func marker(t *testing.T) string {
	t.Helper()
	m := fmt.Sprintf("600.%d", time.Now().UnixNano()%1000000000)
	t.Cleanup(func() {
		for _, pid := range holding(m) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return m
}

// holding lists the live processes whose command line holds m.
func holding(m string) []int {
	var pids []int
	for _, p := range scan() {
		if p.state == 'Z' {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
		if bytes.Contains(cmd, []byte(m)) {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// zombieChildren lists the zombie children of the test process.
func zombieChildren() []int {
	var pids []int
	for _, p := range scan() {
		if p.state == 'Z' && p.ppid == os.Getpid() {
			pids = append(pids, p.pid)
		}
	}
	return pids
}

// program runs script with sh as a recorded child in a group of its own,
// carrying mark, waits for it, and returns its pid (its group's id).
func program(t *testing.T, script string, mark *Mark) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = os.Environ()
	if mark != nil {
		cmd.Env = WithMark(cmd.Env, mark)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	Forget(cmd.Process.Pid)
	return cmd.Process.Pid
}

func TestKillTrustsNoEnvironment(t *testing.T) {
	needSetsid(t)
	cases := []struct{ name, script string }{
		{"a setsid child that forged a call token",
			`setsid env DSH_CALL_TOKEN=fake sleep M </dev/null >/dev/null 2>&1 & sleep 0.2`},
		{"a setsid child that dropped its whole environment",
			`setsid env -i sleep M </dev/null >/dev/null 2>&1 & sleep 0.2`},
		{"a double-forked daemon with a forged token, and its child",
			`(setsid env DSH_CALL_TOKEN=fake sh -c "sleep M & sleep M" </dev/null >/dev/null 2>&1 &); sleep 0.2`},
		{"a setsid child that took the token of a call that has ended",
			`setsid env DSH_CALL_TOKEN=ENDED sleep M </dev/null >/dev/null 2>&1 & sleep 0.2`},
	}
	for _, c := range cases {
		t.Run(c.name+" is killed when its program ends", func(t *testing.T) {
			subreaper(t)
			m := marker(t)
			ended, err := NewMark()
			if err != nil {
				t.Fatal(err)
			}
			ended.Done()
			mark, err := NewMark()
			if err != nil {
				t.Fatal(err)
			}
			defer mark.Done()
			script := bytes.ReplaceAll([]byte(c.script), []byte("M"), []byte(m))
			script = bytes.ReplaceAll(script, []byte("ENDED"), []byte(ended.token))
			pgid := program(t, string(script), mark)
			if len(holding(m)) == 0 {
				t.Fatal("the test's escapee did not start")
			}
			Kill(Leftovers{Pgid: pgid, Mark: mark}, 5*time.Second)
			if left := holding(m); len(left) > 0 {
				t.Errorf("escapees outlived the sweep: %v", left)
			}
			if z := zombieChildren(); len(z) > 0 {
				t.Errorf("zombie children left unreaped: %v", z)
			}
		})
	}
}

func TestKillSparesWhatDshStarted(t *testing.T) {
	needSetsid(t)
	subreaper(t)
	m := marker(t)
	own := exec.Command("sleep", m)
	if err := Start(own); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = own.Process.Kill()
		_ = own.Wait()
		Forget(own.Process.Pid)
	}()
	running, err := NewMark()
	if err != nil {
		t.Fatal(err)
	}
	// An orphan of a call still running, found by another call's sweep.
	pgid := program(t, `setsid sleep `+m+`1 </dev/null >/dev/null 2>&1 & sleep 0.2`, running)
	Kill(Leftovers{Pgid: pgid + 1<<20}, 5*time.Second) // a group no one is in

	t.Run("a child started through Start is not taken for an orphan", func(t *testing.T) {
		if p, ok := readProc(own.Process.Pid); !ok || p.state == 'Z' {
			t.Errorf("dsh's own child was killed: %+v", p)
		}
	})
	t.Run("an orphan carrying a running call's mark is left to that call", func(t *testing.T) {
		if left := holding(m + "1"); len(left) != 1 {
			t.Errorf("got %v, want the running call's orphan", left)
		}
	})
	t.Run("the same orphan is killed once that call has ended", func(t *testing.T) {
		running.Done()
		Kill(Leftovers{}, 5*time.Second)
		if left := holding(m + "1"); len(left) > 0 {
			t.Errorf("the orphan outlived its call: %v", left)
		}
	})
}

func TestKillVerifiedSparesAReusedPid(t *testing.T) {
	m := marker(t)
	cmd := exec.Command("sleep", m)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	start, ok := startTime(cmd.Process.Pid)
	if !ok {
		t.Fatal("no start time")
	}
	t.Run("a pid whose start time differs from the one seen is not signalled", func(t *testing.T) {
		if killVerified(cmd.Process.Pid, start+1) {
			t.Error("killVerified signalled a process that started at another time")
		}
		if p, ok := readProc(cmd.Process.Pid); !ok || p.state == 'Z' {
			t.Errorf("the process was killed: %+v", p)
		}
	})
	t.Run("the process seen is signalled", func(t *testing.T) {
		if !killVerified(cmd.Process.Pid, start) {
			t.Error("killVerified did not signal the process it saw")
		}
	})
}

// helperEnv tells TestHelperDescendants to run.
const helperEnv = "DSH_REAPER_TEST_HELPER"

// TestHelperDescendants is not a test: run as a subprocess by
// TestKillDescendants, it stands for dsh exiting while its calls' programs
// and their escapees run.
func TestHelperDescendants(t *testing.T) {
	m := os.Getenv(helperEnv)
	if m == "" {
		t.Skip("a helper process for TestKillDescendants")
	}
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	mark, err := NewMark()
	if err != nil {
		t.Fatal(err)
	}
	running := exec.Command("sh", "-c", `setsid env DSH_CALL_TOKEN=fake sleep `+m+` </dev/null >/dev/null 2>&1 & (setsid sleep `+m+` &); exec sleep `+m)
	running.Env = WithMark(os.Environ(), mark)
	running.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := Start(running); err != nil {
		t.Fatal(err)
	}
	for len(holding(m)) < 3 {
		time.Sleep(10 * time.Millisecond)
	}
	KillDescendants(5 * time.Second)
}

func TestKillDescendants(t *testing.T) {
	needSetsid(t)
	m := marker(t)
	helper := exec.Command(os.Args[0], "-test.run=^TestHelperDescendants$")
	helper.Env = append(os.Environ(), helperEnv+"="+m)
	out, err := helper.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if left := holding(m); len(left) > 0 {
		t.Errorf("processes outlived dsh's exit: %v", left)
	}
}
