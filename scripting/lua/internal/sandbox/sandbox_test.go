package sandbox

import (
	"strings"
	"testing"
)

// keys lists a table's keys, sorted, space-separated.
const keys = `local function keys(t) local k = {} for n in pairs(t) do k[#k+1] = tostring(n) end table.sort(k) return table.concat(k, " ") end `

func TestNewOpensOnlyTheSandboxedLibraries(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, table, want string }{
		{"the globals", "_G", "_G _VERSION assert collectgarbage coroutine error getmetatable ipairs load loadstring math next os pairs pcall rawequal rawget rawset require select setmetatable string table tonumber tostring type unpack xpcall"},
		{"string", "string", "byte char find format gfind gmatch gsub len lower match rep reverse sub upper"},
		{"table", "table", "concat getn insert maxn remove sort"},
		{"math", "math", "abs acos asin atan atan2 ceil cos cosh deg exp floor fmod frexp huge ldexp log log10 max min mod modf pi pow rad random randomseed sin sinh sqrt tan tanh"},
		{"coroutine", "coroutine", "create resume running status wrap yield"},
		{"os", "os", "clock date time"},
	} {
		t.Run(tc.name+" are exactly the expected ones", func(t *testing.T) {
			if got := eval(t, L, "(function() "+keys+" return keys("+tc.table+") end)()"); got != tc.want {
				t.Fatalf("keys(%s) =\n%s\nwant\n%s", tc.table, got, tc.want)
			}
		})
	}
}

func TestRemovedFunctionsAreAbsent(t *testing.T) {
	L := newState(t, Options{})
	for _, name := range []string{
		"dofile", "loadfile", "getfenv", "setfenv", "module", "newproxy", "print", "_printregs", "_GOPHER_LUA_VERSION",
		"io", "debug", "package", "channel",
		"string.dump", "os.execute", "os.exit", "os.getenv", "os.remove", "os.rename", "os.tmpname", "os.setenv", "os.setlocale", "os.difftime",
	} {
		t.Run(name+" is nil", func(t *testing.T) {
			if got := eval(t, L, "type("+name+")"); got != "nil" {
				t.Fatalf("type(%s) = %s", name, got)
			}
		})
	}
}

func TestTheStringMetatableIsProtectedAndPerState(t *testing.T) {
	a := newState(t, Options{})
	b := newState(t, Options{})
	t.Run("getmetatable of a string is a protected value", func(t *testing.T) {
		if got := eval(t, a, `getmetatable("")`); got != "protected" {
			t.Fatalf(`getmetatable("") = %s`, got)
		}
	})
	t.Run("the protected value cannot be used to change string methods", func(t *testing.T) {
		msg := luaError(t, a, `getmetatable("").__index = {upper = function() return "hacked" end}`)
		if !strings.Contains(msg, "attempt to index") && !strings.Contains(msg, "non-table") {
			t.Fatalf("error = %q", msg)
		}
		if got := eval(t, a, `("x"):upper()`); got != "X" {
			t.Fatalf(`("x"):upper() = %s`, got)
		}
	})
	t.Run("setmetatable refuses strings", func(t *testing.T) {
		if msg := luaError(t, a, `setmetatable("", {__index = {}})`); msg != "test:1: bad argument #1 to setmetatable (table expected, got string)" {
			t.Fatalf("error = %q", msg)
		}
	})
	t.Run("setmetatable refuses numbers, booleans and functions", func(t *testing.T) {
		for _, v := range []string{"1", "true", "print or tostring"} {
			if msg := luaError(t, a, `setmetatable(`+v+`, {})`); !strings.Contains(msg, "table expected") {
				t.Fatalf("setmetatable(%s) error = %q", v, msg)
			}
		}
	})
	t.Run("changing the string library changes only this state", func(t *testing.T) {
		mustRun(t, a, `string.upper = function() return "hacked" end`)
		if got := eval(t, a, `("x"):upper()`); got != "hacked" {
			t.Fatalf(`in the changed state ("x"):upper() = %s`, got)
		}
		if got := eval(t, b, `("x"):upper()`); got != "X" {
			t.Fatalf(`in another state ("x"):upper() = %s`, got)
		}
	})
	t.Run("string methods work", func(t *testing.T) {
		if got := eval(t, b, `("a,b"):find(",") .. ("%d"):format(7) .. #("abc"):rep(2)`); got != "276" {
			t.Fatalf("= %s", got)
		}
	})
}

