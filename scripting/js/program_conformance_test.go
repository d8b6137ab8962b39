package js_test

import (
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/ptctest"
	"github.com/dsh-go/dsh/scripting/js"
)

// typeScriptPrograms are ptctest's programs in TypeScript.
var typeScriptPrograms = ptctest.Programs{
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

func TestProgramRuntimeConformance(t *testing.T) {
	ptctest.TestRuntime(t, func(t *testing.T, b ptc.Budgets) ptc.Runtime {
		rt, err := js.NewProgramRuntime(js.ProgramOptions{Budgets: b})
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}, typeScriptPrograms)
}
