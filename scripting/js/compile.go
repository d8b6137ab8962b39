package js

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// compileModule compiles a transformed module inside its CommonJS wrapper.
// A source that may hold a BigInt operator is parsed and its operators
// rewritten into calls of jsguard's capped helpers first (see
// jsrewrite.Operators), which also keeps goja from folding a constant
// BigInt expression at compile time.
func compileModule(rel string, out *tsbuild.Output) (*goja.Program, error) {
	src := moduleHead + string(out.Code) + "\n})"
	if !jsrewrite.MayNeed(out.Code) {
		return goja.Compile(rel, src, false)
	}
	file, err := parser.ParseFile(nil, rel, src, 0)
	if err != nil {
		// goja.Compile reports the same error, as a goja.CompilerSyntaxError.
		return goja.Compile(rel, src, false)
	}
	if _, err := jsrewrite.Operators(file); err != nil {
		return nil, err
	}
	return goja.CompileAST(file, false)
}
