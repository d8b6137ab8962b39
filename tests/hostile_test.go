package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dsh-go/dsh/internal/testtime"
)

// TestHostilePlugins runs testdata/hostile/*.txtar: each case is a scripts
// directory of misbehaving plugins and a batch of calls, run through a built
// dsh binary (a crash or a hang there cannot take this test process down).
// The archive's comment holds the case's expectations, one a line:
//
//	args: run calls.json     the dsh arguments after the global flags (this default)
//	flags: --memory-limit 256  global flags, before the arguments
//	exit: 0                  the exit status (0 unless given)
//	within: 10s              the whole run's wall-clock bound (30s unless given)
//	rss-below: 512           peak RSS bound in MiB
//	ok ID                    call ID succeeded
//	fails ID REGEXP          call ID failed with a message matching REGEXP
//	stdout REGEXP            standard output matches (args other than run)
//	stderr REGEXP            standard error matches
//	no-stderr REGEXP         standard error does not match
//	no-process MARKER        after dsh exits, no process's command line holds MARKER
//
// Lines starting with # are comments. With "args: run ...", --json is added
// and the results are read by call id.
//
// The budgets in a case (the timeoutMs of its tools, its --ptc-compute-ms and
// --ptc-wall-ms) and its within bound are scaled by the tests' time scale
// (internal/testtime), and so is each "Nms" of an expectation whose N is one
// of those budgets (see budgets).
func TestHostilePlugins(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hostile", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/hostile")
	}
	bin := buildDsh(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := readHostileCase(file)
			if err != nil {
				t.Fatal(err)
			}
			c.run(t, bin)
		})
	}
}

// dshBinary is built once per test process, without the race detector, so
// that memory figures are the command's own.
var dshBinary struct {
	once sync.Once
	path string
	err  error
}

func buildDsh(t testing.TB) string {
	t.Helper()
	dshBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "dsh-hostile-")
		if err != nil {
			dshBinary.err = err
			return
		}
		goBin, err := exec.LookPath("go")
		if err != nil {
			dshBinary.err = fmt.Errorf("building dsh needs the go command on PATH: %v", err)
			return
		}
		out := filepath.Join(dir, "dsh")
		cmd := exec.Command(goBin, "build", "-o", out, "github.com/dsh-go/dsh/cmd/dsh")
		if b, err := cmd.CombinedOutput(); err != nil {
			dshBinary.err = fmt.Errorf("go build: %v\n%s", err, b)
			return
		}
		dshBinary.path = out
	})
	if dshBinary.err != nil {
		t.Fatal(dshBinary.err)
	}
	return dshBinary.path
}

type callExpect struct {
	id      string
	ok      bool
	message *regexp.Regexp
}

type hostileCase struct {
	archive   *txtar.Archive
	args      []string
	flags     []string
	exit      int
	within    time.Duration
	rssMiB    int64
	calls     []callExpect
	stdout    []*regexp.Regexp
	stderr    []*regexp.Regexp
	noStderr  []*regexp.Regexp
	noProcess []string
}

