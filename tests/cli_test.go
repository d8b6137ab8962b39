// Package tests holds end-to-end tests that cross packages. The CLI tests
// are testscript files in testdata/script: each runs the dsh command,
// which TestMain registers in-process rather than building a binary.
package tests

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dsh-go/dsh/cmd/dsh/cli"
)

// TestMain registers dsh as a testscript command: scripts that run it
// re-execute this test binary, which then runs cli.Main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"dsh": cli.Main})
}

// TestCLI runs testdata/script/*.txtar. Besides the standard commands,
// scripts have "exits CODE PROG [ARGS...]", which runs PROG like exec and
// requires its exit status to be exactly CODE, and $EXAMPLES, the
// directory of the example schemas the demo uses.
func TestCLI(t *testing.T) {
	examples, err := filepath.Abs(filepath.Join("..", "scripts", "examples", "schemas"))
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
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
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
