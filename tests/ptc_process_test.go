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

var processTypeScriptPrograms = ptctest.Programs{
	ReturnTwo:       `return 1 + 1`,
	ReturnNull:      `return null`,
	NoReturn:        `const x: number = 1`,
	ReturnLossy:     `return () => 1`,
	ReturnEuro:      `return "€"`,
	LogThenReturn:   `console.log("abc"); return "xy"`,
	LogThenThrow:    `console.log("abc"); throw "xy"`,
	Throw:           `throw new Error("kaboom")`,
	SyntaxError:     "console.log(\"ran\");\nconst = 3;",
	LogLines:        `for (let i = 0; i < 1000; i++) console.log("line " + i)`,
	ReturnMaxXs:     `return "x".repeat(67_108_860)`,
	ReturnTooManyXs: `return "x".repeat(67_108_861)`,
	CallEcho: `const a: string = await tools.echo({value: "one"});
console.log("saw " + a);
return await tools.echo({value: "two"})`,
	CatchFailure: `try {
  await tools.fail({})
} catch (e) {
  return [e instanceof ToolCallError, e.name, e.toolName, e.message]
}`,
	NeverSettles:  `await tools.never({})`,
	AwaitSlow:     `return await tools.slow({})`,
	Spin:          `for (;;) {}`,
	StartThenSpin: `await tools.start({}); for (;;) {}`,
	SetLeak:       `(globalThis as any).leak = 1`,
	LeakIsUnset:   `return typeof (globalThis as any).leak === "undefined"`,
}

var processLuaPrograms = ptctest.Programs{
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

func TestProcessRuntimeConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	bin := buildDsh(t)
	for _, c := range []struct {
		lang     ptc.Language
		programs ptctest.Programs
	}{{ptc.TypeScript, processTypeScriptPrograms}, {ptc.Lua, processLuaPrograms}} {
		t.Run(string(c.lang), func(t *testing.T) {
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
