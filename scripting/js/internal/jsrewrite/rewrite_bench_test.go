package jsrewrite_test

import (
	"os"
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// BenchmarkLoad is the load-time cost of the rewrite on dsh's own prelude
// (3.5 KB, which holds none of the operators: "none" shows the precheck),
// and on the prelude with one a * b appended ("walked": the whole tree is
// walked): parse and compile as before, and parse, rewrite and compile.
func BenchmarkLoad(b *testing.B) {
	prelude, err := os.ReadFile("../../prelude.js")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		src     []byte
		rewrite bool
	}{
		{"none/compile", prelude, false},
		{"none/rewrite_and_compile", prelude, true},
		{"walked/compile", append(prelude[:len(prelude):len(prelude)], "\nvar a = 2, b = 3, z = a * b;\n"...), false},
		{"walked/rewrite_and_compile", append(prelude[:len(prelude):len(prelude)], "\nvar a = 2, b = 3, z = a * b;\n"...), true},
	} {
		src, rewrite := c.src, c.rewrite
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				prog, err := parser.ParseFile(nil, "prelude.js", string(src), 0)
				if err != nil {
					b.Fatal(err)
				}
				if rewrite && jsrewrite.MayNeed(src) {
					if _, err := jsrewrite.Operators(prog); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := goja.CompileAST(prog, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
