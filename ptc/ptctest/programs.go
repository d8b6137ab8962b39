package ptctest

// TypeScript is the programs in TypeScript, for the goja runtime (in
// process or in a child).
var TypeScript = Programs{
	ReturnTwo:         `return 1 + 1`,
	ReturnNull:        `return null`,
	NoReturn:          `const x: number = 1`,
	ReturnLossy:       `return () => 1`,
	ReturnEuro:        `return "€"`,
	LogThenReturn:     `console.log("abc"); return "xy"`,
	LogThenReturnLong: `console.log("abc"); return "€".repeat(2000)`,
	LogThenThrow:      `console.log("abc"); throw "xy"`,
	Throw:             `throw new Error("kaboom")`,
	SyntaxError:       "console.log(\"ran\");\nconst = 3;",
	LogLines:          `for (let i = 0; i < 1000; i++) console.log("line " + i)`,
	ReturnMaxXs:       `return "x".repeat(67_108_860)`,
	ReturnTooManyXs:   `return "x".repeat(67_108_861)`,
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

// Lua is the programs in Lua, for the gopher-lua runtime (in process or in
// a child).
var Lua = Programs{
	ReturnTwo:         `return 1 + 1`,
	ReturnNull:        `return null`,
	NoReturn:          `local x = 1`,
	ReturnLossy:       `return function() return 1 end`,
	ReturnEuro:        `return "€"`,
	LogThenReturn:     `print("abc") return "xy"`,
	LogThenReturnLong: `print("abc") return string.rep("€", 2000)`,
	LogThenThrow:      `print("abc") error("xy", 0)`,
	Throw:             `error("kaboom")`,
	SyntaxError:       "print(\"ran\")\nlocal = 3",
	LogLines:          `for i = 0, 999 do print("line " .. i) end`,
	ReturnMaxXs:       `return string.rep("x", 67108860)`,
	ReturnTooManyXs:   `return string.rep("x", 67108861)`,
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
