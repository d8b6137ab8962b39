package sandbox

import (
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// outcome runs src as chunk "test" in L and describes what it returned
// (each result as type:value) or the error it raised.
func outcome(t *testing.T, L *lua.LState, load func(src string) (*lua.LFunction, error), src string) string {
	t.Helper()
	fn, err := load(src)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	top := L.GetTop()
	L.Push(fn)
	if err := L.PCall(0, lua.MultRet, nil); err != nil {
		if ae, ok := err.(*lua.ApiError); ok {
			return "error: " + ae.Object.String()
		}
		return "error: " + err.Error()
	}
	var out []string
	for i := top + 1; i <= L.GetTop(); i++ {
		out = append(out, L.Get(i).Type().String()+":"+L.Get(i).String())
	}
	L.SetTop(top)
	return strings.Join(out, " ")
}

// TestConcatBehavesAsGopherLuas runs the same chunks in a plain gopher-lua
// state, where .. is the OP_CONCAT instruction, and in a sandboxed one, where
// it is a call of the capped concat function: results, errors (message and
// position) and the order of side effects must be the same.
func TestConcatBehavesAsGopherLuas(t *testing.T) {
	const mt = `local log = {}
local function note(s) log[#log+1] = s end
local mt = {__concat = function(a, b)
  note("cat(" .. (type(a) == "table" and a.n or tostring(a)) .. "," .. (type(b) == "table" and b.n or tostring(b)) .. ")")
  if type(a) == "table" then a = "<" .. a.n .. ">" end
  if type(b) == "table" then b = "<" .. b.n .. ">" end
  return a .. b
end}
local function obj(n) return setmetatable({n = n}, mt) end
local function v(x) note(type(x) == "table" and x.n or tostring(x)) return x end
`
	for _, tc := range []struct{ name, src string }{
		{"strings", `return "a" .. "b", "" .. "", "x" .. "y" .. "z"`},
		{"numbers as gopher-lua formats them", `return 1 .. 2, 1.5 .. "", -0 .. "", 1e100 .. "", 2^53 .. "", 2^63 .. "", 1/3 .. "", 0.1 .. "", 100 .. ""`},
		{"infinities and nan", `return (1/0) .. "", (-1/0) .. "", (0/0) .. ""`},
		{"a number and a string", `return 10 .. "px", "v" .. 1.25`},
		{"right associative chains", `local a, b, c = "a", "b", "c" return a .. b .. c, (a .. b) .. c, a .. (b .. c)`},
		{"a long chain", `local x = "x" return x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. 1 .. 2 .. 3`},
		{"nil on the left", `local x return x .. "a"`},
		{"nil on the right", `local x return "a" .. x`},
		{"a boolean", `return true .. "a"`},
		{"a table without __concat", `return "a" .. {}`},
		{"a function", `return tostring .. "a"`},
		{"two nils", `local x return x .. x`},
		{"an error in the middle of a chain", `local x return "a" .. "b" .. x .. "c" .. "d"`},
		{"an error on a later line", "local x = 1\nlocal y = \"a\" ..\n  nil\nreturn y"},
		{"the position is the expression's first line", "local t = {}\nlocal s = \"a\"\n  .. \"b\"\n  .. t"},
		{"a call as the last operand gives one value", `local function f() return "1", "2" end return "a" .. f()`},
		{"a call as the first operand gives one value", `local function f() return "1", "2" end return f() .. "a"`},
		{"varargs give one value", `return (function(...) return "a" .. ..., ... .. "b" end)("x", "y")`},
		{"a call returning nothing", `local function f() end return "a" .. f()`},
		{"__concat on the left", mt + `return obj("L") .. "r", table.concat(log, " ")`},
		{"__concat on the right", mt + `return "l" .. obj("R"), table.concat(log, " ")`},
		{"__concat inside a chain", mt + `local r = v("a") .. v("b") .. v(obj("T")) .. v("c") .. v("d") return r, table.concat(log, " ")`},
		{"two objects", mt + `local r = v(obj("A")) .. v(obj("B")) return r, table.concat(log, " ")`},
		{"__concat returning a table", `local m = {} m.__concat = function(a, b) return setmetatable({}, m) end local r = "x" .. setmetatable({}, m) .. "y" return type(r)`},
		{"__concat returning a table ends in an error", `local m = {__concat = function() return {} end} return "x" .. "y" .. setmetatable({}, m) .. "z"`},
		{"an error inside __concat", `local m = {__concat = function() error("boom") end} return "x" .. setmetatable({}, m)`},
		{"__concat that is not a function", `local m = {__concat = "nope"} return "x" .. setmetatable({}, m)`},
		{"operands are evaluated before concatenating", `local log = {} local function v(x) log[#log+1] = x return x end local ok, err = pcall(function() return v("a") .. v(nil) .. v("c") end) return ok, err, table.concat(log, ",")`},
		{"in every position", `
local t = {["k" .. 1] = "v" .. 1, "a" .. "b"}
local s = ""
for i = 1, ("1" .. "0") + 0 do s = s .. i end
for k, v in pairs({x = "y"}) do s = s .. k .. v end
while #s < 20 .. "" + 0 do s = s .. "w" end
repeat s = s .. "r" until #s > ("2" .. "5") + 0
if s .. "" == s then s = s .. "!" elseif s .. "?" then s = "" else s = "" end
local obj = {m = function(self, x) return self.p .. x end, p = "p"}
s = s .. obj:m("q" .. "r") .. t.k1 .. t[1] .. t["k" .. 1]
local function f(...) return ... .. "" end
function obj.g(x) return x .. "g" end
return s .. f("v") .. obj.g("z"), (function() return s .. "u" end)()`},
		{"inside nested functions", `local a = "a" local function f() local function g() return a .. "g" end return g() .. "f" end return f()`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plain := lua.NewState()
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

func TestConcatIsCapped(t *testing.T) {
	t.Run("a result over the limit is an error naming both sizes", func(t *testing.T) {
		L := newState(t, Options{MaxStringBytes: 1000})
		msg := luaError(t, L, `local s = string.rep("x", 600) return s .. s`)
		if want := "test:1: string concatenation: the result would be 1200 bytes, over the limit of 1000 bytes"; msg != want {
			t.Fatalf("error =\n%q\nwant\n%q", msg, want)
		}
	})
	t.Run("a chain counts all its operands", func(t *testing.T) {
		L := newState(t, Options{MaxStringBytes: 1000})
		msg := luaError(t, L, "local s = string.rep('x', 400)\nreturn s .. s .. 12 .. s")
		if want := "test:2: string concatenation: the result would be 1202 bytes, over the limit of 1000 bytes"; msg != want {
			t.Fatalf("error =\n%q\nwant\n%q", msg, want)
		}
	})
	t.Run("a result at the limit is made", func(t *testing.T) {
		L := newState(t, Options{MaxStringBytes: 1000})
		if got := eval(t, L, `#(string.rep("x", 500) .. string.rep("y", 500))`); got != "1000" {
			t.Fatalf("# = %s", got)
		}
	})
	t.Run("the result of __concat is not capped by the operands", func(t *testing.T) {
		L := newState(t, Options{MaxStringBytes: 1000})
		if got := eval(t, L, `#("x" .. setmetatable({}, {__concat = function() return "ok" end}))`); got != "2" {
			t.Fatalf("# = %s", got)
		}
	})
	t.Run("doubling a string stops at the default limit of 16 MiB", func(t *testing.T) {
		L := newState(t, Options{})
		start := time.Now()
		msg := luaError(t, L, `local s = "x" for i = 1, 40 do s = s .. s end`)
		if want := "test:1: string concatenation: the result would be 33554432 bytes, over the limit of 16777216 bytes"; msg != want {
			t.Fatalf("error =\n%q\nwant\n%q", msg, want)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("took %v", d)
		}
	})
	t.Run("chunks from load and loadstring are capped too", func(t *testing.T) {
		L := newState(t, Options{MaxStringBytes: 1000})
		got := eval(t, L, `select(2, pcall(loadstring("local s = string.rep('x', 999) return s .. 'yy'", "inner")))`)
		if want := "inner:1: string concatenation: the result would be 1001 bytes, over the limit of 1000 bytes"; got != want {
			t.Fatalf("error =\n%q\nwant\n%q", got, want)
		}
	})
	t.Run("a state New did not make gets the default limit", func(t *testing.T) {
		L := lua.NewState()
		defer L.Close()
		fn, err := Load(L, `local s = "x" for i = 1, 40 do s = s .. s end`, "plain", 0)
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		err = L.PCall(0, 0, nil)
		ae, ok := err.(*lua.ApiError)
		if !ok || ae.Object.String() != "plain:1: string concatenation: the result would be 33554432 bytes, over the limit of 16777216 bytes" {
			t.Fatalf("PCall = %v", err)
		}
	})
}

func TestConcatFunctionIsOutOfReach(t *testing.T) {
	t.Run("replacing every global does not change ..", func(t *testing.T) {
		L := newState(t, Options{})
		got := eval(t, L, `(function() local rawset = rawset local keep = {} for k in pairs(_G) do keep[#keep+1] = k end for _, k in ipairs(keep) do if k ~= "_G" then rawset(_G, k, nil) end end return "a" .. 1 end)()`)
		if got != "a1" {
			t.Fatalf("= %q", got)
		}
	})
	t.Run("no value of the script is a function where a concatenation was", func(t *testing.T) {
		// The nonce strings of two loads differ, and a string that looks
		// like one stays a string.
		L := newState(t, Options{})
		got := eval(t, L, `type(loadstring("return '\0dsh.sandbox.concat.AAAA', 'a' .. 'b'")())`)
		if got != "string" {
			t.Fatalf("type = %q", got)
		}
	})
}

func TestLoadLeavesNoUncappedConcatenation(t *testing.T) {
	proto := &lua.FunctionProto{SourceName: "x.lua", Code: []uint32{uint32(lua.OP_CONCAT) << 26}}
	err := bindConcat(&lua.FunctionProto{FunctionPrototypes: []*lua.FunctionProto{proto}}, "n", nil)
	if err == nil || err.Error() != "sandbox: a concatenation of x.lua was left uncapped" {
		t.Fatalf("bindConcat = %v", err)
	}
}

// BenchmarkConcat measures .. on short strings, as the sandbox compiles it
// (a call of the capped concat function) and as gopher-lua does (the
// OP_CONCAT instruction); ns/concat is the figure to compare.
func BenchmarkConcat(b *testing.B) {
	const src = `local parts = {"alpha", "beta", "gamma", 42}
local n = 0
for i = 1, 10000 do
  local s = parts[1] .. "/" .. parts[2]
  local t = s .. parts[4]
  n = n + #t
end
return n`
	for _, bc := range []struct {
		name string
		load func(L *lua.LState) (*lua.LFunction, error)
	}{
		{"sandbox", func(L *lua.LState) (*lua.LFunction, error) { return Load(L, src, "bench", 0) }},
		{"gopher-lua", func(L *lua.LState) (*lua.LFunction, error) { return L.Load(strings.NewReader(src), "bench") }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			L, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer L.Close()
			fn, err := bc.load(L)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				L.Push(fn)
				if err := L.PCall(0, 1, nil); err != nil {
					b.Fatal(err)
				}
				L.Pop(1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20000, "ns/concat")
		})
	}
}
