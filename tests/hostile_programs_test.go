package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dsh-go/dsh/internal/testtime"
)

// TestHostilePrograms runs testdata/programs/*.txtar, the hostile-program
// suite of issue 16: run_code programs that attack the host (CPU, memory,
// the Go stack, time, calls after the run, fan-out, argument size and
// depth, reentrancy, privilege, tampering, exfiltration, state across runs,
// the output ledger). Each case runs in both program languages and under
// both isolation modes, as subtests CASE/LANG/MODE (LANG ts or lua, MODE
// in-process or process), each one invocation of a built dsh binary:
//
//	dsh --executor ptc --ptc-lang LANG [--ptc-isolation MODE] --approve allow
//	    --log events.jsonl FLAGS... run calls.json --json
//
// with dsh's default budgets (a minute of compute time), so that
// no case races a budget it is not about; a case about one sets it with
// flags.
//
// whose calls are the case's program (call id "hostile"), its next program
// if it has one ("next"), then "return 1+1" ("healthy"), which must return
// 2: the host stays healthy and the next run succeeds. Every invocation
// must also exit 0 (not die of a signal), stay within its wall-clock and
// peak-RSS bounds, and leave no dsh process behind (a child of process
// isolation that outlives its parent). The process mode is skipped while
// the dsh binary has no --ptc-isolation flag.
//
// A case's workspace gets testdata/programs/tools.js as scripts/tools.js
// (the tools echo, take, touch, hang, fail and keys; read it) and the
// archive's files other than the programs. The programs are program.ts and
// program.lua, and next.ts and next.lua (a program run after it, in the
// same dsh, for what must not survive a run); a language without its
// program must say why with skip.LANG.
//
// The archive's comment holds the directives, one a line, and lines
// starting with #, comments that say what the case shows:
//
//	want KIND REGEXP   the program's outcome: KIND ok and REGEXP matching
//	                   the compact JSON of the result ("" when it returned
//	                   nothing), or a failure kind (timeout, exception,
//	                   worker-exit, output-limit, invalid-output, abort)
//	                   and REGEXP matching the failure's message, as in
//	                   "code run failed (KIND): MESSAGE"
//	then KIND REGEXP   the same for the next program
//	logs REGEXP        the program's logs joined with newlines (a
//	                   failure's captured output) match
//	flags ARGS...      more dsh flags, after the ones above (the last of a
//	                   repeated flag wins)
//	within DURATION    the wall-clock bound of the invocation (10s)
//	rss-below MiB      the peak-RSS bound (512)
//	no-file PATH       the workspace has no file PATH after the run (the
//	                   touch tool writes "touched")
//	event REGEXP       a line of the session log matches
//	no-event REGEXP    no line of the session log matches
//	skip REASON        skip the subtest
//	known REASON       a bug this case found, not yet fixed: the case keeps
//	                   the right expectations; while they fail the subtest
//	                   is skipped, printing REASON and what happened; once
//	                   they hold it fails, asking for the line's removal
//	racy REASON        the same for a bug that shows only in some runs (a
//	                   race): while the expectations hold the subtest
//	                   passes, logging that the bug did not show
//	pending REASON     the same as known, for a feature dsh does not have
//	                   yet
//
// The budgets of a case's flags (--ptc-compute-ms, --ptc-wall-ms) and its
// within bound are scaled by the tests' time scale (internal/testtime), and
// so is each "Nms" of a want, then, logs, event or no-event line whose N is
// one of those budgets (see budgets).
//
// Every directive takes qualifiers that restrict it to a language or a
// mode, or both: want.lua, flags.process, known.ts.in-process. Of several
// lines of want, then, within, rss-below, skip, known, racy or pending
// that hold for a subtest, the one with the most qualifiers counts (the
// last of those); the lines of the other directives all count.
func TestHostilePrograms(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "programs", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no cases in testdata/programs")
	}
	tools, err := os.ReadFile(filepath.Join("testdata", "programs", "tools.js"))
	if err != nil {
		t.Fatal(err)
	}
	bin := buildDsh(t)
	isolation := hasIsolationFlag(t, bin)
	for _, file := range files {
		c, err := readProgramCase(file)
		if err != nil {
			t.Error(err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			for _, lang := range programLangs {
				t.Run(lang, func(t *testing.T) {
					for _, mode := range isolationModes {
						t.Run(mode, func(t *testing.T) {
							t.Parallel()
							if mode == "process" && !isolation {
								t.Skip("process isolation: this dsh has no --ptc-isolation flag yet (issue 16)")
							}
							c.run(t, bin, tools, lang, mode, isolation)
						})
					}
				})
			}
		})
	}
}

