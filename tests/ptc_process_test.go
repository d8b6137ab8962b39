package tests

import (
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/process"
	"github.com/dsh-go/dsh/ptc/ptctest"
)

// The runtime contract (ptc/ptctest) under process isolation: the same
// cases the in-process runtimes pass (scripting/js and scripting/lua run
// them there), each run in a child dsh built from this tree.

func TestProcessRuntimeConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bin := buildDsh(t)
	for _, c := range []struct {
		lang     ptc.Language
		programs ptctest.Programs
	}{{ptc.TypeScript, ptctest.TypeScript}, {ptc.Lua, ptctest.Lua}} {
		t.Run(string(c.lang), func(t *testing.T) {
			t.Parallel() // each language has its own runtimes and children
			ptctest.TestRuntime(t, func(t *testing.T, b ptc.Budgets) ptc.Runtime {
				rt, err := process.NewRuntime(process.Options{Language: c.lang, Budgets: b, Path: bin, Pool: 1})
				if err != nil {
					t.Fatal(err)
				}
				return rt
			}, c.programs)
		})
	}
}