func readHostileCase(file string) (*hostileCase, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	c := &hostileCase{archive: a, args: []string{"run", "calls.json"}, within: 30 * time.Second}
	b := newBudgets(testtime.ScaleWithoutRace()) // the dsh binary's budgets
	for i, f := range a.Files {
		a.Files[i].Data = []byte(b.source(string(f.Data)))
	}
	for _, line := range strings.Split(string(a.Comment), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "flags:"); ok {
			b.flags(strings.Fields(rest)) // before the expectations that show them
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		key = strings.TrimSuffix(key, ":")
		rest = strings.TrimSpace(rest)
		bad := func(err error) error { return fmt.Errorf("%s:%d: %s: %v", file, n, key, err) }
		switch key {
		case "args":
			c.args = strings.Fields(rest)
		case "flags":
			c.flags = b.flags(strings.Fields(rest))
		case "exit":
			if c.exit, err = strconv.Atoi(rest); err != nil {
				return nil, bad(err)
			}
		case "within":
			if c.within, err = time.ParseDuration(rest); err != nil {
				return nil, bad(err)
			}
		case "rss-below":
			if c.rssMiB, err = strconv.ParseInt(rest, 10, 64); err != nil {
				return nil, bad(err)
			}
		case "ok":
			c.calls = append(c.calls, callExpect{id: rest, ok: true})
		case "fails":
			id, re, _ := strings.Cut(rest, " ")
			rx, err := regexp.Compile(b.text(strings.TrimSpace(re)))
			if err != nil {
				return nil, bad(err)
			}
			c.calls = append(c.calls, callExpect{id: id, message: rx})
		case "stdout", "stderr", "no-stderr":
			rx, err := regexp.Compile(b.text(rest))
			if err != nil {
				return nil, bad(err)
			}
			switch key {
			case "stdout":
				c.stdout = append(c.stdout, rx)
			case "stderr":
				c.stderr = append(c.stderr, rx)
			default:
				c.noStderr = append(c.noStderr, rx)
			}
		case "no-process":
			c.noProcess = append(c.noProcess, rest)
		default:
			return nil, fmt.Errorf("%s:%d: unknown directive %q", file, n, key)
		}
	}
	c.within = b.d(c.within)
	return c, nil
}

func (c *hostileCase) run(t *testing.T, bin string) {
	dir := t.TempDir()
	for _, f := range c.archive.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append([]string{}, c.flags...)
	isRun := len(c.args) > 0 && c.args[0] == "run"
	if isRun {
		args = append(args, "--json")
	}
	args = append(args, c.args...)

	r := runDsh(t, bin, dir, args, c.within)
	report := r.report
	if r.signal != 0 {
		t.Fatalf("dsh died of %v after %v\n%s", r.signal, r.took, report())
	}
	if r.took > c.within {
		t.Errorf("dsh took %v, more than %v\n%s", r.took.Round(time.Millisecond), c.within, report())
	}
	if r.exit != c.exit {
		t.Errorf("exit status %d, want %d\n%s", r.exit, c.exit, report())
	}
	if c.rssMiB > 0 && r.rssMiB >= c.rssMiB {
		t.Errorf("peak RSS %d MiB, want under %d MiB", r.rssMiB, c.rssMiB)
	}
	for _, rx := range c.stdout {
		if !rx.MatchString(r.stdout) {
			t.Errorf("stdout does not match %q\n%s", rx, report())
		}
	}
	for _, rx := range c.stderr {
		if !rx.MatchString(r.stderr) {
			t.Errorf("stderr does not match %q\n%s", rx, report())
		}
	}
	for _, rx := range c.noStderr {
		if rx.MatchString(r.stderr) {
			t.Errorf("stderr matches %q\n%s", rx, report())
		}
	}
	if isRun && len(c.calls) > 0 {
		c.checkResults(t, []byte(r.stdout), report)
	}
	for _, marker := range c.noProcess {
		if pids := processesWith(marker); len(pids) > 0 {
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("processes with %q outlived dsh: %v", marker, pids)
		}
	}
}

func (c *hostileCase) checkResults(t *testing.T, out []byte, report func() string) {
	results, err := readBatch(out)
	if err != nil {
		t.Fatalf("reading the batch result: %v\n%s", err, report())
	}
	for _, want := range c.calls {
		r, found := results[want.id]
		if !found {
			t.Errorf("no result for call %s\n%s", want.id, report())
			continue
		}
		msg := r.message()
		switch {
		case want.ok && r.IsError:
			t.Errorf("call %s failed: %s", want.id, clip(msg))
		case !want.ok && !r.IsError:
			t.Errorf("call %s succeeded, want a failure matching %q", want.id, want.message)
		case !want.ok && !want.message.MatchString(msg):
			t.Errorf("call %s failed with %q, want a message matching %q", want.id, clip(msg), want.message)
		}
		// A run_code failure carries the program's captured output, which
		// the output ledger bounds (--ptc-max-output), not this rule; a
		// script's own error text is cut at 16 KiB, marked.
		if len(msg) > 1000 && !strings.HasPrefix(msg, "code run failed (") && !cutErrorText(msg) {
			t.Errorf("call %s: a %d-byte message reaches the model", want.id, len(msg))
		}
	}
}

