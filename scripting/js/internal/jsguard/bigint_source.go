package jsguard

import (
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// Sources given to eval and to the Function constructors get the operator
// rewrite too (jsrewrite.Operators). goja takes them as text, and the
// rewrite is of the syntax tree, so a source that has an operator to
// rewrite is parsed, rewritten, compiled and run here instead of by goja.

// rewriteSource parses src as a script and rewrites its operators; ok is
// false when there is nothing to rewrite or src does not parse (goja then
// runs or refuses the text itself).
func (g *guard) rewriteSource(name, src string) (*ast.Program, bool) {
	if !jsrewrite.MayNeed([]byte(src)) {
		return nil, false
	}
	prog, err := parser.ParseFile(nil, name, src, 0)
	if err != nil {
		return nil, false
	}
	n, err := jsrewrite.Operators(prog)
	if err != nil {
		panic(g.syntaxErr(name + ": " + err.Error()))
	}
	return prog, n > 0
}

// evalRewritten runs a rewritten eval source as a global script. To keep
// the lexical declarations of its top level (let, const, class) the
// eval's own, as an indirect eval does, a body that has them runs as one
// block. Departures from eval, for such sources only: its var and
// function declarations are not deletable, and a strict source's are
// global rather than its own.
func (g *guard) evalRewritten(prog *ast.Program) goja.Value {
	if hasLexical(prog.Body) {
		prog.Body = []ast.Statement{&ast.BlockStatement{
			LeftBrace:  prog.Idx0(),
			List:       prog.Body,
			RightBrace: prog.Idx1() - 1,
		}}
	}
	p, err := goja.CompileAST(prog, false)
	if err != nil {
		panic(g.syntaxErr(err.Error()))
	}
	v, err := g.vm.RunProgram(p)
	rethrow(err)
	return v
}

func hasLexical(body []ast.Statement) bool {
	for _, st := range body {
		switch st.(type) {
		case *ast.LexicalDeclaration, *ast.ClassDeclaration:
			return true
		}
	}
	return false
}

// rewrittenFunction makes the function the Function constructor named name
// (Function, GeneratorFunction, AsyncFunction) makes of the converted
// strings strs, from the same text goja builds, when that text has an
// operator to rewrite; ok is false otherwise. newTarget, when not nil, is
// new's target, whose prototype property the function gets.
func (g *guard) rewrittenFunction(name string, strs []goja.Value, newTarget *goja.Object) (*goja.Object, bool) {
	head := "(function anonymous("
	switch name {
	case "GeneratorFunction":
		head = "(function* anonymous("
	case "AsyncFunction":
		head = "(async function anonymous("
	}
	var b strings.Builder
	b.WriteString(head)
	for i := 0; i < len(strs)-1; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strs[i].String())
	}
	b.WriteString("\n) {\n")
	if len(strs) > 0 {
		b.WriteString(strs[len(strs)-1].String())
	}
	b.WriteString("\n})")
	prog, ok := g.rewriteSource("<eval>", b.String())
	if !ok {
		return nil, false
	}
	if !oneFunction(prog) {
		// The parameters or body close the function early, which goja's
		// constructor lets through.
		panic(g.syntaxErr(name + ": the parameters or body close the function"))
	}
	p, err := goja.CompileAST(prog, false)
	if err != nil {
		panic(g.syntaxErr(err.Error()))
	}
	v, err := g.vm.RunProgram(p)
	rethrow(err)
	f := v.(*goja.Object)
	if newTarget != nil {
		if proto, ok := newTarget.Get("prototype").(*goja.Object); ok && proto != f.Prototype() {
			rethrow(f.SetPrototype(proto))
		}
	}
	return f, true
}

// oneFunction reports whether prog is one parenthesised function
// expression, as the Function constructor's text must be.
func oneFunction(prog *ast.Program) bool {
	if len(prog.Body) != 1 {
		return false
	}
	es, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	_, ok = es.Expression.(*ast.FunctionLiteral)
	return ok
}
