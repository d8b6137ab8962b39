package sandbox

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// allocated returns the bytes fn allocated on the Go heap in all.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// callErr compiles src and runs it with Call under ctx, returning the error.
func callErr(t *testing.T, L *lua.LState, ctx context.Context, src string) error {
	t.Helper()
	fn, err := Load(L, src, "test", 0)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	defer Interruptible(L, ctx)()
	L.Push(fn)
	return Call(L, 0, 0)
}

func TestCoroutinesAreCappedPerCall(t *testing.T) {
	t.Run("a million coroutines are refused at the limit", func(t *testing.T) {
		L := newState(t, Options{})
		for _, fn := range []string{"create", "wrap"} {
			var err error
			n := allocated(func() {
				err = callErr(t, L, context.Background(), `for i = 1, 1e6 do coroutine.`+fn+`(function() end) end`)
			})
			var ae *lua.ApiError
			if !errors.As(err, &ae) || ae.Object.String() != "test:1: too many coroutines (the limit is 10000 per call)" {
				t.Fatalf("coroutine.%s: Call = %v", fn, err)
			}
			if n > 512<<20 {
				t.Fatalf("coroutine.%s: allocated %d MiB", fn, n>>20)
			}
		}
	})
	t.Run("the limit is an option", func(t *testing.T) {
		L := newState(t, Options{MaxCoroutines: 3})
		err := callErr(t, L, context.Background(), `local made = 0 for i = 1, 3 do coroutine.create(print or tostring) made = made + 1 end
local ok, msg = pcall(coroutine.wrap, tostring) error(made .. " " .. msg, 0)`)
		if ae, ok := err.(*lua.ApiError); !ok || ae.Object.String() != "3 test:2: too many coroutines (the limit is 3 per call)" {
			t.Fatalf("Call = %v", err)
		}
	})
	t.Run("each call from the host starts a new count", func(t *testing.T) {
		L := newState(t, Options{MaxCoroutines: 3})
		for i := range 3 {
			if err := callErr(t, L, context.Background(), `for i = 1, 3 do coroutine.create(tostring) end`); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
		}
	})
	t.Run("a call nested in a script's call does not", func(t *testing.T) {
		L := newState(t, Options{MaxCoroutines: 3})
		inner, err := Load(L, `coroutine.create(tostring)`, "inner", 0)
		if err != nil {
			t.Fatal(err)
		}
		L.G.Global.RawSetString("host", L.NewFunction(func(L *lua.LState) int {
			L.Push(inner)
			if err := Call(L, 0, 0); err != nil {
				L.RaiseError("%s", err.(*lua.ApiError).Object.String())
			}
			return 0
		}))
		err = callErr(t, L, context.Background(), `coroutine.create(tostring) coroutine.create(tostring) host() host()`)
		if ae, ok := err.(*lua.ApiError); !ok || ae.Object.String() != "test:1: inner:1: too many coroutines (the limit is 3 per call)" {
			t.Fatalf("Call = %v", err)
		}
	})
	t.Run("a coroutine made under one call's context runs under the next one's", func(t *testing.T) {
		L := newState(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		if err := callErr(t, L, ctx, `co = coroutine.wrap(function() while true do coroutine.yield(1) end end)`); err != nil {
			t.Fatal(err)
		}
		cancel()
		ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
		defer cancel2()
		if err := callErr(t, L, ctx2, `assert(co() == 1)`); err != nil {
			t.Fatalf("resumed after the first context ended: %v", err)
		}
	})
}

func TestErrorsCarryShortTracebacks(t *testing.T) {
	t.Run("a tail-call loop cut by its deadline fails fast with a short traceback", func(t *testing.T) {
		L := newState(t, Options{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		var err error
		n := allocated(func() { err = callErr(t, L, ctx, "local function f() return f() end\nf()") })
		var ie *InterruptedError
		if !errors.As(err, &ie) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Call = %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("took %v", d)
		}
		if n > 64<<20 {
			t.Fatalf("allocated %d MiB", n>>20)
		}
		var ae *lua.ApiError
		if !errors.As(ie.Lua, &ae) || len(ae.StackTrace) > 1000 {
			t.Fatalf("Lua error = %#v", ie.Lua)
		}
	})
	t.Run("an error at the end of a long tail-call chain is caught without tracing each call", func(t *testing.T) {
		// gopher-lua's traceback would take 16 bytes per tail call; the
		// chain itself allocates its numbers, so compare with a chain
		// that ends without an error.
		const chain = `local function g(n) if n == 0 then END end return g(n - 1) end
`
		L := newState(t, Options{})
		base := allocated(func() {
			if err := callErr(t, L, context.Background(), strings.Replace(chain, "END", "return", 1)+`g(1e5) g(1e5) g(1e5)`); err != nil {
				t.Fatal(err)
			}
		})
		var err error
		n := allocated(func() {
			err = callErr(t, L, context.Background(), strings.Replace(chain, "END", `error("deep")`, 1)+`
local ok, msg = pcall(g, 1e5) assert(msg == "test:1: deep", msg)
ok, msg = xpcall(function() return g(1e5) end, function(m) return "handled " .. m end) assert(msg == "handled test:1: deep", msg)
g(1e5)`)
		})
		if ae, ok := err.(*lua.ApiError); !ok || ae.Object.String() != "test:1: deep" || len(ae.StackTrace) > 1000 {
			t.Fatalf("Call = %#v", err)
		}
		if n > base+8<<20 {
			t.Fatalf("allocated %d MiB, %d MiB without the errors", n>>20, base>>20)
		}
	})
	t.Run("a stack overflow after a long tail-call chain is caught without tracing each call", func(t *testing.T) {
		const chain = `local function deep() return 1 + deep() end
local function g(n) if n == 0 then return END end return g(n - 1) end
`
		L := newState(t, Options{})
		base := allocated(func() {
			if err := callErr(t, L, context.Background(), strings.Replace(chain, "END", "0", 1)+`g(1e5) g(1e5) g(1e5)`); err != nil {
				t.Fatal(err)
			}
		})
		var err error
		n := allocated(func() {
			err = callErr(t, L, context.Background(), strings.Replace(chain, "END", "deep()", 1)+`pcall(g, 1e5) pcall(g, 1e5) g(1e5)`)
		})
		if ae, ok := err.(*lua.ApiError); !ok || ae.Object.String() != "lua callstack overflow" || ae.Type != lua.ApiErrorPanic || len(ae.StackTrace) > 1000 {
			t.Fatalf("Call = %#v", err)
		}
		if n > base+8<<20 {
			t.Fatalf("allocated %d MiB, %d MiB without the errors", n>>20, base>>20)
		}
	})
	t.Run("the traceback shows the innermost frames with their files and lines", func(t *testing.T) {
		L := newState(t, Options{})
		fn, err := Load(L, "local function inner()\n  error('x')\nend\nlocal function outer() inner() end\nouter()", "plugin.lua", 0)
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		err = Call(L, 0, 0)
		want := "stack traceback:\n\t[G]: in ?\n\tplugin.lua:2: in function <plugin.lua:1>\n\tplugin.lua:4: in function <plugin.lua:4>\n\tplugin.lua:5: in main chunk\n\t[G]: in ?"
		if ae, ok := err.(*lua.ApiError); !ok || ae.StackTrace != want {
			t.Fatalf("traceback =\n%s\nwant\n%s", err.(*lua.ApiError).StackTrace, want)
		}
	})
	t.Run("a traceback shows at most 10 frames", func(t *testing.T) {
		L := newState(t, Options{})
		err := callErr(t, L, context.Background(), `local function f(n) if n == 0 then error("x") end f(n - 1) end f(50)`)
		ae, ok := err.(*lua.ApiError)
		if !ok || strings.Count(ae.StackTrace, "\n\t") != 11 || !strings.HasSuffix(ae.StackTrace, "\n\t...") {
			t.Fatalf("Call = %#v", err)
		}
	})
}

// TestPcallAndXpcallBehaveAsGopherLuas compares the sandbox's pcall and
// xpcall, which run through protected, with gopher-lua's.
func TestPcallAndXpcallBehaveAsGopherLuas(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"pcall of a function that succeeds", `return pcall(function(...) return 1, nil, ... end, "a", "b")`},
		{"pcall of a function that fails", `return pcall(function() error("x") end)`},
		{"pcall of an error value that is not a string", `local ok, e = pcall(error, {code = 7}) return ok, e.code`},
		{"pcall of error without a level", `return pcall(error, "plain", 0)`},
		{"pcall of nil", `return pcall(nil)`},
		{"pcall without arguments", `return pcall()`},
		{"pcall of a callable table", `return pcall(setmetatable({}, {__call = function(self, x) return x * 2 end}), 21)`},
		{"nested pcalls", `return pcall(pcall, error, "x")`},
		{"a yield inside pcall inside a coroutine", `local co = coroutine.create(function() return pcall(function() local v = coroutine.yield(1) return v * 2 end) end)
local r1 = {coroutine.resume(co)} local r2 = {coroutine.resume(co, 21)}
return tostring(r1[1]) .. " " .. tostring(r1[2]) .. " " .. tostring(r1[3]), tostring(r2[1]) .. " " .. tostring(r2[2]) .. " " .. tostring(r2[3])`},
		{"pcall inside a coroutine", `return coroutine.wrap(function() return pcall(function() error("in co") end) end)()`},
		{"xpcall that succeeds", `return xpcall(function() return 1, 2, 3 end, function(m) return "h" end)`},
		{"xpcall that fails", `return xpcall(function() error("x") end, function(m) return "handled: " .. m, "dropped" end)`},
		{"xpcall whose handler fails", `return xpcall(function() error("x") end, function(m) error("again") end)`},
		{"xpcall of a table error", `local ok, e = xpcall(function() error({1}) end, function(m) return type(m) end) return ok, e`},
		{"xpcall without a handler", `return xpcall(function() end)`},
		{"xpcall of nil", `return xpcall(nil, function() end)`},
		{"a stack overflow caught by pcall", `local function f() return 1 + f() end local ok, e = pcall(f) return ok, e`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := lua.NewState(lua.Options{CallStackSize: DefaultCallStackSize, MinimizeStackMemory: true})
			defer plain.Close()
			want := outcome(t, plain, func(src string) (*lua.LFunction, error) { return plain.Load(strings.NewReader(src), "test") }, tc.src)
			L := newState(t, Options{})
			got := outcome(t, L, func(src string) (*lua.LFunction, error) { return Load(L, src, "test", 0) }, tc.src)
			if got != want {
				t.Fatalf("sandbox:\n%s\ngopher-lua:\n%s", got, want)
			}
		})
	}
}

