package jsguard

// What jsguard costs a script: a loop of builtin calls (push, Math.max,
// join), and a loop that calls none, each with and without jsguard.

import (
	"testing"

	"github.com/dop251/goja"
)

func benchScript(b *testing.B, guarded bool, src string) {
	vm := goja.New()
	if guarded {
		if err := Install(vm, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	prog := goja.MustCompile("x", src, false)
	b.ResetTimer()
	for range b.N {
		if _, err := vm.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}

const builtinHeavy = `(function(){ var a = []; for (var i = 0; i < 10000; i++) { a.push(i); } var s = 0; for (var i = 0; i < a.length; i++) { s += Math.max(a[i], 1); } return a.join(",").length + String(s).length; })()`
const plainLoop = `(function(){ var s = 0; for (var i = 0; i < 10000; i++) { s += i * 2; } return s; })()`

func BenchmarkCostBuiltinHeavy(b *testing.B) {
	b.Run("goja", func(b *testing.B) { benchScript(b, false, builtinHeavy) })
	b.Run("jsguard", func(b *testing.B) { benchScript(b, true, builtinHeavy) })
}

func BenchmarkCostPlainLoop(b *testing.B) {
	b.Run("goja", func(b *testing.B) { benchScript(b, false, plainLoop) })
	b.Run("jsguard", func(b *testing.B) { benchScript(b, true, plainLoop) })
}

// BenchmarkCostRegExp is what jsguard costs regular expressions: a literal
// RE2 runs (goja's fast paths), one made by RegExp with the g flag (which
// carries the watched exec), an exec loop over one, and matches goja runs on
// its backtracking engine (a lookahead; a global replace of text that is not
// ASCII), whose no match jsguard confirms.
func BenchmarkCostRegExp(b *testing.B) {
	const text = `var text = "the quick  brown fox\tjumps over the lazy dog. ".repeat(20); var uni = text.replace(/o/g, "ö");`
	for _, c := range []struct{ name, src string }{
		{"split literal", `return text.split(/\s+/).length`},
		{"replace literal g", `return text.replace(/o/g, "0").length`},
		{"test literal", `return /\brm\s+-rf\b/.test(text)`},
		{"replace RegExp g", `return text.replace(re, "0").length`},
		{"exec loop RegExp g", `re.lastIndex = 0; var n = 0; while (re.exec(text) !== null) n++; return n`},
		{"lookahead test", `return /fox(?=\s+jumps over the lazy cat)/.test(text)`},
		{"lookahead replace g", `return text.replace(/o(?=x)/g, "0").length`},
		{"replace non-ASCII g", `return uni.replace(/ö/g, "0").length`},
	} {
		src := text + `var re = new RegExp("o", "g"); (function () { ` + c.src + ` })`
		for _, guarded := range []bool{false, true} {
			name := c.name + "/goja"
			if guarded {
				name = c.name + "/jsguard"
			}
			b.Run(name, func(b *testing.B) {
				vm := goja.New()
				if guarded {
					if err := Install(vm, Options{}); err != nil {
						b.Fatal(err)
					}
				}
				v, err := vm.RunString(src)
				if err != nil {
					b.Fatal(err)
				}
				f, _ := goja.AssertFunction(v)
				b.ReportAllocs()
				for b.Loop() {
					if _, err := f(goja.Undefined()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
