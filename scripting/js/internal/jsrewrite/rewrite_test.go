package jsrewrite_test

import (
	"testing"

	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// Operators rewrites exactly the operators that can compute a BigInt, and
// leaves the source's text (so functions' toString) alone.
func TestOperatorsRewritesWhatCanBeABigInt(t *testing.T) {
	cases := []struct {
		name, src string
		want      int
	}{
		{"a power of two variables", "a ** b", 1},
		{"a shift of two variables", "a << b", 1},
		{"a right shift of two variables", "a >> b", 1},
		{"a product of two variables", "a * b", 1},
		{"an unsigned shift, which throws on a BigInt", "a >>> b", 0},
		{"a literal count", "a << 5", 0},
		{"a literal base", "2 ** k", 0},
		{"a string operand", "a * '3'", 0},
		{"a unary plus operand", "+a << b", 0},
		{"a negative literal", "a >> -1", 0},
		{"a BigInt literal operand", "a ** 2n", 1},
		{"two BigInt literals, which goja would fold", "3n ** 100000000n", 1},
		{"nested operators", "(a * b) ** (c << d)", 3},
		{"compound assignments", "x **= y; o.p <<= y; o[k] >>= y; f().p *= y; o[k()] **= y", 5},
		{"a compound with a literal", "x *= 2", 0},
		{"an operator in a default parameter", "function f(a = b ** c) {}", 1},
		{"an operator in an arrow body", "const f = (a) => a * b", 1},
		{"an operator in a template", "`${a * b}`", 1},
		{"an operator in a class field", "class C { x = a << b }", 1},
		{"division and addition", "a / b + c - d % e", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prog, err := parser.ParseFile(nil, "t.js", c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			n, err := jsrewrite.Operators(prog)
			if err != nil {
				t.Fatal(err)
			}
			if n != c.want {
				t.Errorf("%s: rewrote %d operators, want %d", c.src, n, c.want)
			}
		})
	}
}

func TestMayNeedSeesTheOperatorsCharacters(t *testing.T) {
	for src, want := range map[string]bool{
		"a + b": false, "a * b": true, "a ** b": true, "a << b": true, "a >> b": true, "a >>> b": true,
		"/* * */ a": true, "a < b > c": false,
	} {
		if got := jsrewrite.MayNeed([]byte(src)); got != want {
			t.Errorf("MayNeed(%q) = %v, want %v", src, got, want)
		}
	}
}