// TestRunawayRecursionEndsInALuaError checks that the ways a script can
// recurse, in Lua or through metamethods, end in a clean Lua error: none may
// recurse in Go without bound (a Go stack overflow is fatal).
func TestRunawayRecursionEndsInALuaError(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"Lua recursion", `local function f() return f() + 1 end f()`, "lua callstack overflow"},
		{"an __index chain of 100,000 tables", `local t = {} for i = 1, 1e5 do t = setmetatable({}, {__index = t}) end return t.x`, "test:1: too many recursions in gettable"},
		{"a __newindex chain of 100,000 tables", `local t = {} for i = 1, 1e5 do t = setmetatable({}, {__newindex = t}) end t.x = 1`, "test:1: too many recursions in settable"},
		{"an __index function recursing", `local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x`, "lua callstack overflow"},
		{"a __newindex function recursing", `local t = setmetatable({}, {__newindex = function(t, k, v) t[k] = v end}) t.x = 1`, "lua callstack overflow"},
		{"__tostring recursing", `local t = setmetatable({}, {__tostring = function(x) return tostring(x) end}) return tostring(t)`, "lua callstack overflow"},
		{"__concat recursing", `local t = setmetatable({}, {__concat = function(a, b) return a .. b end}) return t .. "x"`, "lua callstack overflow"},
		{"__eq recursing", `local m = {__eq = function(a, b) return a == b end} return setmetatable({}, m) == setmetatable({}, m)`, "lua callstack overflow"},
		{"__lt recursing", `local m = {__lt = function(a, b) return a < b end} return setmetatable({}, m) < setmetatable({}, m)`, "lua callstack overflow"},
		{"__le recursing", `local m = {__le = function(a, b) return a <= b end} return setmetatable({}, m) <= setmetatable({}, m)`, "lua callstack overflow"},
		{"__call recursing", `local t = setmetatable({}, {__call = function(self) return (self()) end}) return t()`, "lua callstack overflow"},
		{"__add recursing", `local t = setmetatable({}, {__add = function(a, b) return a + b end}) return t + 1`, "lua callstack overflow"},
		{"__unm recursing", `local t = setmetatable({}, {__unm = function(a) return -a end}) return -t`, "lua callstack overflow"},
		{"__len recursing", `local t = setmetatable({}, {__len = function(a) return #a end}) return #t`, "lua callstack overflow"},
		{"a table sort comparator recursing", `local function cmp(a, b) table.sort({2, 1}, cmp) return a < b end table.sort({2, 1}, cmp)`, "lua callstack overflow"},
		{"gsub with a function recursing", `local function r(s) return (s:gsub(".", r)) end r("ab")`, "lua callstack overflow"},
		{"pcall recursing", `local function f() return pcall(f) end f()`, ""},
		{"coroutines resumed inside one another", `local function f() return coroutine.wrap(f)() end f()`, "test:1: too many nested coroutines (the limit is 200)"},
		{"unpack of a huge range", `return unpack({}, 1, 1e8)`, "test:1: registry overflow"},
		{"string.char of a huge range", `return string.char(unpack({}, 1, 1e7))`, "test:1: registry overflow"},
		{"string.byte of every byte of 16 MiB", `local s = string.rep("x", 16 * 2^20) return select("#", s:byte(1, -1))`, "test:1: registry overflow"},
	} {
		t.Run(tc.name+" ends cleanly", func(t *testing.T) {
			L := newState(t, Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			err := callErr(t, L, ctx, tc.src)
			got := ""
			if err != nil {
				got = err.Error()
				if ae, ok := err.(*lua.ApiError); ok {
					got = ae.Object.String()
				}
			}
			if got != tc.want {
				t.Fatalf("Call = %q, want %q", got, tc.want)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}