var (
	programLangs   = []string{"ts", "lua"}
	isolationModes = []string{"in-process", "process"}
)

// programVerbs are the directives of a program case.
var programVerbs = []string{"want", "then", "logs", "flags", "within", "rss-below", "no-file", "event", "no-event", "skip", "known", "racy", "pending"}

// directive is one line of a case's comment.
type directive struct {
	verb  string
	quals []string // languages and modes it is restricted to
	rest  string
	line  int
}

// holds reports whether d applies to a subtest in lang under mode.
func (d directive) holds(lang, mode string) bool {
	for _, q := range d.quals {
		if q != lang && q != mode {
			return false
		}
	}
	return true
}

type programCase struct {
	file, name string
	archive    *txtar.Archive
	directives []directive
	programs   map[string][]byte // program.ts, next.lua, ...
}

func readProgramCase(file string) (*programCase, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	c := &programCase{file: file, name: strings.TrimSuffix(filepath.Base(file), ".txtar"), archive: a, programs: map[string][]byte{}}
	for _, f := range a.Files {
		if base, ext, ok := strings.Cut(f.Name, "."); ok && (base == "program" || base == "next") && (ext == "ts" || ext == "lua") {
			c.programs[f.Name] = f.Data
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(a.Comment))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, rest, _ := strings.Cut(line, " ")
		verb, qualified, _ := strings.Cut(head, ".")
		if !slices.Contains(programVerbs, verb) {
			return nil, fmt.Errorf("%s:%d: unknown directive %q", file, n, head)
		}
		d := directive{verb: verb, rest: strings.TrimSpace(rest), line: n}
		if qualified != "" {
			d.quals = strings.Split(qualified, ".")
		}
		for _, q := range d.quals {
			if !slices.Contains(programLangs, q) && !slices.Contains(isolationModes, q) {
				return nil, fmt.Errorf("%s:%d: %s: unknown qualifier %q", file, n, head, q)
			}
		}
		if err := d.check(); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %v", file, n, head, err)
		}
		c.directives = append(c.directives, d)
	}
	if err := c.checkCoverage(); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	return c, nil
}

// check validates a directive's argument.
func (d directive) check() error {
	switch d.verb {
	case "want", "then":
		_, _, err := parseOutcome(d.rest)
		return err
	case "logs", "event", "no-event":
		_, err := regexp.Compile(d.rest)
		return err
	case "within":
		_, err := time.ParseDuration(d.rest)
		return err
	case "rss-below":
		_, err := strconv.ParseInt(d.rest, 10, 64)
		return err
	}
	if d.rest == "" {
		return fmt.Errorf("needs an argument")
	}
	return nil
}

// checkCoverage makes sure every subtest that is not skipped has a
// program and an expectation for it.
func (c *programCase) checkCoverage() error {
	for _, lang := range programLangs {
		for _, mode := range isolationModes {
			if _, skipped := c.one("skip", lang, mode); skipped {
				continue
			}
			if c.programs["program."+lang] == nil {
				return fmt.Errorf("no program.%s and no skip.%s", lang, lang)
			}
			if _, ok := c.one("want", lang, mode); !ok {
				return fmt.Errorf("no want for %s/%s", lang, mode)
			}
			_, then := c.one("then", lang, mode)
			if next := c.programs["next."+lang] != nil; next != then {
				return fmt.Errorf("%s/%s: next.%s and a then line go together", lang, mode, lang)
			}
		}
	}
	return nil
}

// one returns the most qualified line of verb that holds in lang under
// mode.
func (c *programCase) one(verb, lang, mode string) (directive, bool) {
	var best directive
	found := false
	for _, d := range c.directives {
		if d.verb == verb && d.holds(lang, mode) && (!found || len(d.quals) >= len(best.quals)) {
			best, found = d, true
		}
	}
	return best, found
}

// all returns the lines of verb that hold in lang under mode.
func (c *programCase) all(verb, lang, mode string) []directive {
	var ds []directive
	for _, d := range c.directives {
		if d.verb == verb && d.holds(lang, mode) {
			ds = append(ds, d)
		}
	}
	return ds
}

// parseOutcome reads "KIND REGEXP".
func parseOutcome(s string) (kind string, rx *regexp.Regexp, err error) {
	kind, re, _ := strings.Cut(s, " ")
	switch kind {
	case "ok", "timeout", "exception", "worker-exit", "output-limit", "invalid-output", "abort":
	default:
		return "", nil, fmt.Errorf("unknown outcome %q", kind)
	}
	rx, err = regexp.Compile(strings.TrimSpace(re))
	return kind, rx, err
}

