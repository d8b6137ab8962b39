package cli

import (
	"testing"

	"github.com/dsh-go/dsh/ptc/process"
)

func TestProcessIsolationIsTheDefault(t *testing.T) {
	root := newRootCmd(&options{})
	f := root.PersistentFlags().Lookup("ptc-isolation")
	if f == nil || f.DefValue != isolationProcess {
		t.Fatalf("--ptc-isolation defaults to %v, want %q", f, isolationProcess)
	}
}

// TestOnlyCommandsThatRunCallsKeepChildrenReady checks which commands start
// run_code children ahead of need under process isolation: those that run
// tool calls; describe, schemas and replay run no program and start none.
func TestOnlyCommandsThatRunCallsKeepChildrenReady(t *testing.T) {
	want := map[string]bool{
		"dsh run": true, "dsh call": true, "dsh ptc": true, "dsh watch": true, "dsh serve": true,
		"dsh describe": false, "dsh schemas": false, "dsh replay": false,
	}
	root := newRootCmd(&options{})
	seen := 0
	for _, cmd := range commands(root) {
		path := cmd.CommandPath()
		w, ok := want[path]
		if !ok {
			continue
		}
		seen++
		t.Run(path+" keeps children ready only if it runs calls", func(t *testing.T) {
			if got := runsCalls(cmd); got != w {
				t.Errorf("runsCalls(%s) = %v, want %v", path, got, w)
			}
		})
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d commands", seen, len(want))
	}
	for _, tc := range []struct {
		name     string
		flags    ptcFlags
		wantPool int
	}{
		{"a command that runs calls keeps --ptc-pool children ready", ptcFlags{pool: 2}, 2},
		{"--ptc-pool 0 keeps none", ptcFlags{pool: 0}, -1},
		{"a command that runs no calls keeps none", ptcFlags{pool: 2, noRuns: true}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.flags.processPool(); got != tc.wantPool {
				t.Errorf("processPool() = %d, want %d (process.Options.Pool: %d is the default, negative none)", got, tc.wantPool, process.DefaultPool)
			}
		})
	}
}
