package jsguard_test

import (
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// hashSrc hashes a 1000-character string: djb2 with a literal shift count
// (left to goja) and a variant whose shift count and multiplier are
// variables (rewritten into helper calls).
const hashSrc = `var s = "abcdefghij".repeat(100);
function djb2(s) { var h = 5381; for (var i = 0; i < s.length; i++) h = ((h << 5) + h + s.charCodeAt(i)) | 0; return h; }
var k = 5, m = 31;
function varShift(s) { var h = 5381; for (var i = 0; i < s.length; i++) h = ((h << k) + h * m + s.charCodeAt(i)) | 0; return h; }`

func benchHash(b *testing.B, rewrite bool, call string) {
	vm := goja.New()
	if err := jsguard.Install(vm, jsguard.Options{}); err != nil {
		b.Fatal(err)
	}
	prog, err := parser.ParseFile(nil, "h.js", hashSrc, 0)
	if err != nil {
		b.Fatal(err)
	}
	if rewrite {
		if _, err := jsrewrite.Operators(prog); err != nil {
			b.Fatal(err)
		}
	}
	p, err := goja.CompileAST(prog, false)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := vm.RunProgram(p); err != nil {
		b.Fatal(err)
	}
	f, _ := goja.AssertFunction(vm.Get(call))
	s := vm.Get("s")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f(goja.Undefined(), s); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/char")
}

// BenchmarkHashOperators is the per-operation cost of the rewrite: a hash
// loop over 1000 characters, its operators as goja runs them (plain) and
// rewritten. djb2's shift has a literal count and is not rewritten.
func BenchmarkHashOperators(b *testing.B) {
	for _, c := range []struct {
		name, fn string
		rewrite  bool
	}{
		{"djb2/plain", "djb2", false},
		{"djb2/rewritten", "djb2", true},
		{"var_shift_mul/plain", "varShift", false},
		{"var_shift_mul/rewritten", "varShift", true},
	} {
		b.Run(c.name, func(b *testing.B) { benchHash(b, c.rewrite, c.fn) })
	}
}

// BenchmarkShiftOperator is one variable-count << per iteration of a
// JavaScript loop, as goja runs it (plain) and rewritten into the helper.
func BenchmarkShiftOperator(b *testing.B) {
	const src = `var k = 3; function loop(n) { var h = 1; for (var i = 0; i < n; i++) h = (h << k) ^ i; return h; }`
	for _, rewrite := range []bool{false, true} {
		name := "plain"
		if rewrite {
			name = "rewritten"
		}
		b.Run(name, func(b *testing.B) {
			vm := goja.New()
			if err := jsguard.Install(vm, jsguard.Options{}); err != nil {
				b.Fatal(err)
			}
			prog, err := parser.ParseFile(nil, "s.js", src, 0)
			if err != nil {
				b.Fatal(err)
			}
			if rewrite {
				if _, err := jsrewrite.Operators(prog); err != nil {
					b.Fatal(err)
				}
			}
			p, err := goja.CompileAST(prog, false)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := vm.RunProgram(p); err != nil {
				b.Fatal(err)
			}
			f, _ := goja.AssertFunction(vm.Get("loop"))
			n := vm.ToValue(10000)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f(goja.Undefined(), n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/shift")
		})
	}
}
