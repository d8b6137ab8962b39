package sandbox

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// describeState lists what a program can reach in a fresh state, one line
// each, sorted: every global, every member of each library table, the
// string metatable and the registry's keys. A function is named by the Go
// function behind it (and its upvalues), so a member that is backed by
// another function, or has lost or gained an upvalue, shows.
func describeState(L *lua.LState) string {
	g := L.G.Global
	var lines []string
	seen := map[*lua.LFunction]string{}
	var describe func(path string, v lua.LValue) string
	describe = func(path string, v lua.LValue) string {
		switch v := v.(type) {
		case *lua.LFunction:
			if first, ok := seen[v]; ok {
				return "the same function as " + first
			}
			seen[v] = path
			if !v.IsG {
				return "a Lua function"
			}
			s := "function " + goFuncName(v.GFunction)
			if v.Env != g {
				s += " with another environment"
			}
			for i, uv := range v.Upvalues {
				s += fmt.Sprintf(" [upvalue %d: %s]", i+1, describe(path+".upvalue", uv.Value()))
			}
			return s
		case *lua.LTable:
			switch v {
			case g:
				return "the globals"
			case g.RawGetString("string"):
				return "the string library"
			}
			return "a table"
		case lua.LString:
			return fmt.Sprintf("string %q", string(v))
		}
		return v.Type().String() + " " + v.String()
	}
	table := func(prefix string, t *lua.LTable) {
		if t.Metatable != lua.LNil {
			lines = append(lines, prefix+" has a metatable")
		}
		for _, k := range sortedKeys(t) {
			lines = append(lines, prefix+k+": "+describe(prefix+k, t.RawGetString(k)))
		}
	}
	table("", g)
	for _, k := range sortedKeys(g) {
		if t, ok := g.RawGetString(k).(*lua.LTable); ok && t != g {
			table(k+".", t)
		}
	}
	for _, v := range []lua.LValue{lua.LString(""), lua.LNumber(0), lua.LTrue, lua.LNil, L.NewFunction(collectGarbage)} {
		typ := v.Type().String()
		lines = append(lines, "getmetatable of a "+typ+": "+describe(typ+" metatable", L.GetMetatable(v)))
		for _, event := range []string{"__index", "__newindex", "__call", "__tostring", "__len", "__eq", "__lt", "__le", "__concat", "__add", "__sub", "__mul", "__div", "__mod", "__pow", "__unm", "__metatable"} {
			if mv := L.GetMetaField(v, event); mv != lua.LNil {
				lines = append(lines, "the "+typ+" metatable's "+event+": "+describe(typ+" metatable."+event, mv))
			}
		}
	}
	L.G.Registry.ForEach(func(k, v lua.LValue) {
		lines = append(lines, "registry "+k.String()+": "+v.Type().String())
	})
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// sortedKeys returns the keys of t, which must all be strings, sorted.
func sortedKeys(t *lua.LTable) []string {
	var keys []string
	t.ForEach(func(k, _ lua.LValue) { keys = append(keys, k.String()) })
	slices.Sort(keys)
	return keys
}

// closureName matches the name of a Go closure and the function that made
// it, whatever the compiler inlined it into.
var closureName = regexp.MustCompile(`((?:\(\*box\)\.)?[A-Za-z]+)\.func\d+$`)

// goFuncName is the name of a Go function, such as
// "github.com/yuin/gopher-lua.baseAssert" or "sandbox.(*box).strRep-fm".
func goFuncName(fn lua.LGFunction) string {
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	if m := closureName.FindStringSubmatch(name); m != nil {
		return "sandbox." + m[1] + " closure"
	}
	return strings.TrimPrefix(name, "github.com/dsh-go/dsh/scripting/lua/internal/")
}

// wantState is describeState of a fresh state, captured from New as it was
// when it opened gopher-lua's libraries and trimmed them.
const wantState = `_G: the globals
_VERSION: string "Lua 5.1"
assert: function github.com/yuin/gopher-lua.baseAssert
collectgarbage: function sandbox.collectGarbage
coroutine.create: function sandbox.(*box).create closure
coroutine.resume: function sandbox.(*box).resume closure
coroutine.running: function github.com/yuin/gopher-lua.coRunning
coroutine.status: function github.com/yuin/gopher-lua.coStatus
coroutine.wrap: function sandbox.(*box).wrap closure
coroutine.yield: function github.com/yuin/gopher-lua.coYield
coroutine: a table
error: function github.com/yuin/gopher-lua.baseError
getmetatable of a boolean: nil nil
getmetatable of a function: nil nil
getmetatable of a nil: nil nil
getmetatable of a number: nil nil
getmetatable of a string: string "protected"
getmetatable: function github.com/yuin/gopher-lua.baseGetMetatable
ipairs: function github.com/yuin/gopher-lua.baseIpairs [upvalue 1: function github.com/yuin/gopher-lua.ipairsaux]
load: function sandbox.(*box).load-fm
loadstring: function sandbox.(*box).loadstring-fm
math.abs: function github.com/yuin/gopher-lua.mathAbs
math.acos: function github.com/yuin/gopher-lua.mathAcos
math.asin: function github.com/yuin/gopher-lua.mathAsin
math.atan2: function github.com/yuin/gopher-lua.mathAtan2
math.atan: function github.com/yuin/gopher-lua.mathAtan
math.ceil: function github.com/yuin/gopher-lua.mathCeil
math.cos: function github.com/yuin/gopher-lua.mathCos
math.cosh: function github.com/yuin/gopher-lua.mathCosh
math.deg: function github.com/yuin/gopher-lua.mathDeg
math.exp: function github.com/yuin/gopher-lua.mathExp
math.floor: function github.com/yuin/gopher-lua.mathFloor
math.fmod: function github.com/yuin/gopher-lua.mathFmod
math.frexp: function github.com/yuin/gopher-lua.mathFrexp
math.huge: number +Inf
math.ldexp: function github.com/yuin/gopher-lua.mathLdexp
math.log10: function github.com/yuin/gopher-lua.mathLog10
math.log: function github.com/yuin/gopher-lua.mathLog
math.max: function github.com/yuin/gopher-lua.mathMax
math.min: function github.com/yuin/gopher-lua.mathMin
math.mod: function github.com/yuin/gopher-lua.mathMod
math.modf: function github.com/yuin/gopher-lua.mathModf
math.pi: number 3.141592653589793
math.pow: function github.com/yuin/gopher-lua.mathPow
math.rad: function github.com/yuin/gopher-lua.mathRad
math.random: function sandbox.(*box).mathRandom-fm
math.randomseed: function sandbox.(*box).mathRandomseed-fm
math.sin: function github.com/yuin/gopher-lua.mathSin
math.sinh: function github.com/yuin/gopher-lua.mathSinh
math.sqrt: function github.com/yuin/gopher-lua.mathSqrt
math.tan: function github.com/yuin/gopher-lua.mathTan
math.tanh: function github.com/yuin/gopher-lua.mathTanh
math: a table
next: function github.com/yuin/gopher-lua.baseNext
os.clock: function github.com/yuin/gopher-lua.osClock
os.date: function sandbox.(*box).osDate closure
os.time: function github.com/yuin/gopher-lua.osTime
os: a table
pairs: function github.com/yuin/gopher-lua.basePairs [upvalue 1: function github.com/yuin/gopher-lua.pairsaux]
pcall: function sandbox.(*box).pcall-fm
rawequal: function github.com/yuin/gopher-lua.baseRawEqual
rawget: function github.com/yuin/gopher-lua.baseRawGet
rawset: function github.com/yuin/gopher-lua.baseRawSet
registry dsh.sandbox.box: userdata
require: function sandbox.(*box).require-fm
select: function github.com/yuin/gopher-lua.baseSelect
setmetatable: function sandbox.setMetatable
string.byte: function github.com/yuin/gopher-lua.strByte
string.char: function github.com/yuin/gopher-lua.strChar
string.find: function sandbox.(*box).strFind-fm
string.format: function sandbox.(*box).strFormat closure
string.gfind: function sandbox.(*box).strGmatch-fm
string.gmatch: the same function as string.gfind
string.gsub: function sandbox.(*box).strGsub-fm
string.len: function github.com/yuin/gopher-lua.strLen
string.lower: function github.com/yuin/gopher-lua.strLower
string.match: function sandbox.(*box).strMatch-fm
string.rep: function sandbox.(*box).strRep-fm
string.reverse: function github.com/yuin/gopher-lua.strReverse
string.sub: function github.com/yuin/gopher-lua.strSub
string.upper: function github.com/yuin/gopher-lua.strUpper
string: the string library
table.concat: function sandbox.(*box).tableConcat-fm
table.getn: function github.com/yuin/gopher-lua.tableGetN
table.insert: function sandbox.tableInsert closure
table.maxn: function github.com/yuin/gopher-lua.tableMaxN
table.remove: function github.com/yuin/gopher-lua.tableRemove
table.sort: function github.com/yuin/gopher-lua.tableSort
table: a table
the string metatable's __index: the string library
the string metatable's __metatable: string "protected"
tonumber: function github.com/yuin/gopher-lua.baseToNumber
tostring: function github.com/yuin/gopher-lua.baseToString
type: function github.com/yuin/gopher-lua.baseType
unpack: function github.com/yuin/gopher-lua.baseUnpack
xpcall: function sandbox.(*box).xpcall-fm`

func TestAFreshStateHoldsExactlyTheSandboxedLibraries(t *testing.T) {
	L := newState(t, Options{})
	if got := describeState(L); got != wantState {
		t.Fatalf("a fresh state differs:\n%s\n\nall of it:\n%s", lineDiff(got, wantState), got)
	}
}

// lineDiff lists the lines only in got (+) and only in want (-).
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	var out []string
	for _, l := range g {
		if !slices.Contains(w, l) {
			out = append(out, "+ "+l)
		}
	}
	for _, l := range w {
		if !slices.Contains(g, l) {
			out = append(out, "- "+l)
		}
	}
	return strings.Join(out, "\n")
}

