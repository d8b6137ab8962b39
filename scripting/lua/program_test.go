package lua_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// newProgramRuntime is a runtime with small budgets, closed after the test.
func newProgramRuntime(t testing.TB, mod func(*ptc.Budgets)) *lua.ProgramRuntime {
	t.Helper()
	b := ptc.DefaultBudgets()
	b.ComputeMs, b.MaxWallMs = 2_000, 10_000
	if mod != nil {
		mod(&b)
	}
	rt, err := lua.NewProgramRuntime(lua.ProgramOptions{Budgets: b})
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

// identity is a binding named name that resolves with its arguments.
func identity(name string) ptc.Binding {
	return ptc.Binding{Name: name, Call: func(_ context.Context, args any) (any, error) { return args, nil }}
}

// resolving is a binding named name that resolves with v.
func resolving(name string, v any) ptc.Binding {
	return ptc.Binding{Name: name, Call: func(context.Context, any) (any, error) { return v, nil }}
}

// failing is a binding named name that fails with msg.
func failing(name, msg string) ptc.Binding {
	return ptc.Binding{Name: name, Call: func(context.Context, any) (any, error) { return nil, errors.New(msg) }}
}

// render writes a result as compact JSON: logs, value, error.
func render(t testing.TB, r ptc.Result) string {
	t.Helper()
	o := dsl.NewObject(dsl.Member{Key: "logs", Value: anySlice(r.Logs)})
	if r.HasValue {
		o.Set("value", r.Value)
	}
	if r.Err != nil {
		o.Set("error", dsl.NewObject(dsl.Member{Key: "kind", Value: string(r.Err.Kind)}, dsl.Member{Key: "message", Value: r.Err.Message}))
	}
	b, err := dsl.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func runProgram(t testing.TB, rt *lua.ProgramRuntime, ns []ptc.Namespace, code string) ptc.Result {
	t.Helper()
	res, err := rt.Run(context.Background(), ptc.Request{Program: code, Bindings: ns})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestProgramRuntimeDescriptors(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	if rt.Language() != ptc.Lua || rt.Isolation() != ptc.InProcess {
		t.Errorf("Language, Isolation = %q, %q; want lua, in-process", rt.Language(), rt.Isolation())
	}
}

func TestProgramRuntimeResults(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	ns := toolsNS(identity("echo"), resolving("nulls", dsl.NewObject(
		dsl.Member{Key: "n", Value: nil}, dsl.Member{Key: "list", Value: []any{nil, 1.0}},
		dsl.Member{Key: "empty", Value: []any{}}, dsl.Member{Key: "obj", Value: dsl.NewObject()})),
		identity("a.b"), identity("__index"), identity("__newindex"), identity("__call"))
	tests := []struct {
		name, code, want string
	}{
		{"a sum returns its value", `return 1 + 1`, `{"logs":[],"value":2}`},
		{"null is an explicit value", `return null`, `{"logs":[],"value":null}`},
		{"nil is no value", `return nil`, `{"logs":[]}`},
		{"falling off the end is no value", `local x = 1`, `{"logs":[]}`},
		{"only the first returned value counts", `return 1, 2`, `{"logs":[],"value":1}`},
		{"objects come out with their keys sorted", `return {zeta = 1, alpha = {c = 3, b = 2}, mid = "m"}`,
			`{"logs":[],"value":{"alpha":{"b":2,"c":3},"mid":"m","zeta":1}}`},
		{"an empty table is an object", `return {}`, `{"logs":[],"value":{}}`},
		{"array() makes an empty array", `return {array(), object(), array{1, 2}, object{"a"}}`, `{"logs":[],"value":[[],{},[1,2],{"1":"a"}]}`},
		{"null round-trips through a tool", `local v = tools.nulls{} return {v.n == null, v.list[1] == null, #v.list, v}`,
			`{"logs":[],"value":[true,true,2,{"empty":[],"list":[null,1],"n":null,"obj":{}}]}`},
		{"empty arrays and objects keep their kind through a tool", `local v = tools.nulls{} return tools.echo{v.empty, v.obj}`,
			`{"logs":[],"value":[[],{}]}`},
		{"null is printable and testable", `print(null, tostring(null)) return null == null`, `{"logs":["null\tnull"],"value":true}`},
		{"integral numbers print without a fraction", `print(3, 2^53, 1.5, -0.25)`, `{"logs":["3\t9007199254740992\t1.5\t-0.25"]}`},
		{"a name that is not an identifier is a key", `return tools["a.b"]{x = 1}`, `{"logs":[],"value":{"x":1}}`},
		{"metamethod names are ordinary keys", `return {tools.__index{i = 1}, tools.__newindex{n = 1}, tools.__call{c = 1}}`,
			`{"logs":[],"value":[{"i":1},{"n":1},{"c":1}]}`},
		{"the keys of a namespace are its bindings", `local ks = {} for k in pairs(tools) do ks[#ks + 1] = k end table.sort(ks) return ks`,
			`{"logs":[],"value":["__call","__index","__newindex","a.b","echo","nulls"]}`},
		{"gather is offered but is no key", `return {type(tools.gather), rawget(tools, "gather") == nil, getmetatable(tools)}`,
			`{"logs":[],"value":["function",true,"tools"]}`},
		{"a namespace's metatable is protected", `return (pcall(setmetatable, tools, nil))`, `{"logs":[],"value":false}`},
		{"a missing binding is nil", `return tools.nothing == nil`, `{"logs":[],"value":true}`},
		{"a reassigned binding only changes the program", `tools.echo = nil return tools.echo == nil`, `{"logs":[],"value":true}`},
		{"a function completion is invalid output", `return print`, `{"logs":[],"error":{"kind":"invalid-output","message":"program completion must be lossless JSON"}}`},
		{"a mixed table completion is invalid output", `return {1, a = 2}`, `{"logs":[],"error":{"kind":"invalid-output","message":"program completion must be lossless JSON"}}`},
		{"the sandbox is all there is", `return {io == nil, require == nil, loadfile == nil, dofile == nil, debug == nil, package == nil, os.execute == nil, os.getenv == nil, string.dump == nil, type(os.time), type(os.clock), type(os.date)}`,
			`{"logs":[],"value":[true,true,true,true,true,true,true,true,true,"function","function","function"]}`},
		{"a binary chunk does not load", `local f, err = load("\27Lua") return {f == nil, type(err)}`, `{"logs":[],"value":[true,"string"]}`},
		{"a program starting as a binary chunk is an exception", "\x1bLua", `{"logs":[],"error":{"kind":"exception","message":"program.lua: attempt to load a binary chunk (only text chunks can be loaded)"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, runProgram(t, rt, ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestProgramRuntimeExceptions(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	ns := toolsNS(failing("fail", "deliberate failure"))
	tests := []struct {
		name, code, want string
	}{
		{"error gives the message and the line", "local x = 1\nerror(\"kaboom\")", `{"logs":[],"error":{"kind":"exception","message":"program.lua:2: kaboom"}}`},
		{"error at level 0 is the message alone", `error("xy", 0)`, `{"logs":[],"error":{"kind":"exception","message":"xy"}}`},
		{"a runtime error names the line", "local t = nil\nreturn t.x", `{"logs":[],"error":{"kind":"exception","message":"program.lua:2: attempt to index a non-table object(nil) with key 'x'"}}`},
		{"a number is its text", `error(42)`, `{"logs":[],"error":{"kind":"exception","message":"42"}}`},
		{"a table with a message is that message", `error({message = "plain"})`, `{"logs":[],"error":{"kind":"exception","message":"plain"}}`},
		{"a table with its own tostring is unrenderable, never called", `error(setmetatable({}, {__tostring = function() print("called") return "x" end}))`,
			`{"logs":[],"error":{"kind":"exception","message":"program threw an unrenderable value"}}`},
		{"a function is unrenderable", `error(print)`, `{"logs":[],"error":{"kind":"exception","message":"program threw an unrenderable value"}}`},
		{"an uncaught tool error names its class", `tools.fail{}`, `{"logs":[],"error":{"kind":"exception","message":"ToolCallError: deliberate failure"}}`},
		{"logs before an error are kept", `print("before") error("after", 0)`, `{"logs":["before"],"error":{"kind":"exception","message":"after"}}`},
		{"a syntax error names the line and runs nothing", "print(\"ran\")\nlocal = 3",
			`{"logs":[],"error":{"kind":"exception","message":"program.lua line:2(column:7) near '=':   syntax error"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, runProgram(t, rt, ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestProgramRuntimeToolCallErrors(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	var called atomic.Int32
	count := ptc.Binding{Name: "count", Call: func(_ context.Context, args any) (any, error) {
		called.Add(1)
		return args, nil
	}}
	ns := append(toolsNS(failing("fail", "deliberate failure"), count, resolving("bad", func() {})),
		ptc.Namespace{Global: "helpers", ErrorClass: "HelperCallError", ErrorMember: "helperName", Bindings: []ptc.Binding{failing("h", "helper down")}},
		ptc.Namespace{Global: "plain", Bindings: []ptc.Binding{failing("p", "plain down")}})
	tests := []struct {
		name, code, want string
	}{
		{"pcall gives false and the error's fields", `local ok, e = pcall(tools.fail, {})
return {ok, e.name, e.toolName, e.message, tostring(e) == e.message, ToolCallError.is(e), getmetatable(e)}`,
			`{"logs":[],"value":[false,"ToolCallError","fail","deliberate failure",true,true,"ToolCallError"]}`},
		{"is refuses look-alikes", `return {ToolCallError.is({name = "ToolCallError", toolName = "fail", message = "m"}), ToolCallError.is("x"), ToolCallError.is(nil)}`,
			`{"logs":[],"value":[false,false,false]}`},
		{"an error's metatable cannot be changed", `local _, e = pcall(tools.fail, {}) return (pcall(setmetatable, e, nil))`, `{"logs":[],"value":false}`},
		{"print shows the message", `local _, e = pcall(tools.fail, {}) print("got", e)`, `{"logs":["got\tdeliberate failure"]}`},
		{"another namespace raises its own class", `local _, e = pcall(helpers.h, {}) return {HelperCallError.is(e), ToolCallError.is(e), e.name, e.helperName, e.message}`,
			`{"logs":[],"value":[true,false,"HelperCallError","h","helper down"]}`},
		{"a namespace without a class raises the message", `local ok, e = pcall(plain.p, {}) return {ok, e}`, `{"logs":[],"value":[false,"plain down"]}`},
		{"no argument is refused before the call", `local _, e = pcall(tools.count) return e.message`,
			"{\"logs\":[],\"value\":\"tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)\"}"},
		{"a mixed table is refused before the call", `local _, e = pcall(tools.count, {1, a = 2}) return e.message`,
			`{"logs":[],"value":"tool arguments must be lossless JSON: args: a table with both string and number keys is not lossless JSON"}`},
		{"a function value is refused before the call", `local _, e = pcall(tools.count, {f = print}) return e.message`,
			`{"logs":[],"value":"tool arguments must be lossless JSON: args.f: a function is not lossless JSON"}`},
		{"a coroutine, NaN and a hole are refused", `local r = {}
for _, a in ipairs({{coroutine.create(print)}, {0/0}, {1, nil, 3}}) do local _, e = pcall(tools.count, a) r[#r + 1] = e.message end
return r`, `{"logs":[],"value":["tool arguments must be lossless JSON: args[0]: a thread (coroutine) is not lossless JSON","tool arguments must be lossless JSON: args[0]: NaN is not lossless JSON","tool arguments must be lossless JSON: args[1]: nil at Lua index 2 of an array is not lossless JSON (use null for null)"]}`},
		{"a resolution that is not lossless JSON is refused", `local _, e = pcall(tools.bad, {}) return e.message`, `{"logs":[],"value":"binding resolution must be lossless JSON"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, runProgram(t, rt, ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if n := called.Load(); n != 0 {
		t.Errorf("tools.count ran %d times for refused arguments", n)
	}
}

func TestProgramRuntimeUnknownTools(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	var called atomic.Int32
	counting := func(name string) ptc.Binding {
		return ptc.Binding{Name: name, Call: func(context.Context, any) (any, error) {
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
		{"a call of an unknown tool raises a ToolCallError naming the close tools",
			`local ok, e = pcall(function() return tools.nope{} end)
return {ok, ToolCallError.is(e), e.name, e.toolName, e.message, tostring(e) == e.message}`,
			`{"logs":[],"value":[false,true,"ToolCallError","nope","` + nope + `",true]}`, 0},
		{"pcall of an unknown tool gives the error", `local ok, e = pcall(tools.nope, {}) return {ok, ToolCallError.is(e), e.toolName}`,
			`{"logs":[],"value":[false,true,"nope"]}`, 0},
		{"an uncaught call of an unknown tool is the exception", `tools.nope{}`,
			`{"logs":[],"error":{"kind":"exception","message":"ToolCallError: ` + nope + `"}}`, 0},
		{"a bracketed name and a call with parentheses are calls", `local _, a = pcall(function() return tools["nope"]({}) end)
local _, b = pcall(function() return tools.nope({}) end)
return {a.toolName, b.toolName}`, `{"logs":[],"value":["nope","nope"]}`, 0},
		{"a computed name is a call", `local n = "nope" local _, e = pcall(function() return tools[n]{} end) return e.message`,
			`{"logs":[],"value":"` + nope + `"}`, 0},
		{"a method call is a call", `local _, e = pcall(function() return tools:nope() end) return e.toolName`, `{"logs":[],"value":"nope"}`, 0},
		{"a call split over lines is a call", "local _, e = pcall(function() return tools\n  .nope{\n    x = 1\n  } end) return e.toolName",
			`{"logs":[],"value":"nope"}`, 0},
		{"a call inside gather is raised by gather", `local ok, e = pcall(tools.gather, function() return tools.echo{} end, function() return tools.nope{} end)
return {ok, e.toolName}`, `{"logs":[],"value":[false,"nope"]}`, 1},
		{"a name far from every tool names none", `local _, e = pcall(tools.deploy, {}) return e.message`, `{"logs":[],"value":"unknown tool \"deploy\""}`, 0},
		{"reading an unknown name is still nil and changes nothing else", `local keys = {}
for k in pairs(tools) do keys[#keys + 1] = k end
table.sort(keys)
return {type(tools.nope), tools.nope == nil, tools["nope"] == nil, rawget(tools, "nope") == nil, keys, type(tools.hasOwnProperty), type(tools.gather)}`,
			`{"logs":[],"value":["nil",true,true,true,["echo","nop2","note"],"nil","function"]}`, 0},
		{"a name read on a line that also calls it is nil", `local t = type(tools.nope) local ok = pcall(function() return tools.nope{} end) return {t, ok}`,
			`{"logs":[],"value":["nil",false]}`, 0},
		{"an unknown name read then called on another line keeps Lua's error", `local f = tools.nope
local ok, e = pcall(function() return f{} end)
return {ok, type(e) == "string" and e:find("attempt to call a non%-function object") ~= nil}`, `{"logs":[],"value":[false,true]}`, 0},
		{"a tool the program adds is called", `tools.mine = function() return 7 end return tools.mine{}`, `{"logs":[],"value":7}`, 0},
		{"a local table named tools is an ordinary table", `local tools = {} local ok, e = pcall(function() return tools.nope{} end)
return {ok, type(e) == "string" and e:find("attempt to call a non%-function object") ~= nil}`, `{"logs":[],"value":[false,true]}`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called.Store(0)
			if got := render(t, runProgram(t, rt, ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if n := called.Load(); n != tt.calls {
				t.Errorf("the bindings ran %d times, want %d", n, tt.calls)
			}
		})
	}
	t.Run("a namespace without an error class raises the message", func(t *testing.T) {
		ns := []ptc.Namespace{{Global: "helpers", Bindings: []ptc.Binding{counting("h1")}}}
		got := render(t, runProgram(t, rt, ns, `local ok, e = pcall(helpers.h2, {}) return {ok, e}`))
		if want := `{"logs":[],"value":[false,"unknown tool \"h2\"; did you mean \"h1\"?"]}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestProgramRuntimePrint(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct {
		name, code string
		want       []string
	}{
		{"one entry per call, tab-joined", `print("point", 1) print("careful")`, []string{"point\t1", "careful"}},
		{"no arguments is an empty entry", `print()`, []string{""}},
		{"nil, booleans and null", `print(nil, true, false, null)`, []string{"nil\ttrue\tfalse\tnull"}},
		{"a __tostring metamethod is called", `print(setmetatable({}, {__tostring = function() return "P" end}))`, []string{"P"}},
		{"reassigning tostring changes nothing", `tostring = function() return "X" end print(1, "a")`, []string{"1\ta"}},
		{"a table prints as a table", `print(({tostring({})})[1]:sub(1, 6))`, []string{"table:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, rt, nil, tt.code)
			if res.Err != nil {
				t.Fatalf("failed: %s", render(t, res))
			}
			if strings.Join(res.Logs, "\x00") != strings.Join(tt.want, "\x00") {
				t.Errorf("logs\ngot  %q\nwant %q", res.Logs, tt.want)
			}
		})
	}
	t.Run("a __tostring returning a table is an error", func(t *testing.T) {
		res := runProgram(t, rt, nil, `print(setmetatable({}, {__tostring = function() return {} end}))`)
		if res.Err == nil || res.Err.Kind != ptc.KindException || !strings.Contains(res.Err.Message, "'__tostring' must return a string") {
			t.Errorf("got %s", render(t, res))
		}
	})
	t.Run("a log before a completion past the converter's bounds is kept once", func(t *testing.T) {
		// Generous budgets: building 100,001 levels is slow under -race.
		rt := newProgramRuntime(t, func(b *ptc.Budgets) { b.MaxOutputBytes, b.ComputeMs, b.MaxWallMs = 64, 60_000, 120_000 })
		res := runProgram(t, rt, nil, `print("abc") local v = 0 for i = 1, 100001 do v = {v} end return v`)
		if got, want := render(t, res), `{"logs":["abc"],"error":{"kind":"output-limit","message":"outer output exceeded 64 bytes"}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("an entry past the output cap ends the run", func(t *testing.T) {
		rt := newProgramRuntime(t, func(b *ptc.Budgets) { b.MaxOutputBytes = 64 })
		res := runProgram(t, rt, nil, `local s = string.rep("x", 1000) print(s, s, s) return 1`)
		if got, want := render(t, res), `{"logs":["xxxxxxxxxxxxxxxxxxxxxxxxxxxx"],"error":{"kind":"output-limit","message":"outer output exceeded 64 bytes"}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

// barrier is a binding whose calls each wait until n calls are in flight at
// once (or the run ends): a program that does not overlap them meets its
// wall ceiling.
type barrier struct {
	n       int
	mu      sync.Mutex
	started []string
	peak    int
	now     int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) enter(args any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, _ := dsl.Marshal(args)
	b.started = append(b.started, string(s))
	b.now++
	b.peak = max(b.peak, b.now)
	if len(b.started) == b.n {
		close(b.all)
	}
}

func (b *barrier) wait(ctx context.Context, args any) (any, error) {
	select {
	case <-b.all:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	b.mu.Lock()
	b.now--
	b.mu.Unlock()
	o, _ := args.(*dsl.Object)
	v, _ := o.Get("v")
	return v, nil
}

// call is the barrier as a one-step binding.
func (b *barrier) call(name string) ptc.Binding {
	return ptc.Binding{Name: name, Call: func(ctx context.Context, args any) (any, error) {
		b.enter(args)
		return b.wait(ctx, args)
	}}
}

// twoStep is the barrier as a binding with Start, as ptc's executor gives
// them: Call must not be used.
func (b *barrier) twoStep(name string) ptc.Binding {
	return ptc.Binding{
		Name: name,
		Call: func(context.Context, any) (any, error) { return nil, errors.New("Call used instead of Start") },
		Start: func(_ context.Context, args any) (func(context.Context) (any, error), error) {
			b.enter(args)
			return func(ctx context.Context) (any, error) { return b.wait(ctx, args) }, nil
		},
	}
}

func TestGatherOverlapsCalls(t *testing.T) {
	const program = `return tools.gather(
  function() return tools.r{v = 1} end,
  function() local a = tools.r{v = 2} return a * 10 end,
  function() return tools.r{v = 3} end)`
	for _, tc := range []struct {
		name    string
		bind    func(*barrier) ptc.Binding
		ordered bool // Start is called in submission order; Call on goroutines of their own
	}{
		{"with bindings made in two steps", func(b *barrier) ptc.Binding { return b.twoStep("r") }, true},
		{"with bindings made in one step", func(b *barrier) ptc.Binding { return b.call("r") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := newProgramRuntime(t, func(b *ptc.Budgets) { b.MaxWallMs = 20_000 })
			b := newBarrier(3)
			res := runProgram(t, rt, toolsNS(tc.bind(b)), program)
			if got, want := render(t, res), `{"logs":[],"value":[1,20,3]}`; got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			if got := strings.Join(b.started, " "); tc.ordered && got != `{"v":1} {"v":2} {"v":3}` {
				t.Errorf("started %s, want in submission order", got)
			}
			if b.peak != 3 {
				t.Errorf("peak %d calls in flight, want 3", b.peak)
			}
		})
	}
}

func TestGather(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	var order []string
	var mu sync.Mutex
	// log records the calls as they are submitted (Start), as ptc's
	// executor numbers them.
	log := func(name string) ptc.Binding {
		return ptc.Binding{
			Name: name,
			Call: func(context.Context, any) (any, error) { return nil, errors.New("Call used instead of Start") },
			Start: func(_ context.Context, args any) (func(context.Context) (any, error), error) {
				mu.Lock()
				defer mu.Unlock()
				s, _ := dsl.Marshal(args)
				order = append(order, name+string(s))
				return func(context.Context) (any, error) { return args, nil }, nil
			},
		}
	}
	ns := toolsNS(log("echo"), failing("fail", "deliberate failure"))
	tests := []struct {
		name, code, want string
	}{
		{"the results come in one array table in order, null for a function that returns nothing",
			`local r = tools.gather(function() return 1 end, function() return tools.echo{2} end, function() end, function() return nil end)
return {r[1], r[2], r[3] == null, r[4] == null, #r}`, `{"logs":[],"value":[1,[2],true,true,4]}`},
		{"the array table is the only result", `return select("#", tools.gather(function() return 1 end, function() return 2 end))`,
			`{"logs":[],"value":1}`},
		{"the array table is returned as a JSON array", `return tools.gather(function() return "a" end, function() end)`,
			`{"logs":[],"value":["a",null]}`},
		{"only a function's first result is kept", `return tools.gather(function() return 1, 2 end)`, `{"logs":[],"value":[1]}`},
		{"no functions give an empty array", `return tools.gather()`, `{"logs":[],"value":[]}`},
		{"a function may make several calls", `local r = tools.gather(function() local x = tools.echo{1} local y = tools.echo{2} return {x, y} end) return r[1]`,
			`{"logs":[],"value":[[1],[2]]}`},
		{"the first error is raised", `local ok, e = pcall(tools.gather, function() return tools.echo{1} end, function() return tools.fail{} end, function() tools.echo{3} error("later", 0) end)
return {ok, ToolCallError.is(e), e.message}`, `{"logs":[],"value":[false,true,"deliberate failure"]}`},
		{"a plain error is raised as it was", `local ok, e = pcall(tools.gather, function() error("boom", 0) end) return {ok, e}`, `{"logs":[],"value":[false,"boom"]}`},
		{"a failed call can be caught inside a function", `local r = tools.gather(function() local ok, e = pcall(tools.fail, {}) return e.message end) return r`,
			`{"logs":[],"value":["deliberate failure"]}`},
		{"calls inside pcall still work", `return tools.gather(function() local ok, v = pcall(tools.echo, {1}) return v end, function() return tools.echo{2} end)`,
			`{"logs":[],"value":[[1],[2]]}`},
		{"a tail call works", `return tools.gather(function() return tools.echo{1} end, function() return tools.echo{2} end)`,
			`{"logs":[],"value":[[1],[2]]}`},
		{"gathers nest", `return tools.gather(function() return tools.gather(function() return tools.echo{1} end, function() return tools.echo{2} end) end,
  function() return tools.echo{3} end)`, `{"logs":[],"value":[[[1],[2]],[3]]}`},
		{"a function that yields is an error", `local ok, e = pcall(tools.gather, function() coroutine.yield(1) end) return {ok, e}`,
			`{"logs":[],"value":[false,"program.lua:1: tools.gather: function #1 yielded outside a tool call"]}`},
		{"a coroutine inside a function works", `return tools.gather(function() local co = coroutine.wrap(function() coroutine.yield(tools.echo{1}) end) return co() end)`,
			`{"logs":[],"value":[[1]]}`},
		{"a value that is not a function is refused", `local ok, e = pcall(tools.gather, 1) return {ok, e}`,
			`{"logs":[],"value":[false,"program.lua:1: bad argument #1 to (anonymous) (function expected)"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(t, runProgram(t, rt, ns, tt.code)); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("calls are submitted as the functions reach them", func(t *testing.T) {
		mu.Lock()
		order = nil
		mu.Unlock()
		res := runProgram(t, rt, ns, `tools.gather(function() tools.echo{"a1"} tools.echo{"a2"} end, function() tools.echo{"b1"} end)`)
		if res.Err != nil {
			t.Fatal(render(t, res))
		}
		if got, want := strings.Join(order, " "), `echo["a1"] echo["b1"] echo["a2"]`; got != want {
			t.Errorf("calls %s, want %s", got, want)
		}
	})
	t.Run("a binding named gather wins", func(t *testing.T) {
		res := runProgram(t, rt, toolsNS(resolving("gather", "the tool")), `return tools.gather{}`)
		if got, want := render(t, res), `{"logs":[],"value":"the tool"}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestProgramRuntimeHostilePrograms(t *testing.T) {
	// The runaway cases meet a short compute budget; the others must end
	// on their own, well within a long one (the race detector is slow).
	short := newProgramRuntime(t, func(b *ptc.Budgets) { b.ComputeMs = 200 })
	long := newProgramRuntime(t, func(b *ptc.Budgets) { b.ComputeMs, b.MaxWallMs = 30_000, 60_000 })
	ns := toolsNS(identity("echo"))
	timeout := `{"logs":[],"error":{"kind":"timeout","message":"compute budget exhausted (200ms busy)"}}`
	tests := []struct {
		name, code string
		kind       ptc.Kind
		want       string // the exact result, or a substring of the message
	}{
		{"a runaway loop", `while true do end`, ptc.KindTimeout, timeout},
		{"a runaway loop inside pcall", `pcall(function() while true do end end) return "escaped"`, ptc.KindTimeout, timeout},
		{"a loop around pcall", `while true do pcall(function() while true do end end) end`, ptc.KindTimeout, timeout},
		{"a loop catching its own errors", `while true do pcall(error, "x") end`, ptc.KindTimeout, timeout},
		{"xpcall whose handler loops", `xpcall(function() error("x") end, function() while true do end end)`, ptc.KindTimeout, timeout},
		{"a tail-call loop", `local function f() return f() end return f()`, ptc.KindTimeout, timeout},
		{"a loop inside a gathered function", `tools.gather(function() tools.echo{} while true do end end)`, ptc.KindTimeout, timeout},
		{"a pattern that backtracks", `return string.find(string.rep("a", 5000), ".-.-.-.-.-.-.-b")`, ptc.KindTimeout, timeout},
		{"deep recursion", `local function f() return 1 + f() end return f()`, ptc.KindException, "callstack overflow"},
		{"deep recursion inside pcall is caught", `local function f() return 1 + f() end return (pcall(f))`, "", `{"logs":[],"value":false}`},
		{"string.rep", `return string.rep("x", 1e10)`, ptc.KindException, "over the limit"},
		{"doubling a string", `local s = "x" while true do s = s .. s end`, ptc.KindException, "over the limit"},
		{"string.format", `return string.format("%s%s%s%s", string.rep("x", 3e7), string.rep("x", 3e7), string.rep("x", 3e7), string.rep("x", 3e7))`, ptc.KindException, "over the limit"},
		{"gsub", `local s = string.rep("x", 1000) return s:gsub("x", {x = string.rep("y", 1e5)})`, ptc.KindException, "over the limit"},
		{"table.concat", `local t = {} for i = 1, 100 do t[i] = string.rep("x", 1e6) end return table.concat(t)`, ptc.KindException, "over the limit"},
		{"a coroutine flood", `local t = {} for i = 1, 1e6 do t[i] = coroutine.create(print) end`, ptc.KindException, "too many coroutines"},
		{"a gather flood", `local fs = {} for i = 1, 20000 do fs[i] = print end tools.gather(unpack(fs))`, ptc.KindException, "tools.gather: too many functions"},
		{"nested gathers", `local function g() return tools.gather(g) end g()`, ptc.KindException, "too many gathers inside one another"},
		{"table.insert far away", `table.insert({}, 6e7, 1)`, ptc.KindException, "position out of bounds"},
		{"a huge chunk through load", `return (select(2, load(string.rep("x = 1 ", 1e6))))`, "",
			`{"logs":[],"value":"<string>: chunk of 6000000 bytes is over the limit of 1048576 bytes"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := long
			if tt.kind == ptc.KindTimeout {
				rt = short
			}
			res := runProgram(t, rt, ns, tt.code)
			got := render(t, res)
			switch {
			case strings.HasPrefix(tt.want, "{"):
				if got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			case res.Err == nil || res.Err.Kind != tt.kind || !strings.Contains(res.Err.Message, tt.want):
				t.Errorf("got %s, want %s containing %q", got, tt.kind, tt.want)
			}
			if next := render(t, runProgram(t, rt, ns, `return tools.echo{"alive"}`)); next != `{"logs":[],"value":["alive"]}` {
				t.Errorf("the next run: %s", next)
			}
		})
	}
}

func TestReassignedGlobalsDoNotChangeTheBridge(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	ns := toolsNS(identity("echo"), failing("fail", "deliberate failure"))
	const tamper = `
setmetatable, getmetatable, pairs, ipairs, next, type, rawget, rawset, rawequal, tostring, tonumber, select, unpack, error, assert =
  nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil
math.floor, os.time = nil, nil
table.concat, table.insert, table.sort, table.remove = nil, nil, nil, nil
string.rep, string.format, string.sub, string.gsub, string.find, string.len, string.byte, string.char = nil, nil, nil, nil, nil, nil, nil, nil
coroutine.create, coroutine.resume, coroutine.yield, coroutine.wrap, coroutine.running, coroutine.status = nil, nil, nil, nil, nil, nil
`
	const use = `
local v = tools.echo{list = {1, 2}, obj = {b = 1, a = null}, e = array()}
local g = tools.gather(function() return tools.echo{1} end, function() return tools.echo{2} end)
local ok, e = pcall(tools.fail, {})
print("v", v.obj.a, ToolCallError.is(e), e)
return {v, g[1], g[2], ok, e.message}`
	want := `{"logs":["v\tnull\ttrue\tdeliberate failure"],"value":[{"e":[],"list":[1,2],"obj":{"a":null,"b":1}},[1],[2],false,"deliberate failure"]}`
	if got := render(t, runProgram(t, rt, ns, use)); got != want {
		t.Fatalf("untampered: got %s\nwant %s", got, want)
	}
	if got := render(t, runProgram(t, rt, ns, tamper+use)); got != want {
		t.Errorf("tampered: got %s\nwant %s", got, want)
	}
}

func TestTamperingStaysInItsRun(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct{ name, tamper string }{
		{"the string metatable", `local mt = getmetatable("") string.upper = function() return "hacked" end string.len = nil`},
		{"the globals' metatable", `setmetatable(_G, {__index = function() return "hacked" end, __newindex = function() end})`},
		{"a library table", `table.concat = function() return "hacked" end math.floor = nil`},
		{"print", `print = function() end`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := runProgram(t, rt, nil, tt.tamper); res.Err != nil {
				t.Fatalf("tampering failed: %s", render(t, res))
			}
			res := runProgram(t, rt, nil, `print(("a"):upper(), #"abc", table.concat({1, 2}, ","), math.floor(1.5), leak) return ("x"):len()`)
			if got, want := render(t, res), `{"logs":["A\t3\t1,2\t1\tnil"],"value":1}`; got != want {
				t.Errorf("the next run: got %s\nwant %s", got, want)
			}
		})
	}
}

func TestAProgramPastTheMemoryLimitFailsAsWorkerExitAndTheNextRunWorks(t *testing.T) {
	guard, msg := hosttest.MemoryGuard(t, 96*scripting.MiB)
	var limit int64
	if _, err := fmt.Sscanf(msg, "script exceeded the memory limit (%d MiB)", &limit); err != nil {
		t.Fatal(err)
	}
	rt, err := lua.NewProgramRuntime(lua.ProgramOptions{Memory: guard})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(context.Background(), ptc.Request{Program: `local kept = {} while true do kept[#kept + 1] = string.rep("x", 8388608 + #kept) end`})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("worker exceeded its memory limit (%d MiB)", limit)
	if res.Err == nil || res.Err.Kind != ptc.KindWorkerExit || res.Err.Message != want {
		t.Fatalf("got %+v, want worker-exit %q", res.Err, want)
	}
	res, err = rt.Run(context.Background(), ptc.Request{Program: `return 1 + 1`})
	if err != nil || res.Err != nil || res.Value != float64(2) {
		t.Fatalf("the next run: %+v, %v", res, err)
	}
}

func TestCompiledProgramsAreSharedAcrossRuns(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	// The same text twice (the second from the cache), concatenations in
	// nested functions included, with concurrent runs.
	const code = `local function f(a) return function(b) return a .. "-" .. b end end print(f("x")("y")) return f(1)(2)`
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := rt.Run(context.Background(), ptc.Request{Program: code})
			if err != nil {
				got[i] = err.Error()
				return
			}
			got[i] = render(t, res)
		}()
	}
	wg.Wait()
	for i, g := range got {
		if want := `{"logs":["x-y"],"value":"1-2"}`; g != want {
			t.Errorf("run %d: got %s, want %s", i, g, want)
		}
	}
}

func TestProgramRuntimeWithoutWarmStates(t *testing.T) {
	rt, err := lua.NewProgramRuntime(lua.ProgramOptions{WarmStates: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if got := render(t, runProgram(t, rt, nil, `return 1 + 1`)); got != `{"logs":[],"value":2}` {
		t.Errorf("got %s", got)
	}
}

func TestNewProgramRuntimeValidatesBudgets(t *testing.T) {
	_, err := lua.NewProgramRuntime(lua.ProgramOptions{Budgets: ptc.Budgets{ComputeMs: -1, MaxWallMs: 1, MaxOutputBytes: 4, MaxMemoryMB: 1}})
	if err == nil || err.Error() != "gopher-lua: config.computeMs must be a positive number, got -1" {
		t.Errorf("err = %v", err)
	}
}
