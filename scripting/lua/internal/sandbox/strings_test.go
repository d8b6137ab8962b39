package sandbox

import (
	"os"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestLua51Suite runs the pattern-matching and string-library scripts of the
// Lua 5.1 test suite (see testdata/README.md) in a sandboxed state.
func TestLua51Suite(t *testing.T) {
	for _, file := range []string{"lua51-pm.lua", "lua51-strings.lua"} {
		t.Run(file+" passes", func(t *testing.T) {
			src, err := os.ReadFile("testdata/" + file)
			if err != nil {
				t.Fatal(err)
			}
			L := newState(t, Options{})
			printed := []string{}
			L.G.Global.RawSetString("print", L.NewFunction(func(L *lua.LState) int {
				printed = append(printed, L.ToString(1))
				return 0
			}))
			fn, err := Load(L, string(src), file, 0)
			if err != nil {
				t.Fatal(err)
			}
			L.Push(fn)
			if err := L.PCall(0, 0, nil); err != nil {
				t.Fatal(err)
			}
			if file == "lua51-pm.lua" && printed[len(printed)-1] != "OK" {
				t.Fatalf("the script did not reach its end: printed %q", printed)
			}
		})
	}
}

func TestPatternFunctions(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ expr, want string }{
		// find
		{`table.concat({("hello world"):find("o w")}, ",")`, "5,7"},
		{`table.concat({("hello"):find("l+")}, ",")`, "3,4"},
		{`table.concat({("key = value"):find("(%w+)%s*=%s*(%w+)")}, ",")`, "1,11,key,value"},
		{`table.concat({("a.b"):find(".", 1, true)}, ",")`, "2,2"},
		{`table.concat({("a+b"):find("+", 1, true)}, ",")`, "2,2"},
		{`tostring(("abc"):find("b", -1))`, "nil"},
		{`table.concat({("abc"):find("c", -1)}, ",")`, "3,3"},
		{`table.concat({("abc"):find("", 10)}, ",")`, "4,3"},
		{`tostring(("abc"):find("^b"))`, "nil"},
		{`table.concat({("abc"):find("()b()")}, ",")`, "2,2,2,3"},
		// match
		{`("  trim me  "):match("^%s*(.-)%s*$")`, "trim me"},
		{`tostring(("abc"):match("x"))`, "nil"},
		{`select("#", ("abc"):match("x"))`, "1"},
		{`("2024-01-31"):match("(%d+)-(%d+)-(%d+)")`, "2024"},
		{`select(3, ("2024-01-31"):match("(%d+)-(%d+)-(%d+)"))`, "31"},
		{`("THE (quick) fox"):match("%((%a+)%)")`, "quick"},
		{`("f(a(b)c)d"):match("%b()")`, "(a(b)c)"},
		{`("THE (quick) fox"):match("%f[%a]%a+", 5)`, "quick"},
		{`("hello hello"):match("(h%a+) %1")`, "hello"},
		{`("abc"):match(".-b")`, "ab"},
		{`("aaa"):match("a-$")`, "aaa"},
		{`("x=1"):match("^(%w+)=(%w+)$")`, "x"},
		{`("[]"):match("[]]")`, "]"},
		{`("a-b"):match("[a%-]+")`, "a-"},
		{`("é"):match("[\128-\255]+")`, "é"},
		{`("tab\there"):match("%c")`, "\t"},
		{`("x.y!"):match("%p+")`, "."},
		// gmatch
		{`(function() local w = {} for x in ("one two  three"):gmatch("%a+") do w[#w+1] = x end return table.concat(w, "|") end)()`, "one|two|three"},
		{`(function() local w = {} for k, v in ("a=1, b=2"):gmatch("(%w+)=(%w+)") do w[#w+1] = k .. v end return table.concat(w, "|") end)()`, "a1|b2"},
		{`(function() local n = 0 for _ in ("abc"):gmatch("") do n = n + 1 end return n end)()`, "4"},
		{`(function() local w = {} for p in ("abc"):gmatch("()") do w[#w+1] = p end return table.concat(w, ",") end)()`, "1,2,3,4"},
		// gsub
		{`table.concat({("hello world"):gsub("o", "0")}, ",")`, "hell0 w0rld,2"},
		{`table.concat({("abc"):gsub("", "-")}, ",")`, "-a-b-c-,4"},
		{`table.concat({("hello world"):gsub("(%w+)", "<%1>")}, ",")`, "<hello> <world>,2"},
		{`(("hello world"):gsub("%w+", "%0 %0", 1))`, "hello hello world"},
		{`(("abc"):gsub("%w", "%%"))`, "%%%"},
		{`(("$name is $age"):gsub("%$(%w+)", {name = "Ann", age = 7}))`, "Ann is 7"},
		{`(("$name $unknown"):gsub("%$(%w+)", {name = "Ann"}))`, "Ann $unknown"},
		{`(("abc"):gsub(".", function(c) return c:upper() .. "." end))`, "A.B.C."},
		{`(("abc"):gsub(".", function(c) if c == "b" then return false end return "x" end))`, "xbx"},
		{`(("abc"):gsub("^.", "X"))`, "Xbc"},
		{`(("abc"):gsub("()", "%1"))`, "1a2b3c4"},
		{`(("hello"):gsub("l", 1))`, "he11o"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestPatternErrors(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ src, want string }{
		{`("a"):find("%")`, "malformed pattern (ends with '%')"},
		{`("a"):find("[a")`, "malformed pattern (missing ']')"},
		{`("a"):find("[a%")`, "malformed pattern (missing ']')"},
		{`("a"):find("%b")`, "unbalanced pattern"},
		{`("a"):find("%f")`, "missing '[' after '%f' in pattern"},
		{`("a"):find("(a")`, "unfinished capture"},
		{`("a"):match("a)")`, "invalid pattern capture"},
		{`("aa"):find("(a)%2")`, "invalid capture index"},
		{`("a"):gsub("(a)", "%2")`, "invalid capture index"},
		{`("a"):gsub("a", "%")`, "invalid use of '%' in replacement string"},
		{`("a"):gsub("a", {a = {}})`, "invalid replacement value (a table)"},
		{`("a"):gsub("a", true)`, "bad argument #3 to gsub (string/function/table expected)"},
		{`("a"):find(string.rep("()", 33))`, "too many captures"},
		{`("a"):rep(300):find(string.rep("a?", 300))`, "pattern too complex"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			if got := luaError(t, L, tc.src); got != "test:1: "+tc.want {
				t.Fatalf("error = %q, want %q", got, "test:1: "+tc.want)
			}
		})
	}
}

func TestPatternsOnLargeSubjects(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, expr, want string }{
		// gopher-lua's matcher recurses once per repetition and fails these.
		{"a greedy repetition over a million characters", `#(string.rep("a", 1e6) .. "b"):match("a*b")`, "1000001"},
		{"a lazy repetition over a million characters", `#(string.rep("a", 1e6) .. "b"):match(".-b")`, "1000001"},
		{"gsub with a million replacements", `select(2, string.rep("ab", 5e5):gsub("a", "x"))`, "500000"},
		{"gmatch over a million matches", `(function() local n = 0 for _ in string.rep("x ", 1e6):gmatch("%S+") do n = n + 1 end return n end)()`, "1000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
}

func TestPatternWorkIsCapped(t *testing.T) {
	L := newState(t, Options{MaxPatternSteps: 1_000_000})
	for _, src := range []string{
		// exponential backtracking: 30 a* before a b that is not there
		`string.rep("a", 30):find(string.rep("a*", 30) .. "b")`,
		`string.rep("a", 5000):match(".-.-.-x")`,
		`string.rep("a", 3000):gsub(".-x", "")`,
		`for _ in string.rep("a", 3000):gmatch(".-x") do end`,
	} {
		t.Run(src, func(t *testing.T) {
			if got := luaError(t, L, src); got != "test:1: pattern too complex (more than 1000000 steps)" {
				t.Fatalf("error = %q", got)
			}
		})
	}
}

func TestStringResultsAreCapped(t *testing.T) {
	L := newState(t, Options{MaxStringBytes: 1024})
	for _, tc := range []struct{ src, want string }{
		{`string.rep("ab", 513)`, "string.rep: the result would be 1026 bytes, over the limit of 1024 bytes"},
		{`string.rep("x", 1e300)`, "string.rep: the result would be 1e+300 bytes, over the limit of 1024 bytes"},
		{`string.rep("x", 600):gsub("x", "yy")`, "string.gsub: the result would be over the limit of 1024 bytes"},
		{`string.rep("x", 10):gsub("", string.rep("y", 200))`, "string.gsub: the result would be over the limit of 1024 bytes"},
		{`table.concat({string.rep("x", 600), string.rep("y", 600)})`, "table.concat: the result would be 1200 bytes, over the limit of 1024 bytes"},
		{`table.concat({"a", "b", "c"}, string.rep("-", 600))`, "table.concat: the result would be 1203 bytes, over the limit of 1024 bytes"},
		{`string.format("%s%s", string.rep("x", 600), string.rep("y", 600))`, "string.format: the result would be over the limit of 1024 bytes"},
		{`string.format("%100d", 1)`, "invalid format (width or precision too long)"},
		{`string.format("%.100f", 1)`, "invalid format (width or precision too long)"},
		{`string.format("%*d", 5, 1)`, "invalid option '%*' to 'format'"},
		{`string.format("%", 1)`, "invalid option '%%' to 'format'"},
		{`string.format("%------d", 1)`, "invalid format (repeated flags)"},
		{`os.date(string.rep("%c", 20))`, "bad argument #1 to date (format longer than 32 bytes)"},
	} {
		t.Run(tc.src, func(t *testing.T) {
			if got := luaError(t, L, tc.src); got != "test:1: "+tc.want {
				t.Fatalf("error =\n%q\nwant\n%q", got, "test:1: "+tc.want)
			}
		})
	}
	t.Run("results at the limit are fine", func(t *testing.T) {
		for _, expr := range []string{
			`#string.rep("ab", 512)`, `#table.concat({string.rep("x", 512), string.rep("y", 512)})`,
			`#(string.rep("x", 512):gsub("x", "yy"))`,
		} {
			if got := eval(t, L, expr); got != "1024" {
				t.Fatalf("%s = %s", expr, got)
			}
		}
	})
	t.Run("the default limit is 16 MiB", func(t *testing.T) {
		L := newState(t, Options{})
		if got := luaError(t, L, `string.rep("x", 16 * 2^20 + 1)`); got != "test:1: string.rep: the result would be 16777217 bytes, over the limit of 16777216 bytes" {
			t.Fatalf("error = %q", got)
		}
		if got := eval(t, L, `#string.rep("x", 16 * 2^20)`); got != "16777216" {
			t.Fatalf("= %s", got)
		}
	})
	t.Run("format still formats", func(t *testing.T) {
		if got := eval(t, L, `string.format("%5.2f|%-3s|%x|%q|%%", 3.14159, "a", 255, "q")`); got != ` 3.14|a  |ff|"q"|%` {
			t.Fatalf("= %q", got)
		}
		if got := eval(t, L, `#string.format("%99.99f", -1e308)`); !strings.HasPrefix(got, "4") {
			t.Fatalf("%%99.99f of -1e308 has %s characters", got)
		}
	})
}