// reachable returns every table, function and userdata a program of L can
// reach, or that holds what it can: the globals, the registry, the
// metatables of strings and other values, and all they hold.
func reachable(L *lua.LState) map[any]bool {
	seen := map[any]bool{}
	todo := []lua.LValue{L.G.Global, L.G.Registry}
	for _, v := range []lua.LValue{lua.LString(""), lua.LNumber(0), lua.LTrue, lua.LNil} {
		for _, event := range []string{"__index", "__newindex", "__call", "__metatable"} {
			todo = append(todo, L.GetMetaField(v, event))
		}
	}
	for len(todo) > 0 {
		v := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		switch v := v.(type) {
		case *lua.LTable:
			if seen[v] {
				continue
			}
			seen[v] = true
			todo = append(todo, v.Metatable)
			v.ForEach(func(k, val lua.LValue) { todo = append(todo, k, val) })
		case *lua.LFunction:
			if seen[v] {
				continue
			}
			seen[v] = true
			todo = append(todo, v.Env)
			for _, uv := range v.Upvalues {
				todo = append(todo, uv.Value())
			}
		case *lua.LUserData:
			if seen[v] {
				continue
			}
			seen[v] = true
			todo = append(todo, v.Env, v.Metatable)
		}
	}
	return seen
}

