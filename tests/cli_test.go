// Package tests holds end-to-end tests that cross packages. The CLI tests
// are testscript files in testdata/script: each runs the dsh command,
// which TestMain registers in-process rather than building a binary.
package tests

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/cmd/dsh/cli"
)

// TestMain registers dsh as a testscript command: scripts that run it
// re-execute this test binary, which then runs cli.Main.
func TestMain(m *testing.M) {
	testscript.Main(leakChecked{m}, map[string]func(){"dsh": cli.Main, "mcp-echo-server": mcpEchoServer, "mcp-relay-server": mcpRelayServer, "mcp-catalog-fixture": mcpCatalogFixture})
}

// leakChecked runs the tests, then fails the run if goroutines the in-process
// tests started (interpreters' loops, watchers, host work) outlive them.
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	code := l.m.Run()
	removeBuiltBinaries()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			return 1
		}
	}
	return code
}

// removeBuiltBinaries removes the temporary directories of the programs
// the tests built once per test binary (dsh, the conformance client).
func removeBuiltBinaries() {
	for _, p := range []string{dshBinary.path, mcpConfClient.path} {
		if p != "" {
			_ = os.RemoveAll(filepath.Dir(p))
		}
	}
}

// TestCLI runs testdata/script/*.txtar. Besides the standard commands,
// scripts have
//
//   - "exits CODE PROG [ARGS...]", which runs PROG like exec and requires
//     its exit status to be exactly CODE;
//   - "events LOG", which prints a session log one event a line, without
//     its times: "<id> <type> <callId> <name|outcome> [<code>] [cites <id>]";
//   - "waitfor FILE", which waits (at most a minute) until FILE exists;
//   - "pty [-stdout] CODE ANSWERS PROG [ARGS...]", which runs PROG with its
//     standard input (and with -stdout its standard output) on a
//     pseudo-terminal, types the content of the file ANSWERS into it, and
//     requires exit status CODE (Linux only: guard scripts with [linux]);
//   - "interrupt WITHIN FILE CODE PROG [ARGS...]", which starts PROG, sends
//     it SIGINT once FILE exists, and requires exit status CODE within
//     WITHIN of the signal (guard scripts with [!windows]);
//
// the condition [race] (the tests run with the race detector), and the
// variables $EXAMPLES, the directory of the example schemas the
// demo uses, $PLUGINS, the example plugins, $DEMO, the demo's calls, and
// $DEMOPLUGINS, the demo's own plugins (its Lua tool).
//
// The scripts' dsh is this test binary, race-built under make test, and the
// race runtime sleeps a second as such a program exits (so that a report
// another goroutine is about to print gets out); with hundreds of commands
// that second was most of the scripts' time, so they run with GORACE's
// atexit_sleep_ms=0 (see noExitSleep). A race a command hits is reported
// as it happens and still makes it exit with status 66.
func TestCLI(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "scripts", "examples", "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := filepath.Abs(filepath.Join("..", "scripts", "examples", "plugins"))
	if err != nil {
		t.Fatal(err)
	}
	demo, err := filepath.Abs(filepath.Join("..", "scripts", "examples", "demo.calls.json"))
	if err != nil {
		t.Fatal(err)
	}
	demoPlugins, err := filepath.Abs(filepath.Join("..", "scripts", "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			env.Setenv("PLUGINS", plugins)
			env.Setenv("DEMO", demo)
			env.Setenv("DEMOPLUGINS", demoPlugins)
			env.Setenv("NO_COLOR", "")
			env.Setenv("GORACE", noExitSleep(os.Getenv("GORACE")))
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "race" {
				return raceEnabled, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":     cmdExits,
			"events":    cmdEvents,
			"waitfor":   cmdWaitfor,
			"pty":       cmdPty,
			"interrupt": cmdInterrupt,
		},
	})
}

// cmdExits implements "exits CODE PROG [ARGS...]".
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad exit status %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// cmdEvents implements "events LOG".
func cmdEvents(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: events LOG")
	}
	f, err := os.Open(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			ID, Type, Agent, Time string
			CallID                string `json:"callId"`
			Name                  string
			IsError               *bool `json:"isError"`
			Error                 *struct{ Code string }
			CallEvent             string `json:"callEvent"`
		}
		ts.Check(json.Unmarshal(sc.Bytes(), &e))
		if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
			ts.Fatalf("event %s: time %q: %v", e.ID, e.Time, err)
		}
		fields := []string{e.ID, e.Type, e.Agent, e.CallID}
		switch {
		case e.Type == "tool/call":
			fields = append(fields, e.Name)
		case e.IsError != nil && *e.IsError:
			fields = append(fields, "error")
		case e.IsError != nil:
			fields = append(fields, "ok")
		}
		if e.Error != nil {
			fields = append(fields, e.Error.Code)
		}
		if e.CallEvent != "" {
			fields = append(fields, "cites", e.CallEvent)
		}
		fmt.Fprintln(ts.Stdout(), strings.Join(fields, " "))
	}
	ts.Check(sc.Err())
}

// noExitSleep returns the GORACE options gorace with the race runtime's
// sleep at exit turned off, unless they set it themselves.
func noExitSleep(gorace string) string {
	if strings.Contains(gorace, "atexit_sleep_ms=") {
		return gorace
	}
	return strings.TrimSpace("atexit_sleep_ms=0 " + gorace)
}

// cmdWaitfor implements "waitfor FILE".
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfor FILE")
	}
	path := ts.MkAbs(args[0])
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	ts.Fatalf("waitfor: %s did not appear within a minute", args[0])
}

// cmdPty implements "pty [-stdout] CODE ANSWERS PROG [ARGS...]".
func cmdPty(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! pty")
	}
	onStdout := len(args) > 0 && args[0] == "-stdout"
	if onStdout {
		args = args[1:]
	}
	if len(args) < 3 {
		ts.Fatalf("usage: pty [-stdout] CODE ANSWERS PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("pty: bad exit status %q", args[0])
	}
	prog, err := exec.LookPath(args[2])
	ts.Check(err)
	cmd := exec.Command(prog, args[3:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = []string{"PWD=" + cmd.Dir}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "WORK", "NO_COLOR", "GORACE", "EXAMPLES", "PLUGINS", "DEMO", "DEMOPLUGINS"} {
		cmd.Env = append(cmd.Env, k+"="+ts.Getenv(k))
	}
	cmd.Stderr = ts.Stderr()
	if !onStdout {
		cmd.Stdout = ts.Stdout()
	}
	got, err := runOnPty(cmd, []byte(ts.ReadFile(args[1])), onStdout, ts.Stdout())
	if err != nil {
		ts.Fatalf("pty: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[2], got, want)
	}
}

// errNoPty is runOnPty's error where pseudo-terminals are not supported.
var errNoPty = errors.New("pseudo-terminals are not supported here")
