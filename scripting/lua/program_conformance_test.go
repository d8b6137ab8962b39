package lua_test

import (
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/ptctest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// luaPrograms are ptctest's programs in Lua.
var luaPrograms = ptctest.Programs{
	ReturnTwo:       `return 1 + 1`,
	ReturnNull:      `return null`,
	NoReturn:        `local x = 1`,
	ReturnLossy:     `return function() return 1 end`,
	ReturnEuro:      `return "€"`,
	LogThenReturn:   `print("abc") return "xy"`,
	LogThenThrow:    `print("abc") error("xy", 0)`,
	Throw:           `error("kaboom")`,
	SyntaxError:     "print(\"ran\")\nlocal = 3",
	LogLines:        `for i = 0, 999 do print("line " .. i) end`,
	ReturnMaxXs:     `return string.rep("x", 67108860)`,
	ReturnTooManyXs: `return string.rep("x", 67108861)`,
	CallEcho: `local a = tools.echo{value = "one"}
print("saw " .. a)
return tools.echo{value = "two"}`,
	CatchFailure: `local ok, e = pcall(tools.fail, {})
return {ToolCallError.is(e), e.name, e.toolName, e.message}`,
	NeverSettles:  `tools.never{}`,
	AwaitSlow:     `return tools.slow{}`,
	Spin:          `while true do end`,
	StartThenSpin: `tools.start{} while true do end`,
	SetLeak:       `leak = 1`,
	LeakIsUnset:   `return leak == nil`,
}

func TestProgramRuntimeConformance(t *testing.T) {
	ptctest.TestRuntime(t, func(t *testing.T, b ptc.Budgets) ptc.Runtime {
		rt, err := lua.NewProgramRuntime(lua.ProgramOptions{Budgets: b})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}, luaPrograms)
}
