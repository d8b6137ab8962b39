package lua_test

import (
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/ptctest"
	"github.com/dsh-go/dsh/scripting/lua"
)

func TestProgramRuntimeConformance(t *testing.T) {
	ptctest.TestRuntime(t, func(t *testing.T, b ptc.Budgets) ptc.Runtime {
		rt, err := lua.NewProgramRuntime(lua.ProgramOptions{Budgets: b})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}, ptctest.Lua)
}
