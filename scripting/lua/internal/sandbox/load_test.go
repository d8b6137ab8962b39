package sandbox

import (
	"errors"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestLoadCompilesTextChunks(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, expr, want string }{
		{"load of a string", `load("return 1 + 1")()`, "2"},
		{"loadstring with arguments", `loadstring("return ...")(5)`, "5"},
		{"load of a reader function", `(function() local parts = {"return ", "'a'", " .. 'b'"} local i = 0 return load(function() i = i + 1 return parts[i] end)() end)()`, "ab"},
		{"a reader that ends with an empty string", `(function() local n = 0 return load(function() n = n + 1 if n == 1 then return "return 7" end return "" end)() end)()`, "7"},
		{"the chunk sees the globals", `(function() shared = 3 return load("return shared")() end)()`, "3"},
		{"a chunk name shows in errors", `select(2, pcall(load("error('x')", "mychunk")))`, "mychunk:1: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestLoadRefusesWhatCouldHurt(t *testing.T) {
	L := newState(t, Options{MaxChunkBytes: 1 << 16})
	for _, tc := range []struct{ name, expr, want string }{
		{"a binary chunk", `select(2, load("\27LuaQ\0\1\4"))`, "<string>: attempt to load a binary chunk (only text chunks can be loaded)"},
		{"a binary chunk from loadstring", `select(2, loadstring("\27Lua", "bin"))`, "bin: attempt to load a binary chunk (only text chunks can be loaded)"},
		{"a binary chunk from a reader", `select(2, load(coroutine.wrap(function() coroutine.yield("\27Lua") end)))`, "(load): attempt to load a binary chunk (only text chunks can be loaded)"},
		{"a chunk over the size limit", `select(2, load("return '" .. string.rep("x", 70000) .. "'"))`, "<string>: chunk of 70009 bytes is over the limit of 65536 bytes"},
		{"a reader over the size limit", `select(2, load(function() return string.rep("-", 1000) end))`, "(load): chunk of more than 65536 bytes is over the limit"},
		{"a reader returning a table", `select(2, load(function() return {} end))`, "reader function must return a string"},
		{"a syntax error", `select(2, load("return +"))`, "<string> line:1(column:8) near '+':   syntax error"},
		{"neither a string nor a function", `select(2, pcall(load, 42))`, "test:1: bad argument #1 to (anonymous) (string or function expected)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s =\n%q\nwant\n%q", tc.expr, got, tc.want)
			}
		})
	}
}

// deepShapes are chunks whose syntax tree nests n deep, which gopher-lua
// compiles in time quadratic in n.
var deepShapes = map[string]func(n int) string{
	"do blocks":        func(n int) string { return strings.Repeat("do ", n) + strings.Repeat("end ", n) },
	"functions":        func(n int) string { return strings.Repeat("local function f() ", n) + strings.Repeat("end ", n) },
	"if statements":    func(n int) string { return strings.Repeat("if x then ", n) + strings.Repeat("end ", n) },
	"elseif chains":    func(n int) string { return "if x then " + strings.Repeat("elseif x then ", n) + "end" },
	"table nesting":    func(n int) string { return "local t = " + strings.Repeat("{", n) + strings.Repeat("}", n) },
	"concat chains":    func(n int) string { return "local a = 'x' local b = a" + strings.Repeat("..a", n) },
	"index chains":     func(n int) string { return "local b = a" + strings.Repeat(".b", n) },
	"call chains":      func(n int) string { return "local b = f" + strings.Repeat("()", n) },
	"arithmetic":       func(n int) string { return "local b = a" + strings.Repeat("+a", n) },
	"unary operators":  func(n int) string { return "local b = " + strings.Repeat("not ", n) + "a" },
	"while loops":      func(n int) string { return strings.Repeat("while x do ", n) + strings.Repeat("end ", n) },
	"function in call": func(n int) string { return strings.Repeat("f(function() ", n) + strings.Repeat("end) ", n) },
}

func TestLoadRefusesDeeplyNestedChunks(t *testing.T) {
	L := newState(t, Options{})
	for name, shape := range deepShapes {
		t.Run(name+" 20000 deep are refused", func(t *testing.T) {
			_, err := Load(L, shape(20000), "deep.lua", 0)
			if err == nil || !strings.Contains(err.Error(), "chunk has too many syntax levels (the limit is 1000)") || !strings.HasPrefix(err.Error(), "deep.lua:") {
				t.Fatalf("Load = %v", err)
			}
		})
		t.Run(name+" 300 deep compile", func(t *testing.T) {
			if _, err := Load(L, shape(300), "ok.lua", 0); err != nil {
				var ae *lua.ApiError
				if errors.As(err, &ae) && strings.Contains(err.Error(), "register overflow") {
					return // gopher-lua's own limit on concatenations, quickly reached
				}
				t.Fatalf("Load = %v", err)
			}
		})
	}
	t.Run("load reports it as a message", func(t *testing.T) {
		got := eval(t, L, `select(2, load(string.rep("do ", 2000) .. string.rep("end ", 2000), "nest"))`)
		if got != "nest:1: chunk has too many syntax levels (the limit is 1000)" {
			t.Fatalf("load = %q", got)
		}
	})
}

func TestLoadFromGo(t *testing.T) {
	L := newState(t, Options{})
	t.Run("a syntax error is an ApiError", func(t *testing.T) {
		_, err := Load(L, "return (", "plugin.lua", 0)
		var ae *lua.ApiError
		if !errors.As(err, &ae) || ae.Type != lua.ApiErrorSyntax || !strings.HasPrefix(err.Error(), "plugin.lua at EOF:") {
			t.Fatalf("Load = %#v", err)
		}
	})
	t.Run("the function runs in the state", func(t *testing.T) {
		fn, err := Load(L, "return 6 * 7", "plugin.lua", 0)
		if err != nil {
			t.Fatal(err)
		}
		L.Push(fn)
		if err := L.PCall(0, 1, nil); err != nil {
			t.Fatal(err)
		}
		if got := L.Get(-1).String(); got != "42" {
			t.Fatalf("= %s", got)
		}
		L.Pop(1)
	})
	t.Run("the size limit applies", func(t *testing.T) {
		if _, err := Load(L, strings.Repeat(" ", 11), "x", 10); err == nil || err.Error() != "x: chunk of 11 bytes is over the limit of 10 bytes" {
			t.Fatalf("Load = %v", err)
		}
	})
}