func TestSetmetatableWorksOnTables(t *testing.T) {
	L := newState(t, Options{})
	mustRun(t, L, `
		local t = setmetatable({}, {__index = function(_, k) return k .. "!" end})
		assert(t.x == "x!")
		local p = setmetatable({}, {__metatable = "mine"})
		assert(getmetatable(p) == "mine")
		local ok, err = pcall(setmetatable, p, {})
		assert(not ok and err:find("cannot change a protected metatable"), err)
		assert(setmetatable(t, nil) == t and getmetatable(t) == nil)
		-- the globals table may be changed: it is this state's own
		setmetatable(_G, {__index = function(_, k) return "global " .. k end})
		assert(undefined_name == "global undefined_name")
		setmetatable(_G, nil)
	`)
}

func TestHarmlessReplacements(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, expr, want string }{
		{"collectgarbage does nothing", `collectgarbage("collect") .. collectgarbage("count")`, "00"},
		{"math.huge is infinite", `tostring(math.huge == 1/0)`, "true"},
		{"math.random without arguments is in [0,1)", `tostring(math.random() < 1)`, "true"},
		{"math.random(m, n) includes n", `(function() math.randomseed(1) local seen = {} for i = 1, 200 do seen[math.random(1, 2)] = true end return tostring(seen[1] and seen[2]) end)()`, "true"},
		{"math.randomseed makes the sequence repeat", `(function() math.randomseed(42) local a = math.random(1000) math.randomseed(42) return tostring(a == math.random(1000)) end)()`, "true"},
		{"os.time is a number", `type(os.time())`, "number"},
		{"os.clock is a number", `type(os.clock())`, "number"},
		{"os.date formats", `os.date("!%Y", 0)`, "1970"},
		{"table.insert appends", `(function() local t = {1} table.insert(t, 2) table.insert(t, 1, 0) return table.concat(t, ",") end)()`, "0,1,2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, src, want string }{
		{"math.random with an empty interval", `math.random(0)`, "test:1: bad argument #1 to random (interval is empty)"},
		{"math.random with m > n", `math.random(5, 1)`, "test:1: bad argument #2 to random (interval is empty)"},
		{"table.insert beyond #t+1", `table.insert({}, 6e7, 1)`, "test:1: bad argument #2 to insert (position out of bounds)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := luaError(t, L, tc.src); got != tc.want {
				t.Fatalf("error = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNewRefusesABadScriptsDirectory(t *testing.T) {
	if _, err := New(Options{Root: t.TempDir() + "/missing"}); err == nil || !strings.Contains(err.Error(), "scripts directory") {
		t.Fatalf("New with a missing root: %v", err)
	}
	f := writeFile(t, t.TempDir(), "file.lua", "")
	if _, err := New(Options{Root: f}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Fatalf("New with a file as root: %v", err)
	}
}

func TestRecursionIsBounded(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, src, want string }{
		{"Lua recursion", `local function f() return 1 + f() end f()`, "stack overflow"},
		{"recursion through pcall", `local function f() pcall(f) error("deepest") end f()`, "test:1: deepest"},
		{"recursion through a Go callback", `local function f(s) return (s:gsub(".", f)) end f("abc")`, "stack overflow"},
		{"recursion through __index", `local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end local _ = t.x`, "stack overflow"},
		{"recursion through __tostring", `local t = setmetatable({}, {__tostring = function(x) return tostring(x) end}) tostring(t)`, "stack overflow"},
		{"an __index chain that loops", `local t = {} setmetatable(t, {__index = t}) local _ = t.x`, "too many recursions in gettable"},
		{"coroutines nested in coroutines", `local function f() coroutine.wrap(f)() end f()`, "too many nested coroutines (the limit is 200)"},
		{"unpack of a huge range", `unpack({}, 1, 1e8)`, "registry overflow"},
	} {
		t.Run(tc.name+" is a Lua error", func(t *testing.T) {
			msg := luaError(t, L, tc.src)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("error = %q, want it to contain %q", msg, tc.want)
			}
			// The state still works.
			if got := eval(t, L, "1 + 1"); got != "2" {
				t.Fatalf("after the error, 1 + 1 = %s", got)
			}
		})
	}
}
