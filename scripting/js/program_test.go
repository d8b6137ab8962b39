package js

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
)

// newProgramRuntime is a runtime with small budgets, closed after the test.
func newProgramRuntime(t testing.TB, mod func(*ptc.Budgets)) *ProgramRuntime {
	t.Helper()
	b := ptc.DefaultBudgets()
	b.ComputeMs, b.MaxWallMs = 2_000, 10_000
	if mod != nil {
		mod(&b)
	}
	rt, err := NewProgramRuntime(ProgramOptions{Budgets: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// toolsNS is the run_code namespace over bindings.
func toolsNS(bs ...ptc.Binding) []ptc.Namespace {
	return []ptc.Namespace{{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: bs}}
}

func echoBinding(prefix string) ptc.Binding {
	return ptc.Binding{Name: "echo", Call: func(_ context.Context, args any) (any, error) {
		o, _ := args.(*dsl.Object)
		v, _ := o.Get("value")
		s, _ := v.(string)
		return prefix + s, nil
	}}
}

// resultJSON renders a result as compact JSON: value, logs, error.
func resultJSON(t testing.TB, r ptc.Result) string {
	t.Helper()
	m := map[string]any{"logs": r.Logs}
	if r.HasValue {
		b, err := dsl.Marshal(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		m["value"] = json.RawMessage(b)
	}
	if r.Err != nil {
		m["error"] = map[string]string{"kind": string(r.Err.Kind), "message": r.Err.Message}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runProgram(t testing.TB, rt *ProgramRuntime, ctx context.Context, ns []ptc.Namespace, code string) ptc.Result {
	t.Helper()
	res, err := rt.Run(ctx, ptc.Request{Program: code, Bindings: ns})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestProgramRuntimeResults(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct {
		name, code, want string
	}{
		{"a sum returns its value", `return 1+1`, `{"logs":[],"value":2}`},
		{"null is an explicit value", `return null`, `{"logs":[],"value":null}`},
		{"undefined is no value", `return undefined`, `{"logs":[]}`},
		{"falling off the end is no value", `const x = 1`, `{"logs":[]}`},
		{"an object keeps its key order", `return {n: 42, ok: true, list: [1, "a", null]}`, `{"logs":[],"value":{"n":42,"ok":true,"list":[1,"a",null]}}`},
		{"top-level await works", `const v = await Promise.resolve(5); return v * 2`, `{"logs":[],"value":10}`},
		{"TypeScript types are stripped", "interface P { x: number }\nconst p: P = {x: 3};\nreturn p.x as number", `{"logs":[],"value":3}`},
		{"a function completion is invalid output", `return () => 1`, `{"error":{"kind":"invalid-output","message":"program completion must be lossless JSON"},"logs":[]}`},
		{"a -0 completion is invalid output", `return -0`, `{"error":{"kind":"invalid-output","message":"program completion must be lossless JSON"},"logs":[]}`},
		{"a thrown string is its text", `throw "xy"`, `{"error":{"kind":"exception","message":"xy"},"logs":[]}`},
		{"a thrown number is String of it", `throw 42`, `{"error":{"kind":"exception","message":"42"},"logs":[]}`},
		{"a thrown undefined is its text", `throw undefined`, `{"error":{"kind":"exception","message":"undefined"},"logs":[]}`},
		{"a thrown plain object is [object Object]", `throw {message: "m"}`, `{"error":{"kind":"exception","message":"[object Object]"},"logs":[]}`},
		{"a thrown array joins its elements", `throw [1, "a", null, [2, 3]]`, `{"error":{"kind":"exception","message":"1,a,,2,3"},"logs":[]}`},
		{"a thrown null-prototype object is unrenderable", `throw Object.create(null)`, `{"error":{"kind":"exception","message":"program threw an unrenderable value"},"logs":[]}`},
		{"a thrown object with its own toString is unrenderable", `throw {toString() { return "mine" }}`, `{"error":{"kind":"exception","message":"program threw an unrenderable value"},"logs":[]}`},
		{"a thrown Proxy is unrenderable", `throw new Proxy({}, {})`, `{"error":{"kind":"exception","message":"program threw an unrenderable value"},"logs":[]}`},
		{"logs before a throw are kept", `console.log("before"); throw "after"`, `{"error":{"kind":"exception","message":"after"},"logs":["before"]}`},
		{"require is not defined", `return [typeof require, typeof process, typeof setTimeout, typeof setInterval, typeof queueMicrotask, typeof console, typeof globalThis.console]`,
			`{"logs":[],"value":["undefined","undefined","undefined","undefined","undefined","object","undefined"]}`},
		{"parameters are not globals", `return [typeof tools, typeof globalThis.tools, typeof globalThis.ToolCallError]`, `{"logs":[],"value":["object","undefined","undefined"]}`},
		{"the namespace has no prototype", `return [Object.getPrototypeOf(tools) === null, typeof tools.hasOwnProperty, Object.keys(tools)]`, `{"logs":[],"value":[true,"undefined",["echo"]]}`},
		{"bindings are non-writable and non-configurable", `const d = Object.getOwnPropertyDescriptor(tools, "echo"); return [d.writable, d.configurable, d.enumerable, tools.echo.length]`, `{"logs":[],"value":[false,false,true,1]}`},
		{"reassigning a binding fails in strict mode", `try { tools.echo = 1 } catch (e) { return e instanceof TypeError }`, `{"logs":[],"value":true}`},
	}
	ns := toolsNS(echoBinding("echo:"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resultJSON(t, runProgram(t, rt, context.Background(), ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestProgramRuntimeExceptions(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct {
		name, code string
		want       []string // substrings of the message
	}{
		{"a thrown Error gives its stack", `throw new Error("kaboom")`, []string{"Error: kaboom\n\tat __dsh_main__ (program.ts:1:7("}},
		{"a thrown TypeError names its class and line", "const a = 1;\n\nnull.x", []string{"TypeError", "program.ts:3:"}},
		{"a syntax error names the line and runs nothing", "console.log('ran');\nconst = 3;", []string{"SyntaxError", "line 2"}},
		{"closing the wrapper is a syntax error", "}; (function () {", []string{"SyntaxError"}},
		{"unbounded recursion is a RangeError", `function f() { return f() + 1 }; return f()`, []string{"RangeError", "Maximum call stack size exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, rt, context.Background(), nil, tt.code)
			if res.Err == nil || res.Err.Kind != ptc.KindException {
				t.Fatalf("got %s, want an exception", resultJSON(t, res))
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Err.Message, w) {
					t.Errorf("message %q lacks %q", res.Err.Message, w)
				}
			}
			if len(res.Logs) != 0 {
				t.Errorf("logs = %q, want none", res.Logs)
			}
		})
	}
}

func TestProgramRuntimeConsole(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct {
		name, code string
		want       []string
	}{
		{"strings raw, objects inspected", `const p = {x: 1, y: 2}; console.log('point', p); console.warn('careful'); return p.x + p.y`, []string{"point { x: 1, y: 2 }", "careful"}},
		{"a string and a number", `console.log("got", 42)`, []string{"got 42"}},
		{"every method is one entry", `console.log(1); console.info(2); console.warn(3); console.error(4); console.debug(5)`, []string{"1", "2", "3", "4", "5"}},
		{"no arguments is an empty entry", `console.log()`, []string{""}},
		{"primitives", `console.log(null, undefined, true, -0, 1.5, 10n, Symbol("s"))`, []string{"null undefined true -0 1.5 10n Symbol(s)"}},
		{"nested strings are quoted", `console.log(["a", "it's", 'say "hi"', "a\nb"])`, []string{`[ 'a', "it's", 'say "hi"', 'a\nb' ]`}},
		{"depth 4 then [Object]", `console.log({a: {b: {c: {d: {e: {f: 1}}}}}})`, []string{"{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  }\n}"}},
		{"arrays past 100 items", `console.log(new Array(101).fill(0).length, [new Array(102).fill("x")].length)`, []string{"101 1"}},
		{"five long entries break the line", `console.log(Array.from({length: 103}, () => "abcdefghij").slice(98))`, []string{"[\n  'abcdefghij',\n  'abcdefghij',\n  'abcdefghij',\n  'abcdefghij',\n  'abcdefghij'\n]"}},
		{"more items are counted", `console.log(Array.from({length: 103}, () => "a".repeat(30)))`, []string{"[\n" + strings.Repeat("  '"+strings.Repeat("a", 30)+"',\n", 100) + "  ... 3 more items\n]"}},
		{"null prototype", `const o = Object.create(null); o.a = 1; console.log(o)`, []string{"[Object: null prototype] { a: 1 }"}},
		{"a getter is not called", `console.log({get g() { throw new Error("called") }, v: 1})`, []string{"{ g: [Getter], v: 1 }"}},
		{"a circular reference", `const a = {name: "a"}; a.self = a; console.log(a)`, []string{"<ref *1> { name: 'a', self: [Circular *1] }"}},
		{"functions", `console.log(function named() {}, () => 1)`, []string{"[Function: named] [Function (anonymous)]"}},
		{"class instances", `class Foo { constructor() { this.a = 1 } }; console.log(new Foo(), [], {})`, []string{"Foo { a: 1 } [] {}"}},
		{"quoted keys", `console.log({"a-b": 1, _ok: 2})`, []string{"{ 'a-b': 1, _ok: 2 }"}},
		{"a long array is grouped", `console.log([1, 2, 3, 4, 5, 6, 7])`, []string{"[\n  1, 2, 3, 4,\n  5, 6, 7\n]"}},
		{"a long object breaks lines", `console.log({alpha: "aaaaaaaaaaaaaaaaaaaa", beta: "bbbbbbbbbbbbbbbbbbbb", gamma: "cccccccccccccccccccc"})`,
			[]string{"{\n  alpha: 'aaaaaaaaaaaaaaaaaaaa',\n  beta: 'bbbbbbbbbbbbbbbbbbbb',\n  gamma: 'cccccccccccccccccccc'\n}"}},
		{"a long nested string is cut", `console.log(["x".repeat(10_002)])`, []string{"[\n  '" + strings.Repeat("x", 10_000) + "'... 2 more characters\n]"}},
		{"a Proxy shows its target, no trap runs", `console.log(new Proxy({a: 1}, {get() { throw new Error("trap") }, ownKeys() { throw new Error("trap") }}))`, []string{"{ a: 1 }"}},
		{"a pending promise", `console.log(new Promise(() => {}))`, []string{"Promise { <pending> }"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, rt, context.Background(), nil, tt.code)
			if res.Err != nil {
				t.Fatalf("failed: %s", resultJSON(t, res))
			}
			if strings.Join(res.Logs, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("logs\ngot  %q\nwant %q", res.Logs, tt.want)
			}
		})
	}
}

func TestProgramRuntimeBindings(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	var called atomic.Int32
	fail := ptc.Binding{Name: "fail", Call: func(context.Context, any) (any, error) {
		called.Add(1)
		return nil, errors.New("deliberate failure")
	}}
	count := ptc.Binding{Name: "count", Call: func(_ context.Context, args any) (any, error) {
		called.Add(1)
		return args, nil
	}}
	badResult := ptc.Binding{Name: "bad", Call: func(context.Context, any) (any, error) {
		return func() {}, nil
	}}
	proto := ptc.Binding{Name: "__proto__", Call: func(context.Context, any) (any, error) { return "proto-ok", nil }}
	ctor := ptc.Binding{Name: "constructor", Call: func(context.Context, any) (any, error) { return "ctor-ok", nil }}
	ns := toolsNS(echoBinding("echo:"), fail, count, badResult, proto, ctor)
	tests := []struct {
		name, code, want string
		calls            int32
	}{
		{"a binding's value reaches the program", `const a = await tools.echo({value: "one"}); console.log("saw " + a); return await tools.echo({value: "two"})`,
			`{"logs":["saw echo:one"],"value":"echo:two"}`, 0},
		{"a binding's value is frozen", `const v = await tools.count({a: [1]}); return [Object.isFrozen(v), Object.isFrozen(v.a)]`, `{"logs":[],"value":[true,true]}`, 1},
		{"a failing binding rejects with ToolCallError", `try { await tools.fail({}) } catch (e) { return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message, Object.keys(e)] }`,
			`{"logs":[],"value":[true,true,"ToolCallError","fail","deliberate failure",["name","toolName"]]}`, 1},
		{"an uncaught binding failure is the exception", `await tools.fail({})`, `{"error":{"kind":"exception","message":"ToolCallError: deliberate failure"},"logs":[]}`, 1},
		{"an absent argument never reaches the binding", `try { await tools.count() } catch (e) { return [e.name, e.toolName, e.message] }`,
			`{"logs":[],"value":["ToolCallError","count","tool arguments must be lossless JSON (call the tool with an arguments object, e.g. ` + "`{}`" + `)"]}`, 0},
		{"a Date argument never reaches the binding", `try { await tools.count({d: new Date(0)}) } catch (e) { return [e.toolName, e.message.startsWith("tool arguments must be lossless JSON: ")] }`,
			`{"logs":[],"value":["count",true]}`, 0},
		{"a function argument never reaches the binding", `try { await tools.count({f() {}}) } catch (e) { return e.message.startsWith("tool arguments must be lossless JSON: ") }`, `{"logs":[],"value":true}`, 0},
		{"a getter argument is never called", `let hit = false; try { await tools.count({get g() { hit = true; return 1 }}) } catch (e) { return [hit, e instanceof ToolCallError] }`, `{"logs":[],"value":[false,true]}`, 0},
		{"a decorated array never reaches the binding", `const a = [1]; a.extra = 1; try { await tools.count(a) } catch (e) { return e instanceof ToolCallError }`, `{"logs":[],"value":true}`, 0},
		{"a null-prototype argument is plain data", `const o = Object.create(null); o.value = "x"; o.nested = ["same"]; return await tools.count(o)`, `{"logs":[],"value":{"value":"x","nested":["same"]}}`, 1},
		{"a lossy resolution rejects", `try { await tools.bad({}) } catch (e) { return [e.toolName, e.message] }`, `{"logs":[],"value":["bad","binding resolution must be lossless JSON"]}`, 0},
		{"__proto__ and constructor are own bindings", `return [await tools["__proto__"]({}), await tools.constructor({})]`, `{"logs":[],"value":["proto-ok","ctor-ok"]}`, 0},
		{"a call made by code still running after the return never reaches the binding", `(async () => { for (let i = 0; i < 100; i++) await null; await tools.count({}) })(); return 1`, `{"logs":[],"value":1}`, 0},
		{"calls overlap under Promise.all", `return await Promise.all([tools.echo({value: "a"}), tools.echo({value: "b"})])`, `{"logs":[],"value":["echo:a","echo:b"]}`, 0},
		{"a tampered Error.prototype does not break the error class", `Object.defineProperty(Object.prototype, "toolName", {set() { throw new Error("setter") }}); try { await tools.fail({}) } catch (e) { return e.toolName }`, `{"logs":[],"value":"fail"}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called.Store(0)
			if got := resultJSON(t, runProgram(t, rt, context.Background(), ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if n := called.Load(); n != tt.calls {
				t.Errorf("the binding ran %d times, want %d", n, tt.calls)
			}
		})
	}
}

func TestProgramRuntimeUnknownTools(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	var called atomic.Int32
	counting := func(name string) ptc.Binding {
		return ptc.Binding{Name: name, Call: func(_ context.Context, args any) (any, error) {
			called.Add(1)
			return name, nil
		}}
	}
	ns := toolsNS(counting("note"), counting("nop2"), counting("echo"))
	const nope = `unknown tool \"nope\"; did you mean \"nop2\" or \"note\"?`
	tests := []struct {
		name, code, want string
		calls            int32
	}{
		{"a call of an unknown tool rejects with a ToolCallError naming the close tools",
			`try { await tools.nope({}) } catch (e) { return [e instanceof ToolCallError, e instanceof Error, e.name, e.toolName, e.message] }`,
			`{"logs":[],"value":[true,true,"ToolCallError","nope","` + nope + `"]}`, 0},
		// Rejected at once, as a refused argument is, the error's stack
		// names the program's line.
		{"an uncaught call of an unknown tool is the exception", `await tools.nope({})`,
			`{"error":{"kind":"exception","message":"ToolCallError: ` + nope + `\n\tat nope (native)\n\tat __dsh_main__ (program.ts:1:13(4))"},"logs":[]}`, 0},
		{"the call returns a rejected promise", `const p = tools.nope({}); return [p instanceof Promise, await p.then(() => "resolved", (e) => e.toolName)]`,
			`{"logs":[],"value":[true,"nope"]}`, 0},
		{"a bracketed name is called the same", `try { await tools["nope"]({}) } catch (e) { return e.message }`, `{"logs":[],"value":"` + nope + `"}`, 0},
		{"a computed name is called the same", `const n = "nope"; try { await tools[n]({}) } catch (e) { return e.message }`, `{"logs":[],"value":"` + nope + `"}`, 0},
		{"an alias of tools is called the same", `const t = tools; try { await t.nope({}) } catch (e) { return e.toolName }`, `{"logs":[],"value":"nope"}`, 0},
		{"tools held by an object is called the same", `const o = {tools}; try { await o.tools.nope({}) } catch (e) { return e.toolName }`, `{"logs":[],"value":"nope"}`, 0},
		{"a call split over lines is called the same", "try { await tools\n  .nope({}) } catch (e) { return e.toolName }", `{"logs":[],"value":"nope"}`, 0},
		{"a TypeScript cast is called the same", `try { await (tools as any).nope({} as Record<string, never>) } catch (e: any) { return e.toolName }`,
			`{"logs":[],"value":"nope"}`, 0},
		{"a call in a nested function is called the same", `const f = async (n: number) => n > 0 ? tools.nope({}) : null; try { await f(1) } catch (e) { return e.toolName }`,
			`{"logs":[],"value":"nope"}`, 0},
		{"a name far from every tool names none", `try { await tools.deploy({}) } catch (e) { return e.message }`, `{"logs":[],"value":"unknown tool \"deploy\""}`, 0},
		{"Promise.all rejects with it and the known calls still run", `const echo = tools.echo({}); try { await Promise.all([echo, tools.nope({})]) } catch (e) { return [e.toolName, await echo] }`,
			`{"logs":[],"value":["nope","echo"]}`, 1},
		{"reading an unknown name is still undefined and changes nothing else",
			`const {nope} = tools; return [typeof tools.nope, tools.nope === undefined, tools["nope"] === undefined, nope === undefined, "nope" in tools,
  Object.keys(tools), Reflect.get(tools, "nope") === undefined, Object.getOwnPropertyDescriptor(tools, "nope") === undefined, typeof tools.hasOwnProperty]`,
			`{"logs":[],"value":["undefined",true,true,true,false,["note","nop2","echo"],true,true,"undefined"]}`, 0},
		{"an optional call of an unknown name is undefined", `return [tools.nope?.({}) === undefined, typeof tools?.nope]`, `{"logs":[],"value":[true,"undefined"]}`, 0},
		{"an unknown name read then called is a TypeError", `const f = tools.nope; try { f({}) } catch (e) { return [e instanceof TypeError, e instanceof ToolCallError] }`,
			`{"logs":[],"value":[true,false]}`, 0},
		{"a member of an unknown name is a TypeError", `try { tools.nope.x() } catch (e) { return [e.name, e.message] }`,
			`{"logs":[],"value":["TypeError","Cannot read property 'x' of undefined or null"]}`, 0},
		{"a tool the program adds is called", `(tools as any).mine = async () => 7; return [await (tools as any).mine(), Object.keys(tools).length]`,
			`{"logs":[],"value":[7,4]}`, 0},
		{"a parameter named tools is an ordinary object", `const f = (tools: any) => tools.nope(); try { f({}) } catch (e) { return [e instanceof TypeError, e.message] }`,
			`{"logs":[],"value":[true,"Object has no member 'nope'"]}`, 0},
		{"console and JSON show the namespace's own bindings", `console.log(tools); return JSON.stringify(tools)`,
			`{"logs":["[Object: null prototype] {\n  note: [Function: note],\n  nop2: [Function: nop2],\n  echo: [Function: echo]\n}"],"value":"{}"}`, 0},
		{"awaiting tools reads no then", `return (await tools) === tools`, `{"logs":[],"value":true}`, 0},
		{"the slots still cannot be reassigned", `try { (tools as any).echo = 1 } catch (e) { return [e.name, await tools.echo({})] }`, `{"logs":[],"value":["TypeError","echo"]}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called.Store(0)
			if got := resultJSON(t, runProgram(t, rt, context.Background(), ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if n := called.Load(); n != tt.calls {
				t.Errorf("the bindings ran %d times, want %d", n, tt.calls)
			}
		})
	}
	t.Run("a namespace without an error class rejects with a plain Error", func(t *testing.T) {
		ns := []ptc.Namespace{{Global: "helpers", Bindings: []ptc.Binding{counting("h1")}}}
		got := resultJSON(t, runProgram(t, rt, context.Background(), ns, `try { await helpers.h2({}) } catch (e) { return [e.name, e.message] }`))
		if want := `{"logs":[],"value":["Error","unknown tool \"h2\"; did you mean \"h1\"?"]}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestProgramRuntimeNamespaces(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	helper := ptc.Binding{Name: "h", Call: func(context.Context, any) (any, error) { return nil, errors.New("no") }}
	t.Run("a generic namespace has its own class and member", func(t *testing.T) {
		ns := []ptc.Namespace{{Global: "helpers", ErrorClass: "HelperCallError", ErrorMember: "helperName", Bindings: []ptc.Binding{helper}}}
		got := resultJSON(t, runProgram(t, rt, context.Background(), ns, `try { await helpers.h({}) } catch (e) { return [e instanceof HelperCallError, e.name, e.helperName] }`))
		if want := `{"logs":[],"value":[true,"HelperCallError","h"]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("a namespace without a class rejects with a plain Error", func(t *testing.T) {
		ns := []ptc.Namespace{{Global: "ToolCallError", Bindings: []ptc.Binding{helper}}}
		got := resultJSON(t, runProgram(t, rt, context.Background(), ns, `try { await ToolCallError.h({}) } catch (e) { return [typeof ToolCallError, e.name, e.message, "toolName" in e, Object.getPrototypeOf(e) === Error.prototype] }`))
		if want := `{"logs":[],"value":["object","Error","no",false,true]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("invalid declarations are Run errors", func(t *testing.T) {
		_, err := rt.Run(context.Background(), ptc.Request{Program: "return 1", Bindings: []ptc.Namespace{{Global: "console"}}})
		if err == nil || err.Error() != `goja: reserved binding global "console"` {
			t.Errorf("err = %v", err)
		}
	})
}

func TestProgramRuntimeBudgets(t *testing.T) {
	never := ptc.Binding{Name: "never", Call: func(ctx context.Context, _ any) (any, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	slow := ptc.Binding{Name: "slow", Call: func(ctx context.Context, _ any) (any, error) {
		select {
		case <-time.After(300 * time.Millisecond):
			return "slow-done", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
	ns := toolsNS(never, slow)
	tests := []struct {
		name    string
		budgets func(*ptc.Budgets)
		code    string
		want    string
	}{
		{"a hot loop in try/finally ends at the compute budget", func(b *ptc.Budgets) { b.ComputeMs = 100 },
			`console.log("got this far"); try { while (true) {} } finally { console.log("finally") }`,
			`{"error":{"kind":"timeout","message":"compute budget exhausted (100ms busy)"},"logs":["got this far"]}`},
		{"a hot loop beside a pending call accrues busy time", func(b *ptc.Budgets) { b.ComputeMs = 100 },
			`tools.never({}); for (;;) {}`,
			`{"error":{"kind":"timeout","message":"compute budget exhausted (100ms busy)"},"logs":[]}`},
		{"awaiting a slow binding accrues nothing", func(b *ptc.Budgets) { b.ComputeMs = 100 },
			`return await tools.slow({})`, `{"logs":[],"value":"slow-done"}`},
		{"a never-settling call meets the wall ceiling", func(b *ptc.Budgets) { b.MaxWallMs = 150 },
			`await tools.never({})`, `{"error":{"kind":"timeout","message":"wall-clock ceiling reached (150ms)"},"logs":[]}`},
		{"a never-settling promise meets the wall ceiling", func(b *ptc.Budgets) { b.MaxWallMs = 150 },
			`await new Promise(() => {})`, `{"error":{"kind":"timeout","message":"wall-clock ceiling reached (150ms)"},"logs":[]}`},
		{"a euro fits at cap 7", func(b *ptc.Budgets) { b.MaxOutputBytes = 7 }, `return "€"`, `{"logs":[],"value":"€"}`},
		{"a euro fails at cap 6 with the whole message", func(b *ptc.Budgets) { b.MaxOutputBytes = 6 }, `return "€"`, `{"error":{"kind":"output-limit","message":"outer output exceeded 6 bytes"},"logs":[]}`},
		{"a log and a value fit at cap 11", func(b *ptc.Budgets) { b.MaxOutputBytes = 11 }, `console.log("abc"); return "xy"`, `{"logs":["abc"],"value":"xy"}`},
		{"a log and a value fail at cap 10 with the whole message", func(b *ptc.Budgets) { b.MaxOutputBytes = 10 }, `console.log("abc"); return "xy"`, `{"error":{"kind":"output-limit","message":"outer output exceeded 10 bytes"},"logs":[]}`},
		// Building and measuring 100,001 levels takes seconds under -race:
		// the budgets are not what this case is about.
		{"a log before a completion past the boundary's bounds is kept once",
			func(b *ptc.Budgets) { b.MaxOutputBytes, b.ComputeMs, b.MaxWallMs = 64, 60_000, 120_000 },
			`console.log("abc"); let v: any = 0; for (let i = 0; i < 100_001; i++) v = [v]; return v`,
			`{"error":{"kind":"output-limit","message":"outer output exceeded 64 bytes"},"logs":["abc"]}`},
		{"a log and a throw fit at cap 11", func(b *ptc.Budgets) { b.MaxOutputBytes = 11 }, `console.log("abc"); throw "xy"`, `{"error":{"kind":"exception","message":"xy"},"logs":["abc"]}`},
		{"a giant value at cap 64", func(b *ptc.Budgets) { b.MaxOutputBytes = 64 }, `return "y".repeat(10_000)`, `{"error":{"kind":"output-limit","message":"outer output exceeded 64 bytes"},"logs":[]}`},
		{"endless logging stops at the output limit", func(b *ptc.Budgets) { b.MaxOutputBytes = 300 }, `for (let i = 0; ; i++) console.log("line " + i)`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newProgramRuntime(t, tt.budgets)
			res := runProgram(t, rt, context.Background(), ns, tt.code)
			got := resultJSON(t, res)
			if tt.want == "" { // endless logging
				if res.Err == nil || res.Err.Message != "outer output exceeded 300 bytes" || len(res.Logs) == 0 || res.HasValue {
					t.Fatalf("got %s", got)
				}
				b, _ := json.Marshal(res.Logs)
				if len(b) >= 300 {
					t.Errorf("logs take %d bytes", len(b))
				}
				return
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestProgramRuntimeAbort(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	t.Run("a pre-aborted context is the abort with its reason", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("too-late"))
		got := resultJSON(t, runProgram(t, rt, ctx, nil, `return 1`))
		if want := `{"error":{"kind":"abort","message":"too-late"},"logs":[]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("an abort during a hot loop ends it", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(50*time.Millisecond, func() { cancel(errors.New("user-cancel")) })
		got := resultJSON(t, runProgram(t, rt, ctx, nil, `try { for (;;) {} } finally { for (;;) {} }`))
		if want := `{"error":{"kind":"abort","message":"user-cancel"},"logs":[]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("an abort reaches a binding in flight", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		saw := make(chan struct{})
		b := ptc.Binding{Name: "wait", Call: func(ctx context.Context, _ any) (any, error) {
			cancel(errors.New("stop"))
			<-ctx.Done()
			close(saw)
			return "late", nil
		}}
		got := resultJSON(t, runProgram(t, rt, ctx, toolsNS(b), `return await tools.wait({})`))
		<-saw
		if want := `{"error":{"kind":"abort","message":"stop"},"logs":[]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("a global set in one run is gone in the next", func(t *testing.T) {
		runProgram(t, rt, context.Background(), nil, `globalThis.leak = 1`)
		got := resultJSON(t, runProgram(t, rt, context.Background(), nil, `return typeof globalThis.leak`))
		if want := `{"logs":[],"value":"undefined"}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}

func TestProgramRuntimeClose(t *testing.T) {
	rt := newProgramRuntime(t, func(b *ptc.Budgets) { b.ComputeMs = 60_000 })
	started := make(chan struct{})
	b := ptc.Binding{Name: "go", Call: func(context.Context, any) (any, error) { close(started); return nil, nil }}
	done := make(chan ptc.Result, 1)
	go func() {
		res, err := rt.Run(context.Background(), ptc.Request{Program: `await tools.go({}); for (;;) {}`, Bindings: toolsNS(b)})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-started
	time.Sleep(20 * time.Millisecond)
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if got, want := resultJSON(t, res), `{"error":{"kind":"abort","message":"runtime disposed"},"logs":[]}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not end")
	}
	_, err := rt.Run(context.Background(), ptc.Request{Program: "return 1"})
	if !errors.Is(err, ptc.ErrRunAfterDisposal) || err.Error() != "goja: run() after disposal" {
		t.Errorf("Run after Close: %v", err)
	}
}

func TestNewProgramRuntimeValidatesBudgets(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*ptc.Budgets)
		want string
	}{
		{"a negative compute budget", func(b *ptc.Budgets) { b.ComputeMs = -1 }, "goja: config.computeMs must be a positive number, got -1"},
		{"a wall ceiling past 2^31-1", func(b *ptc.Budgets) { b.MaxWallMs = 2147483648 }, "goja: config.maxWallMs must be at most 2147483647, got 2147483648"},
		{"a fractional output cap", func(b *ptc.Budgets) { b.MaxOutputBytes = 4.5 }, "goja: config.maxOutputBytes must be a safe integer of at least 4, got 4.5"},
		{"the largest wall ceiling", func(b *ptc.Budgets) { b.MaxWallMs = 2147483647 }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := ptc.DefaultBudgets()
			tt.mod(&b)
			rt, err := NewProgramRuntime(ProgramOptions{Budgets: b})
			if rt != nil {
				_ = rt.Close()
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestProgramRuntimeDescriptors(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	if rt.Language() != ptc.TypeScript || rt.Isolation() != ptc.InProcess {
		t.Errorf("got %q %q", rt.Language(), rt.Isolation())
	}
}

func BenchmarkProgramTrivial(b *testing.B) {
	rt := newProgramRuntime(b, nil)
	req := ptc.Request{Program: "return 1+1", Bindings: toolsNS(echoBinding(""))}
	ctx := context.Background()
	for b.Loop() {
		res, err := rt.Run(ctx, req)
		if err != nil || res.Err != nil {
			b.Fatal(err, res.Err)
		}
	}
}
