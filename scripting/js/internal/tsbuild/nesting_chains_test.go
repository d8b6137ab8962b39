package tsbuild

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestCheckNestingChains covers the flat chains that esbuild and goja
// recurse on once per link (issue 25 §1): each is refused at its limit with
// a message naming it, and real code of the same shapes is accepted.
func TestCheckNestingChains(t *testing.T) {
	r := strings.Repeat
	labels := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("L")
			b.WriteString(strings.Repeat("x", i%7))
			b.WriteString(string(rune('a' + i%26)))
			b.WriteString(":")
		}
		return b.String() + "x;"
	}
	const (
		elseIf    = "the source chains more than 10000 else-if branches"
		postfix   = "the source chains more than 10000 calls, member accesses or tagged templates"
		binary    = "the source chains more than 10000 binary operators"
		comma     = "the source chains more than 1000 comma operators"
		braceless = "the source nests more than 1000 statements without braces"
		nesting   = "the source nests more than 10000 levels deep"
		scopes    = "the source nests more than 250 functions, classes or blocks"
		nots      = "the source chains more than 1000 negations"
		fold      = "the source folds more than 32000000 bytes of string literals"
		rename    = "the source needs more than 5000000 renaming steps for names its nested scopes share"
	)
	refused := []struct{ name, src, msg string }{
		{"an else-if chain of 300,000 blocks", "if (a) {} " + r("else if (a) {} ", 300000), elseIf},
		{"an else-if chain of 300,000 statements", "if (a) x; " + r("else if (a) x; ", 300000), elseIf},
		{"an else-if chain whose branches hold function expressions", "if (a) x = function(){} + 1; " + r("else if (a) x = function(){} + 1; ", 20000), elseIf},
		{"a chain of 300,000 calls", "f" + r("()", 300000), postfix},
		{"a chain of member accesses", "x = a" + r(".b", 300000), postfix},
		{"a chain of private member accesses", "x = this" + r(".#b", 300000), postfix},
		{"a chain of keyword-named member accesses", "x = a" + r(".if", 300000), postfix},
		{"a chain of indexes", "x = a" + r("[0]", 300000), postfix},
		{"a chain of method calls", "x = a" + r(".b()", 300000), postfix},
		{"an optional chain", "x = a" + r("?.b", 300000), postfix},
		{"a chain of tagged templates", "x = f" + r("``", 300000), postfix},
		{"a chain of 100,000 commas", "x = (" + r("a,", 100000) + "a)", comma},
		{"a statement of 100,000 commas", r("a,", 100000) + "a", comma},
		{"a var statement of 100,000 declarators", "var " + r("a=1,", 100000) + "b=1", comma},
		{"a chain of additions", "x = " + r("a*", 300000) + "a", binary},
		{"a chain of logical ands", "x = " + r("a&&", 300000) + "a", binary},
		{"a chain of nullish coalescings", "x = " + r("a??", 300000) + "a", binary},
		{"a chain of comparisons", "x = " + r("a>", 300000) + "a", binary},
		{"a chain of instanceof", "x = " + r("a instanceof ", 300000) + "a", binary},
		{"a chain of additions over lines without semicolons", "x = " + r("a|\n", 300000) + "a", binary},
		{"nested ifs without braces", r("if (a) ", 300000) + "x;", braceless},
		{"nested whiles without braces", r("while (a) ", 300000) + "x;", braceless},
		{"nested fors without braces", r("for (;;) ", 300000) + ";", braceless},
		{"nested dos", r("do ", 300000) + "x; " + r("while (a); ", 300000), braceless},
		{"a chain of labels", labels(300000), braceless},
		{"an arrow chain", "x = " + r("a=>", 300000) + "a", rename},
		{"an arrow chain of 251 arrows without names", "x = " + r("()=>", 251) + "1", scopes},
		{"an arrow chain with parentheses", "x = " + r("(a)=>", 300000) + "a", rename},
		{"arrows with block bodies", "x = " + r("()=>{return ", 300) + "1" + r("}", 300), scopes},
		{"nested function declarations", r("function f(){", 300000) + r("}", 300000), rename},
		{"nested anonymous functions", "x = " + r("function(){return ", 251) + "1" + r("}", 251), scopes},
		{"arrows sharing a name with the 20 around them", "x = " + r("a=>", 20) + "[" + r("a=>a,", 12000) + "]", rename},
		{"nested arrows of 100 parameters each", "x = " + r("("+strings.Join(func() []string {
			ps := make([]string, 100)
			for i := range ps {
				ps[i] = "p" + strconv.Itoa(i)
			}
			return ps
		}(), ",")+")=>", 240) + "a", rename},
		{"nested classes and methods", "x = " + r("class { m() { return ", 200) + "1" + r("} }", 200), scopes},
		{"nested blocks", r("{", 251) + r("}", 251), scopes},
		{"a run of 1,001 negations", "x = " + r("!", 1001) + "a", nots},
		{"negations across parentheses", "x = " + r("!(", 1001) + "a" + r(")", 1001), nots},
		{"a concatenation of 10,000 string literals", "x = " + r("'abcdefgh'+", 10000) + "'a'", fold},
		{"a concatenation of string literals after a name", "x = y + " + r("'abcdefgh'+", 10000) + "'a'", fold},
		{"a concatenation of large string literals", "x = " + r("'"+r("x", 40000)+"'+", 100) + "'a'", fold},
		{"a concatenation of string literals nested in parentheses", "x = " + r("'abcdefgh'+(", 6000) + "'a'" + r(")", 6000), fold},
		{"a concatenation of templates", "x = " + r("`abcdefgh`+", 10000) + "'a'", fold},
		{"an exponent chain", "x = " + r("a**", 300000) + "a", nesting},
		{"a chain of new", "x = " + r("new ", 300000) + "f", nesting},
		{"a chain of awaits", "async function f() { x = " + r("await ", 300000) + "a }", nesting},
		{"a chain of class extends", "x = " + r("class extends ", 300000) + "Object" + r(" {}", 300000), nesting},
		{"a chain of unary minus", "x = " + r("- ", 300000) + "a", nesting},
		{"runs of negations spread over nested levels", "x = " + r(r("!", 500)+"(", 100) + "a", nots},
		{"runs of unary operators spread over nested levels", "x = " + r(r("- ", 5000)+"(", 100) + "a", nesting},
		{"call chains spread over template substitutions", "x = " + r("`${f"+r("``", 9000), 10) + "a" + r("}`", 10), nesting},
	}
	for _, c := range refused {
		t.Run(c.name+" is refused", func(t *testing.T) {
			err := CheckNesting([]byte(c.src), 0)
			var ne *NestingError
			if !errors.As(err, &ne) {
				t.Fatalf("got %v, want a *NestingError", err)
			}
			if msg := err.Error()[strings.Index(err.Error(), " ")+1:]; msg != c.msg {
				t.Errorf("message %q, want %q", msg, c.msg)
			}
		})
	}
	accepted := []struct{ name, src string }{
		{"an array of 1,000,000 numbers", "module.exports = [" + r("1,", 1000000) + "1];"},
		{"an object of 50,000 keys", "module.exports = {" + r(`"k": [1, "v", {"a": null}], `, 50000) + "};"},
		{"a call with 100,000 arguments", "f(" + r("a, ", 100000) + "a);"},
		{"20,000 separate if statements", r("if (a) x = b + c;\n", 20000)},
		{"20,000 separate if-else statements with blocks", r("if (a) { x = 1 } else if (b) { x = 2 } else { f(x) }\n", 20000)},
		{"a switch of 40,000 cases", "switch (x) {" + r("case 1: case 2: f(); break;\n", 20000) + "}"},
		{"20,000 statements without semicolons", r("x = a + b.c(d) - e\nconst y = z\n", 10000)},
		{"a string concatenation of 5,000 parts", "s = " + r("'abcdefgh' + x + ", 2500) + "'a';"},
		{"an else-if chain of 9,999 branches", "if (a) {} " + r("else if (a) {} ", 9998)},
		{"a member chain just under the limit", "x = a" + r(".b", 10000)},
		{"1,000 comma operators", r("a,", 1000) + "a"},
		{"1,000 labels", labels(1000)},
		{"TypeScript with type annotations and object types", r("let x: {a: number, b: string} = {a: 1, b: 's'};\nclass A { a: number; b?: string; m(): void {} }\n", 5000)},
		{"many imports and exports", r("import {a, b, c} from './x';\nexport {a, b};\n", 5000)},
		{"ternaries, objects and labels", r("x = a ? {b: 1} : {c: [1, 2]};\nL: for (;;) { break L; }\ncase1: { }\n", 5000)},
		{"a concatenation of 800 string literals of 80 bytes", "s = " + r("'"+r("abcdefgh", 10)+"' +\n", 800) + "'';"},
		{"a template built from literals and names", "s = " + r("'<td>' + a + '</td>' + ", 2000) + "'';"},
		{"string literals in separate statements", r("s = s + '"+r("abcdefgh", 10)+"' + '"+r("abcdefgh", 10)+"';\n", 30000)},
		{"arrows and blocks 250 deep", "x = " + r("()=>", 125) + r("{", 125) + r("}", 125)},
		{"250 nested anonymous functions, one after another", r("x = "+r("function(){return ", 250)+"1"+r("}", 250)+"\n", 20)},
		{"150 nested functions declaring the same names", r("function f(a){", 150) + r("}", 150)},
		{"arrows sharing a name with the 20 around them, 10,000 times", "x = " + r("a=>", 20) + "[" + r("a=>a,", 10000) + "]"},
		{"30,000 function declarations", r("function f(a) { return a }\n", 30000)},
		{"30,000 class declarations", r("class A extends B { m() {} }\n", 30000)},
		{"double negations", r("x = !!a && !!b;\n", 30000)},
		{"a long minified bundle line", r("var a=function(b){return b&&b.c?b.d(e,f):g[h]||i},", 1) + r("j=a(k),l=m.n.o(p)||{};", 20000)},
	}
	for _, c := range accepted {
		t.Run(c.name+" is accepted", func(t *testing.T) {
			if err := CheckNesting([]byte(c.src), 0); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("the position is where the chain passes its limit", func(t *testing.T) {
		err := CheckNesting([]byte("ok()\nif (a) {}"+r(" else if (a) {}", 11)), 10)
		if err == nil || err.Error() != "2:166: the source chains more than 10 else-if branches" {
			t.Fatalf("got %v", err)
		}
	})
}

func TestTransformRefusesFlatChains(t *testing.T) {
	for _, name := range []string{"chain.js", "chain.ts", "chain.mjs"} {
		_, err := Transform(name, []byte("import x from './y';\nf"+strings.Repeat("()", 300000)))
		if want := name + ":2:20002: the source chains more than 10000 calls, member accesses or tagged templates"; err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}