// cutErrorText reports whether msg ends with a script's error text as dsh
// cuts it (at most 16 KiB, then the marker) after at most 1000 bytes of
// dsh's own words ("tool \"x\" returned invalid output: …").
func cutErrorText(msg string) bool {
	const marker = "… (truncated)"
	return strings.HasSuffix(msg, marker) && len(msg) <= 1000+16<<10+len(marker)
}

// callResult is one call's result in the output of "dsh run --json".
type callResult struct {
	IsError bool `json:"isError"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
	Value   json.RawMessage `json:"value"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// message is the failure's message, "" for a success.
func (r callResult) message() string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Message
}

// readBatch reads the output of "dsh run --json": the results by call id.
func readBatch(out []byte) (map[string]callResult, error) {
	var batch struct {
		Results []struct {
			CallID string     `json:"callId"`
			Result callResult `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &batch); err != nil {
		return nil, err
	}
	results := make(map[string]callResult, len(batch.Results))
	for _, r := range batch.Results {
		results[r.CallID] = r.Result
	}
	return results, nil
}

// dshRun is what one run of the dsh binary did.
type dshRun struct {
	args           []string
	stdout, stderr string
	took           time.Duration
	exit           int            // the exit status; -1 when killed by a signal
	signal         syscall.Signal // the signal that killed it, or 0
	rssMiB         int64          // peak resident size of dsh itself (see runDsh)
}

// report describes the run for a failure message.
func (r *dshRun) report() string {
	return fmt.Sprintf("dsh %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), clip(r.stdout), clip(r.stderr))
}

// runDsh runs bin with args in dir, in a process group of its own. It gets
// twice within before the whole group is killed, so that a run that
// overstays is reported with its output rather than as a test timeout. A
// failure to start it ends the test.
func runDsh(t *testing.T, bin, dir string, args []string, within time.Duration) *dshRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*within+5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Start()
	var hwm int64 // the peak of dsh's own resident set, in KiB
	if err == nil {
		hwm, err = waitSampled(cmd)
	}
	r := &dshRun{args: args, took: time.Since(start)}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal()
		}
	case err != nil:
		t.Fatalf("dsh: %v\n%s", err, r.report())
	}
	// The peak resident size is dsh's own, sampled from /proc while it runs
	// (VmHWM, the high-water mark of its memory since its exec). The wait
	// status's maxrss cannot be used where /proc can: it starts from the
	// high-water mark of the test process that forked it (Linux keeps it
	// across exec), hundreds of MiB under -race.
	switch {
	case hwm > 0:
		r.rssMiB = hwm / 1024
	case cmd.ProcessState != nil:
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.rssMiB = ru.Maxrss / 1024
		}
	}
	return r
}

// vmHWM is a process's resident high-water mark in KiB (VmHWM in
// /proc/<pid>/status), 0 when it cannot be read.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kib, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kib
		}
	}
	return 0
}

// processesWith returns the pids whose command line contains marker.
func processesWith(marker string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})), marker) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func clip(s string) string {
	const max = 4000
	if len(s) > max {
		return s[:max] + fmt.Sprintf("… (%d more bytes)", len(s)-max)
	}
	return s
}

// waitSampled waits for the started cmd, sampling its peak resident set
// (VmHWM, in KiB) every 5 ms meanwhile, and returns that peak and Wait's
// error.
func waitSampled(cmd *exec.Cmd) (int64, error) {
	var hwm int64
	stop, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if kib := vmHWM(cmd.Process.Pid); kib > hwm {
				hwm = kib
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-sampled
	return hwm, err
}
