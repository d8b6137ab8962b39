package sandbox

import (
	"strings"
	"testing"
)

// hugeShapes are chunks of about 1 MiB nesting as deep as their size
// allows, which gopher-lua's parser alone would take hundreds of megabytes
// to read.
var hugeShapes = map[string]string{
	"parentheses":          "return " + strings.Repeat("(", 500_000) + "1" + strings.Repeat(")", 500_000),
	"table constructors":   "return " + strings.Repeat("{", 500_000) + strings.Repeat("}", 500_000),
	"index brackets":       "return " + strings.Repeat("a[", 300_000) + "1" + strings.Repeat("]", 300_000),
	"call arguments":       "return " + strings.Repeat("f(", 300_000) + strings.Repeat(")", 300_000),
	"a concatenation":      "return " + strings.Repeat("a..", 330_000) + "a",
	"a power tower":        "return " + strings.Repeat("a^", 500_000) + "a",
	"not operators":        "return " + strings.Repeat("not ", 250_000) + "a",
	"unary minuses":        "return " + strings.Repeat("- ", 500_000) + "a",
	"length operators":     "return " + strings.Repeat("#", 1_000_000) + "a",
	"do blocks":            strings.Repeat("do ", 140_000) + strings.Repeat("end ", 140_000),
	"functions":            strings.Repeat("function f() ", 60_000) + strings.Repeat("end ", 60_000),
	"if statements":        strings.Repeat("if x then ", 70_000) + strings.Repeat("end ", 70_000),
	"repeat loops":         strings.Repeat("repeat ", 65_000) + strings.Repeat("until x ", 65_000),
	"while loops":          strings.Repeat("while x do ", 65_000) + strings.Repeat("end ", 65_000),
	"unclosed parentheses": "return " + strings.Repeat("(", 1_000_000),
}

func TestLoadRefusesHugeNestingBeforeParsing(t *testing.T) {
	L := newState(t, Options{})
	for name, src := range hugeShapes {
		t.Run(name+" are refused without parsing", func(t *testing.T) {
			if len(src) > DefaultMaxChunkBytes {
				t.Fatalf("the chunk is %d bytes, over the default limit", len(src))
			}
			var err error
			n := allocated(func() { _, err = Load(L, src, "deep.lua", 0) })
			if err == nil || err.Error() != "deep.lua:1: chunk has too many syntax levels (the limit is 1000)" {
				t.Fatalf("Load = %v", err)
			}
			if n > 8<<20 {
				t.Fatalf("allocated %d MiB", n>>20)
			}
		})
	}
	t.Run("the line is where the nesting goes too deep", func(t *testing.T) {
		src := "local x = 1\n--[[ a comment\nover lines ]]\nlocal s = [==[\n]]\n]==]\nreturn " + strings.Repeat("(\n", 1000) + "1" + strings.Repeat(")", 1000)
		if _, err := Load(L, src, "deep.lua", 0); err == nil || err.Error() != "deep.lua:1006: chunk has too many syntax levels (the limit is 1000)" {
			t.Fatalf("Load = %v", err)
		}
	})
}

func TestNestingScanCountsOnlyWhatNests(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"brackets inside strings", `local s = "` + strings.Repeat("((", 5000) + `" .. '` + strings.Repeat("{", 5000) + `\'' return s`},
		{"brackets inside long strings", "local s = [==[" + strings.Repeat("(", 5000) + "]]" + "]==] return s"},
		{"brackets inside comments", "-- " + strings.Repeat("(", 5000) + "\n--[[" + strings.Repeat("do ", 5000) + "]] return 1"},
		{"many statements with concatenations", strings.Repeat("x = 'a' .. 'b' .. 1 .. 'c'\n", 5000)},
		{"many calls with concatenations", strings.Repeat("f('a' .. 'b', 1 .. 2)\n", 5000)},
		{"many blocks one after another", strings.Repeat("do local x = -1 end if x then x = not x elseif y then y = #y else end\n", 3000)},
		{"long flat expressions", "return " + strings.Repeat("a + ", 500) + "a, " + strings.Repeat("a - -", 400) + "a"},
		{"long argument lists and tables", "return f(" + strings.Repeat("1, ", 150) + "1), {" + strings.Repeat("'x' .. 1, ", 3000) + "}"},
		{"numbers with exponents", "return " + strings.Repeat("1e-5 - ", 900) + "0x1F"},
		{"nesting at the limit", "return " + strings.Repeat("(", 999) + "1" + strings.Repeat(")", 999)},
	} {
		t.Run(tc.name+" are not counted", func(t *testing.T) {
			if line := nestingLine(tc.src, MaxSyntaxDepth); line != 0 {
				t.Fatalf("nestingLine = %d", line)
			}
		})
	}
	t.Run("nesting one over the limit is refused", func(t *testing.T) {
		if line := nestingLine("return "+strings.Repeat("(", 1000)+"1"+strings.Repeat(")", 1000), MaxSyntaxDepth); line != 1 {
			t.Fatalf("nestingLine = %d", line)
		}
	})
	t.Run("chunks that compile in the Lua 5.1 suites are not refused", func(t *testing.T) {
		// TestLua51Suite loads them through Load; this names the reason
		// should they stop loading.
		for _, src := range []string{
			"local a = {[1] = {x = (1 + 2) * 3}, f = function(...) return select('#', ...) end}\nreturn a[1].x .. a.f(1, 2, 3)",
			"for i = 1, 10 do repeat local x = i until x > 0 end while false do end end",
		} {
			if line := nestingLine(src, 10); line != 0 {
				t.Fatalf("nestingLine(%q) = %d", src, line)
			}
		}
	})
}

// FuzzNestingScan checks that the scan never panics and never refuses a
// chunk whose nesting, as the parser sees it, is far within the limit.
func FuzzNestingScan(f *testing.F) {
	for _, s := range []string{"return ((1))", "x = [[ ]] .. 'a' -- c", "--[==[ ]==] do end", "a = - - -1 ^ - 2", "'\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 200 {
			return
		}
		if line := nestingLine(src, 201); line != 0 {
			t.Fatalf("nestingLine of %d bytes = %d", len(src), line)
		}
	})
}
