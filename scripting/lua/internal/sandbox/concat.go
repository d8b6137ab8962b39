package sandbox

import (
	"crypto/rand"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
)

// The .. operator, capped.
//
// gopher-lua runs .. as one VM instruction (OP_CONCAT) that nothing can
// hook, so "s = s .. s" doubles a string until the process runs out of
// memory. [Load] therefore compiles no OP_CONCAT: it rewrites every
// concatenation a..b..c of the syntax tree into a call f(a, b, c) of the
// state's concat function, which does what OP_CONCAT does (gopher-lua's
// stringConcat, including __concat and its error messages) with the result
// capped at Options.MaxStringBytes.
//
// No script can name, replace or reach f. In the syntax tree, f is a string
// constant whose text is a random nonce drawn for each chunk; once the chunk
// is compiled, Load replaces that constant in the prototypes' constant
// tables with the function itself, so the call loads it with LOADK like any
// constant. The operands are evaluated as before (left to right, all of them
// before any concatenation), the last one truncated to one value as an
// operand is, and the error position is the line of the expression, as
// OP_CONCAT's. Load refuses to return a chunk in which an OP_CONCAT is left.

// concat is the concat function of the box: concat(v1, ..., vn) is
// v1 .. ... .. vn, right-associative.
func (b *box) concat(L *lua.LState) int {
	n := L.GetTop()
	if n == 2 {
		// The common case: two strings.
		x, ok1 := L.Get(1).(lua.LString)
		y, ok2 := L.Get(2).(lua.LString)
		if ok1 && ok2 {
			if len(x)+len(y) > b.opts.MaxStringBytes {
				b.tooLarge(L, "string concatenation", float64(len(x)+len(y)))
			}
			L.Push(x + y)
			return 1
		}
	}
	if n == 0 {
		L.RaiseError("sandbox: concatenation of nothing")
	}
	rhs := L.Get(n)
	i := n - 1
	for i >= 1 {
		lhs := L.Get(i)
		if !lua.LVCanConvToString(lhs) || !lua.LVCanConvToString(rhs) {
			op := L.GetMetaField(lhs, "__concat")
			if op == lua.LNil {
				op = L.GetMetaField(rhs, "__concat")
			}
			if op.Type() != lua.LTFunction {
				L.RaiseError("cannot perform concat operation between %v and %v", lhs.Type().String(), rhs.Type().String())
			}
			L.Push(op)
			L.Push(lhs)
			L.Push(rhs)
			L.Call(2, 1)
			rhs = L.Get(-1)
			L.Pop(1)
			i--
			continue
		}
		// A run of strings and numbers: convert, measure, then join once.
		parts := append(b.parts[:0], lua.LVAsString(rhs))
		size := len(parts[0])
		j := i
		for ; j >= 1; j-- {
			v := L.Get(j)
			if !lua.LVCanConvToString(v) {
				break
			}
			s := lua.LVAsString(v)
			size += len(s)
			parts = append(parts, s)
		}
		if size > b.opts.MaxStringBytes {
			clear(parts)
			b.tooLarge(L, "string concatenation", float64(size))
		}
		var sb strings.Builder
		sb.Grow(size)
		for k := len(parts) - 1; k >= 0; k-- {
			sb.WriteString(parts[k])
		}
		clear(parts) // do not keep the operands alive
		b.parts = parts[:0]
		rhs = lua.LString(sb.String())
		i = j
	}
	L.Push(rhs)
	return 1
}

// ConcatFunction is the function L's compiled chunks call for `..` (the
// capped concatenation), for a host that reuses a prototype compiled in
// another state: the function constants that stood for that state's must
// be this one. For a state [New] did not make it is one with the default
// limit.
func ConcatFunction(L *lua.LState) *lua.LFunction { return concatFunction(L) }

// concatFunction returns the concat function of L's box, or for a state
// that [New] did not make, one with the default limit.
func concatFunction(L *lua.LState) *lua.LFunction {
	if b := boxOf(L); b != nil {
		return b.concatFn
	}
	b := &box{}
	b.opts.defaults()
	return L.NewFunction(b.concat)
}

// rewriteConcat replaces every concatenation in chunk by a call of the
// string constant nonce. The tree must have passed tooDeep: the walk
// recurses.
func rewriteConcat(chunk []ast.Stmt, nonce string) {
	r := concatRewriter{nonce: nonce}
	r.stmts(chunk)
}

type concatRewriter struct{ nonce string }

func (r *concatRewriter) stmts(list []ast.Stmt) {
	for _, s := range list {
		r.stmt(s)
	}
}

func (r *concatRewriter) exprs(list []ast.Expr) {
	for i := range list {
		list[i] = r.expr(list[i])
	}
}

