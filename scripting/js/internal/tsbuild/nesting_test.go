package tsbuild

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNesting(t *testing.T) {
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	const (
		levels = "the source nests more than 10000 levels deep"
		scopes = "the source nests more than 250 functions, classes or blocks"
		nots   = "the source chains more than 1000 negations"
	)
	refused := []struct{ name, src, msg string }{
		{"a million nested arrays", "x = " + deep("[", "]", 1000000), levels},
		{"a million nested parentheses", "x = " + deep("(", ")", 1000000), levels},
		{"an assignment chain", strings.Repeat("a=", 1000000) + "1", levels},
		{"an assignment chain over lines", strings.Repeat("a=\n", 1000000) + "1", levels},
		{"a run of negations", "x = " + strings.Repeat("!", 1000000) + "1", nots},
		{"a chain of conditionals", "x = " + strings.Repeat("a?1:", 1000000) + "1", levels},
		{"nested functions", strings.Repeat("function(){", 1000000) + strings.Repeat("}", 1000000), scopes},
		{"nested template substitutions", "x = " + strings.Repeat("`${", 100000) + "1" + strings.Repeat("}`", 100000), levels},
		{"closing brackets hidden in regexps", "x = " + strings.Repeat("(/)/", 20000), levels},
		{"TypeScript generics", "let x: " + strings.Repeat("A<", 100000) + "B" + strings.Repeat(">", 100000), levels},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused", func(t *testing.T) {
			err := CheckNesting([]byte(c.src), 0)
			var ne *NestingError
			if !errors.As(err, &ne) {
				t.Fatalf("got %v, want a *NestingError", err)
			}
			if !strings.HasSuffix(err.Error(), ": "+c.msg) {
				t.Errorf("message %q, want %q", err, c.msg)
			}
		})
	}
	accepted := []struct{ name, src string }{
		{"ordinary code", "const { tools } = require('dsh');\nfunction f(a, b) { return a ? b : -a; }\nlet s = `a ${f(1, [2, {x: 3}])} b`;\n"},
		{"brackets inside strings, comments, templates and regexps", strings.Repeat(`"((((" '[[[' /* {{{{ */ // ((((`+"\n`(((( ${1} ((((`; /\\(+[(]/.test(s);\n", 5000)},
		{"20,000 statements without semicolons", strings.Repeat("a = b + -c\n", 2000)},
		{"a long minified array", "x=[" + strings.Repeat("a=!b,c=d?e:f,", 100000) + "]"},
		{"nesting just under the limit", "x = " + deep("[", "]", 9999)},
	}
	for _, c := range accepted {
		t.Run(c.name+" is accepted", func(t *testing.T) {
			if err := CheckNesting([]byte(c.src), 0); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("the position is the line and column where the limit is passed", func(t *testing.T) {
		err := CheckNesting([]byte("ok()\n  "+strings.Repeat("(", 11)), 10)
		if err == nil || err.Error() != "2:13: the source nests more than 10 levels deep" {
			t.Fatalf("got %v", err)
		}
	})
}

func TestTransformRefusesDeeplyNestedSource(t *testing.T) {
	_, err := Transform("deep.js", []byte("let a = 1;\nx = "+strings.Repeat("[", 1000000)+strings.Repeat("]", 1000000)))
	if err == nil || err.Error() != "deep.js:2:10005: the source nests more than 10000 levels deep" {
		t.Fatalf("got %v", err)
	}
}

func FuzzCheckNesting(f *testing.F) {
	f.Add([]byte("a = `x${[1, (2)]}` / 2 /* ( */ // [\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_ = CheckNesting(src, 3)
	})
}