func TestTwoStatesShareNothingAProgramCouldChange(t *testing.T) {
	a := newState(t, Options{})
	b := newState(t, Options{})
	t.Run("no table, function or userdata is reachable from both", func(t *testing.T) {
		ra, rb := reachable(a), reachable(b)
		if len(ra) < 80 {
			t.Fatalf("only %d values reachable from a fresh state", len(ra))
		}
		for v := range ra {
			if rb[v] {
				t.Errorf("%T %p is reachable from both states", v, v)
			}
		}
	})
	t.Run("changing the libraries of one state leaves the other's as they were", func(t *testing.T) {
		before := describeState(b)
		mustRun(t, a, `
			local setmetatable, rawset, pairs = setmetatable, rawset, pairs
			local G, m = _G, math
			for _, lib in ipairs{_G, string, table, math, coroutine, os} do
				for k in pairs(lib) do
					if k ~= "_G" then rawset(lib, k, nil) end
				end
				rawset(lib, "planted", true)
			end
			setmetatable(m, {__index = function() return "hijacked" end})
			setmetatable(G, {__index = function() return "hijacked" end})
		`)
		if got := eval(t, a, "string"); got != "hijacked" {
			t.Fatalf("in the changed state, string = %s, want hijacked", got)
		}
		if got := describeState(b); got != before {
			t.Fatalf("the other state changed:\n%s", lineDiff(got, before))
		}
		for _, expr := range []string{`("x"):rep(3)`, `string.upper("a")`, `math.floor(2.5)`, `table.concat({1, 2}, ",")`, `type(os.time())`, `tostring(rawget(math, "planted"))`, `tostring(getmetatable(math))`} {
			want := map[string]string{`("x"):rep(3)`: "xxx", `string.upper("a")`: "A", `math.floor(2.5)`: "2", `table.concat({1, 2}, ",")`: "1,2", `type(os.time())`: "number", `tostring(rawget(math, "planted"))`: "nil", `tostring(getmetatable(math))`: "nil"}[expr]
			if got := eval(t, b, expr); got != want {
				t.Errorf("in the other state, %s = %s, want %s", expr, got, want)
			}
		}
	})
	t.Run("a state made after the change is as fresh as the first", func(t *testing.T) {
		if got := describeState(newState(t, Options{})); got != wantState {
			t.Fatalf("a later state differs:\n%s", lineDiff(got, wantState))
		}
	})
}