func (r *concatRewriter) stmt(s ast.Stmt) {
	switch n := s.(type) {
	case *ast.AssignStmt:
		r.exprs(n.Lhs)
		r.exprs(n.Rhs)
	case *ast.LocalAssignStmt:
		r.exprs(n.Exprs)
	case *ast.FuncCallStmt:
		n.Expr = r.expr(n.Expr)
	case *ast.DoBlockStmt:
		r.stmts(n.Stmts)
	case *ast.WhileStmt:
		n.Condition = r.expr(n.Condition)
		r.stmts(n.Stmts)
	case *ast.RepeatStmt:
		n.Condition = r.expr(n.Condition)
		r.stmts(n.Stmts)
	case *ast.IfStmt:
		n.Condition = r.expr(n.Condition)
		r.stmts(n.Then)
		r.stmts(n.Else)
	case *ast.NumberForStmt:
		n.Init = r.expr(n.Init)
		n.Limit = r.expr(n.Limit)
		n.Step = r.expr(n.Step)
		r.stmts(n.Stmts)
	case *ast.GenericForStmt:
		r.exprs(n.Exprs)
		r.stmts(n.Stmts)
	case *ast.FuncDefStmt:
		if n.Name != nil {
			n.Name.Func = r.expr(n.Name.Func)
			n.Name.Receiver = r.expr(n.Name.Receiver)
		}
		if n.Func != nil {
			r.stmts(n.Func.Stmts)
		}
	case *ast.ReturnStmt:
		r.exprs(n.Exprs)
	}
	// break, labels and goto hold no expression.
}

func (r *concatRewriter) expr(e ast.Expr) ast.Expr {
	switch n := e.(type) {
	case nil:
		return nil
	case *ast.StringConcatOpExpr:
		// a .. (b .. c) is one call, concat(a, b, c), as it is one
		// OP_CONCAT; (a .. b) .. c is two.
		var args []ast.Expr
		cur := ast.Expr(n)
		for {
			c, ok := cur.(*ast.StringConcatOpExpr)
			if !ok {
				break
			}
			args = append(args, r.expr(c.Lhs))
			cur = c.Rhs
		}
		last := r.expr(cur)
		// An operand is one value: f() and ... must not expand.
		switch l := last.(type) {
		case *ast.FuncCallExpr:
			l.AdjustRet = true
		case *ast.Comma3Expr:
			l.AdjustRet = true
		}
		args = append(args, last)
		fn := &ast.StringExpr{Value: r.nonce}
		fn.SetLine(n.Line())
		fn.SetLastLine(n.LastLine())
		call := &ast.FuncCallExpr{Func: fn, Args: args}
		call.SetLine(n.Line())
		call.SetLastLine(n.LastLine())
		return call
	case *ast.AttrGetExpr:
		n.Object = r.expr(n.Object)
		n.Key = r.expr(n.Key)
	case *ast.TableExpr:
		for _, f := range n.Fields {
			f.Key = r.expr(f.Key)
			f.Value = r.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		n.Func = r.expr(n.Func)
		n.Receiver = r.expr(n.Receiver)
		r.exprs(n.Args)
	case *ast.LogicalOpExpr:
		n.Lhs = r.expr(n.Lhs)
		n.Rhs = r.expr(n.Rhs)
	case *ast.RelationalOpExpr:
		n.Lhs = r.expr(n.Lhs)
		n.Rhs = r.expr(n.Rhs)
	case *ast.ArithmeticOpExpr:
		n.Lhs = r.expr(n.Lhs)
		n.Rhs = r.expr(n.Rhs)
	case *ast.UnaryMinusOpExpr:
		n.Expr = r.expr(n.Expr)
	case *ast.UnaryNotOpExpr:
		n.Expr = r.expr(n.Expr)
	case *ast.UnaryLenOpExpr:
		n.Expr = r.expr(n.Expr)
	case *ast.FunctionExpr:
		r.stmts(n.Stmts)
	}
	// Constants, identifiers and ... hold no expression.
	return e
}

// newNonce returns a string no script can guess.
func newNonce() string { return "\x00dsh.sandbox.concat." + rand.Text() }

// bindConcat replaces the constant nonce by fn in proto and the prototypes
// nested in it, and checks that no OP_CONCAT is left.
func bindConcat(proto *lua.FunctionProto, nonce string, fn *lua.LFunction) error {
	todo := []*lua.FunctionProto{proto}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for i, k := range p.Constants {
			if s, ok := k.(lua.LString); ok && string(s) == nonce {
				p.Constants[i] = fn
			}
		}
		for _, inst := range p.Code {
			if int(inst>>26) == lua.OP_CONCAT {
				return fmt.Errorf("sandbox: a concatenation of %s was left uncapped", p.SourceName)
			}
		}
		todo = append(todo, p.FunctionPrototypes...)
	}
	return nil
}