// hasIsolationFlag reports whether bin knows --ptc-isolation, once.
var isolationFlag struct {
	once sync.Once
	ok   bool
	err  error
}

func hasIsolationFlag(t *testing.T, bin string) bool {
	t.Helper()
	isolationFlag.once.Do(func() {
		out, err := exec.Command(bin, "--help").CombinedOutput()
		if err != nil {
			isolationFlag.err = fmt.Errorf("dsh --help: %v\n%s", err, out)
			return
		}
		isolationFlag.ok = bytes.Contains(out, []byte("--ptc-isolation"))
	})
	if isolationFlag.err != nil {
		t.Fatal(isolationFlag.err)
	}
	return isolationFlag.ok
}

// healthyProgram is the run after the hostile one that must succeed.
var healthyProgram = map[string]string{"ts": "return 1+1", "lua": "return 1+1"}

func (c *programCase) run(t *testing.T, bin string, tools []byte, lang, mode string, isolation bool) {
	if d, ok := c.one("skip", lang, mode); ok {
		t.Skip(d.rest)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("scripts/tools.js", tools)
	for _, f := range c.archive.Files {
		if c.programs[f.Name] == nil {
			write(f.Name, f.Data)
		}
	}
	type call struct {
		ID        string            `json:"id"`
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	runCode := func(id, code string) call {
		return call{ID: id, Name: "run_code", Arguments: map[string]string{"code": code, "description": "Hostile program " + c.name}}
	}
	calls := []call{runCode("hostile", string(c.programs["program."+lang]))}
	if next := c.programs["next."+lang]; next != nil {
		calls = append(calls, runCode("next", string(next)))
	}
	calls = append(calls, runCode("healthy", healthyProgram[lang]))
	b, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	write("calls.json", b)

	args := []string{"--executor", "ptc", "--ptc-lang", lang}
	if isolation {
		args = append(args, "--ptc-isolation", mode)
	}
	args = append(args, "--approve", "allow", "--log", "events.jsonl")
	for _, d := range c.all("flags", lang, mode) {
		args = append(args, strings.Fields(d.rest)...)
	}
	args = append(args, "run", "calls.json", "--json")
	bud := newBudgets(testtime.ScaleWithoutRace()) // the dsh binary's budgets
	args = bud.flags(args)

	within := 10 * time.Second
	if d, ok := c.one("within", lang, mode); ok {
		within, _ = time.ParseDuration(d.rest)
	}
	within = bud.d(within)
	var rssMiB int64 = 512
	if d, ok := c.one("rss-below", lang, mode); ok {
		rssMiB, _ = strconv.ParseInt(d.rest, 10, 64)
	}

	r := runDsh(t, bin, dir, args, within)
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	switch {
	case r.signal != 0:
		fail("dsh died of %v after %v\n%s", r.signal, r.took.Round(time.Millisecond), r.report())
	case r.exit != 0:
		fail("exit status %d, want 0\n%s", r.exit, r.report())
	}
	if r.took > within {
		fail("dsh took %v, more than %v", r.took.Round(time.Millisecond), within)
	}
	if r.rssMiB >= rssMiB {
		fail("peak RSS %d MiB, want under %d MiB", r.rssMiB, rssMiB)
	}
	if pids := leftoverProcesses(bin); len(pids) > 0 {
		fail("dsh processes outlived their parent: %v", pids)
	}
	if r.signal == 0 && r.exit == 0 {
		c.checkResults(r, bud, lang, mode, fail)
	}
	c.checkWorkspace(dir, bud, lang, mode, fail)

	var marker directive
	marked := false
	for _, verb := range []string{"known", "racy", "pending"} {
		if d, ok := c.one(verb, lang, mode); ok && !marked {
			marker, marked = d, true
		}
	}
	switch {
	case marked && len(problems) > 0:
		t.Skipf("%s (%s:%d): %s\nwhat happened:\n%s", marker.verb, c.file, marker.line, marker.rest, strings.Join(problems, "\n"))
	case marked && marker.verb == "racy":
		t.Logf("racy (%s:%d): the bug did not show this time: %s", c.file, marker.line, marker.rest)
	case marked:
		t.Errorf("%s:%d: the case holds now: drop its %q line (%s)", c.file, marker.line, marker.verb, marker.rest)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// checkResults checks the calls' results against want, then and logs, with
// the case's budgets scaled in them.
func (c *programCase) checkResults(r *dshRun, b *budgets, lang, mode string, fail func(string, ...any)) {
	results, err := readBatch([]byte(r.stdout))
	if err != nil {
		fail("reading the batch result: %v\n%s", err, r.report())
		return
	}
	check := func(id string, d directive, checkLogs bool) {
		res, ok := results[id]
		if !ok {
			fail("no result for call %s\n%s", id, r.report())
			return
		}
		kind, rx, _ := parseOutcome(b.text(d.rest))
		got, text, logs := res.outcome()
		switch {
		case got != kind:
			fail("call %s (line %d): %s %s, want %s %q", id, d.line, got, clip(text), kind, rx)
		case !rx.MatchString(text):
			fail("call %s (line %d): %s %q, want one matching %q", id, d.line, got, clip(text), rx)
		}
		if !checkLogs {
			return
		}
		for _, l := range c.all("logs", lang, mode) {
			if rx := regexp.MustCompile(b.text(l.rest)); !rx.MatchString(logs) {
				fail("call %s (line %d): logs %q, want them matching %q", id, l.line, clip(logs), rx)
			}
		}
	}
	want, _ := c.one("want", lang, mode)
	check("hostile", want, true)
	if then, ok := c.one("then", lang, mode); ok {
		check("next", then, false)
	}
	check("healthy", directive{verb: "want", rest: "ok ^2$", line: 0}, false)
}

// outcome is a run_code result as a kind (ok or the failure kind), the
// text a want line matches (the result's compact JSON, or the failure's
// message), and the logs joined with newlines.
func (r callResult) outcome() (kind, text, logs string) {
	if !r.IsError {
		var v struct {
			Logs   []string        `json:"logs"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return "unreadable", string(r.Value), ""
		}
		var compact bytes.Buffer
		if len(v.Result) > 0 {
			if err := json.Compact(&compact, v.Result); err != nil {
				return "unreadable", string(r.Value), ""
			}
		}
		return "ok", compact.String(), strings.Join(v.Logs, "\n")
	}
	msg := r.message()
	m := failureMessage.FindStringSubmatch(msg)
	if m == nil {
		return "not-a-code-run-failure", msg, ""
	}
	text, logs, _ = strings.Cut(m[2], "\nCaptured output:\n")
	return m[1], text, logs
}

var failureMessage = regexp.MustCompile(`(?s)^code run failed \(([a-z-]+)\): (.*)$`)

// checkWorkspace checks no-file, event and no-event, with the case's
// budgets scaled in them.
func (c *programCase) checkWorkspace(dir string, b *budgets, lang, mode string, fail func(string, ...any)) {
	for _, d := range c.all("no-file", lang, mode) {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(d.rest))); err == nil {
			fail("line %d: the file %s exists", d.line, d.rest)
		}
	}
	events, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		if len(c.all("event", lang, mode))+len(c.all("no-event", lang, mode)) > 0 {
			fail("reading the session log: %v", err)
		}
		return
	}
	lines := strings.Split(string(events), "\n")
	matches := func(rx *regexp.Regexp) string {
		for _, l := range lines {
			if rx.MatchString(l) {
				return l
			}
		}
		return ""
	}
	for _, d := range c.all("event", lang, mode) {
		if rx := regexp.MustCompile(b.text(d.rest)); matches(rx) == "" {
			fail("line %d: no event matches %q in:\n%s", d.line, rx, clip(string(events)))
		}
	}
	for _, d := range c.all("no-event", lang, mode) {
		if rx := regexp.MustCompile(b.text(d.rest)); matches(rx) != "" {
			fail("line %d: an event matches %q: %s", d.line, rx, clip(matches(rx)))
		}
	}
}

// leftoverProcesses returns the pids of the processes running bin that
// outlived their parent: those whose parent is neither this test process
// (the dsh it started) nor another process running bin (a live dsh's
// child). A process killed as its parent ended may take a moment to go, so
// it is given a second.
func leftoverProcesses(bin string) []int {
	if p, err := filepath.EvalSymlinks(bin); err == nil {
		bin = p
	}
	var pids []int
	for deadline := time.Now().Add(time.Second); ; time.Sleep(50 * time.Millisecond) {
		pids = orphansRunning(bin)
		if len(pids) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	return pids
}

func orphansRunning(bin string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !runs(pid, bin) {
			continue
		}
		state, ppid, ok := procStat(pid)
		if !ok || state == 'Z' || ppid == os.Getpid() || runs(ppid, bin) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// runs reports whether process pid runs the executable bin.
func runs(pid int, bin string) bool {
	exe, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe"))
	return err == nil && exe == bin
}

// procStat reads a process's state and parent from /proc/PID/stat.
func procStat(pid int) (state byte, ppid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || len(f[0]) != 1 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return f[0][0], ppid, err == nil
}
