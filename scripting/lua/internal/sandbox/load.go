package sandbox

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Load compiles the Lua source text src as a function whose environment is
// L's globals, refusing what could hang or exhaust the process while
// compiling: a binary chunk (gopher-lua has none, but the refusal is
// explicit), a source longer than maxBytes (0: DefaultMaxChunkBytes),
// nesting deeper than [MaxSyntaxDepth] found by a scan of the text before
// parsing (see nestingLine), and a syntax tree nested deeper than
// MaxSyntaxDepth, which gopher-lua would take quadratic time to compile,
// without a context check. It compiles the .. operator as a call of the
// state's capped concat function (see concat.go). name names the chunk in
// error messages and tracebacks (a file name, "lib/util.lua").
//
// Syntax errors are gopher-lua's *lua.ApiError (Type ApiErrorSyntax); the
// others are plain errors. The glue should compile plugin files with Load
// too, rather than L.LoadString or L.DoFile.
func Load(L *lua.LState, src, name string, maxBytes int) (fn *lua.LFunction, err error) {
	defer func() {
		// gopher-lua's parser and compiler are not known to panic, but a
		// panic here would take the host down with a plugin's source.
		if r := recover(); r != nil {
			fn, err = nil, fmt.Errorf("%s: cannot compile the chunk: %v", name, r)
		}
	}()
	if maxBytes <= 0 {
		maxBytes = DefaultMaxChunkBytes
	}
	if strings.HasPrefix(src, "\x1b") {
		return nil, fmt.Errorf("%s: attempt to load a binary chunk (only text chunks can be loaded)", name)
	}
	if len(src) > maxBytes {
		return nil, fmt.Errorf("%s: chunk of %d bytes is over the limit of %d bytes", name, len(src), maxBytes)
	}
	if line := nestingLine(src, MaxSyntaxDepth); line > 0 {
		return nil, fmt.Errorf("%s:%d: chunk has too many syntax levels (the limit is %d)", name, line, MaxSyntaxDepth)
	}
	chunk, err := parse.Parse(strings.NewReader(src), name)
	if err != nil {
		return nil, syntaxError(err)
	}
	if line, deep := tooDeep(chunk, MaxSyntaxDepth); deep {
		return nil, fmt.Errorf("%s:%d: chunk has too many syntax levels (the limit is %d)", name, line, MaxSyntaxDepth)
	}
	nonce := newNonce()
	rewriteConcat(chunk, nonce)
	proto, err := lua.Compile(chunk, name)
	if err != nil {
		return nil, syntaxError(err)
	}
	if err := bindConcat(proto, nonce, concatFunction(L)); err != nil {
		return nil, err
	}
	return L.NewFunctionFromProto(proto), nil
}

// syntaxError is the *lua.ApiError L.Load would return, with the message
// trimmed of gopher-lua's trailing newline.
func syntaxError(err error) *lua.ApiError {
	return &lua.ApiError{Type: lua.ApiErrorSyntax, Object: lua.LString(strings.TrimSpace(err.Error())), Cause: err}
}

// node is a syntax tree node still to visit, at its depth.
type node struct {
	n     any
	depth int
}

// tooDeep reports whether the syntax tree of chunk nests deeper than limit,
// and the line where it does. It walks the tree with an explicit stack.
func tooDeep(chunk []ast.Stmt, limit int) (line int, deep bool) {
	var todo []node
	stmts := func(list []ast.Stmt, d int) {
		for _, s := range list {
			todo = append(todo, node{s, d})
		}
	}
	exprs := func(list []ast.Expr, d int) {
		for _, e := range list {
			if e != nil {
				todo = append(todo, node{e, d})
			}
		}
	}
	expr := func(e ast.Expr, d int) {
		if e != nil {
			todo = append(todo, node{e, d})
		}
	}
	stmts(chunk, 1)
	for len(todo) > 0 {
		it := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if it.depth > limit {
			if p, ok := it.n.(ast.PositionHolder); ok {
				return p.Line(), true
			}
			return 0, true
		}
		d := it.depth + 1
		switch n := it.n.(type) {
		// Expressions.
		case *ast.AttrGetExpr:
			expr(n.Object, d)
			expr(n.Key, d)
		case *ast.TableExpr:
			for _, f := range n.Fields {
				expr(f.Key, d)
				expr(f.Value, d)
			}
		case *ast.FuncCallExpr:
			expr(n.Func, d)
			expr(n.Receiver, d)
			exprs(n.Args, d)
		case *ast.LogicalOpExpr:
			expr(n.Lhs, d)
			expr(n.Rhs, d)
		case *ast.RelationalOpExpr:
			expr(n.Lhs, d)
			expr(n.Rhs, d)
		case *ast.StringConcatOpExpr:
			expr(n.Lhs, d)
			expr(n.Rhs, d)
		case *ast.ArithmeticOpExpr:
			expr(n.Lhs, d)
			expr(n.Rhs, d)
		case *ast.UnaryMinusOpExpr:
			expr(n.Expr, d)
		case *ast.UnaryNotOpExpr:
			expr(n.Expr, d)
		case *ast.UnaryLenOpExpr:
			expr(n.Expr, d)
		case *ast.FunctionExpr:
			stmts(n.Stmts, d)
		// Statements.
		case *ast.AssignStmt:
			exprs(n.Lhs, d)
			exprs(n.Rhs, d)
		case *ast.LocalAssignStmt:
			exprs(n.Exprs, d)
		case *ast.FuncCallStmt:
			expr(n.Expr, d)
		case *ast.DoBlockStmt:
			stmts(n.Stmts, d)
		case *ast.WhileStmt:
			expr(n.Condition, d)
			stmts(n.Stmts, d)
		case *ast.RepeatStmt:
			expr(n.Condition, d)
			stmts(n.Stmts, d)
		case *ast.IfStmt:
			expr(n.Condition, d)
			stmts(n.Then, d)
			stmts(n.Else, d) // elseif is an if nested in Else
		case *ast.NumberForStmt:
			expr(n.Init, d)
			expr(n.Limit, d)
			expr(n.Step, d)
			stmts(n.Stmts, d)
		case *ast.GenericForStmt:
			exprs(n.Exprs, d)
			stmts(n.Stmts, d)
		case *ast.FuncDefStmt:
			if n.Name != nil {
				expr(n.Name.Func, d)
				expr(n.Name.Receiver, d)
			}
			if n.Func != nil {
				todo = append(todo, node{n.Func, d})
			}
		case *ast.ReturnStmt:
			exprs(n.Exprs, d)
		}
		// Leaves: constants, identifiers, ..., break, labels, goto.
	}
	return 0, false
}

// loadChunk compiles src for load and loadstring: the function, or nil and
// the message.
func (b *box) loadChunk(L *lua.LState, src, name string) int {
	fn, err := Load(L, src, name, b.opts.MaxChunkBytes)
	if err != nil {
		L.Push(lua.LNil)
		if ae, ok := err.(*lua.ApiError); ok {
			L.Push(ae.Object)
		} else {
			L.Push(lua.LString(err.Error()))
		}
		return 2
	}
	L.Push(fn)
	return 1
}

// loadstring compiles a string: loadstring(s [, chunkname]).
func (b *box) loadstring(L *lua.LState) int {
	src := L.CheckString(1)
	return b.loadChunk(L, src, L.OptString(2, "<string>"))
}

// load compiles a chunk given as a string, or as a reader function called
// until it returns nil or "" (the pieces are capped at MaxChunkBytes in
// all): load(s | f [, chunkname]).
func (b *box) load(L *lua.LState) int {
	switch src := L.Get(1).(type) {
	case lua.LString:
		return b.loadChunk(L, string(src), L.OptString(2, "<string>"))
	case *lua.LFunction:
		name := L.OptString(2, "(load)")
		var sb strings.Builder
		for {
			L.Push(src)
			L.Call(0, 1)
			piece := L.Get(-1)
			L.Pop(1)
			if piece == lua.LNil {
				break
			}
			s, ok := piece.(lua.LString)
			if !ok {
				if n, isNum := piece.(lua.LNumber); isNum {
					s = lua.LString(n.String())
				} else {
					L.Push(lua.LNil)
					L.Push(lua.LString("reader function must return a string"))
					return 2
				}
			}
			if s == "" {
				break
			}
			if sb.Len()+len(s) > b.opts.MaxChunkBytes {
				L.Push(lua.LNil)
				L.Push(lua.LString(fmt.Sprintf("%s: chunk of more than %d bytes is over the limit", name, b.opts.MaxChunkBytes)))
				return 2
			}
			sb.WriteString(string(s))
		}
		return b.loadChunk(L, sb.String(), name)
	default:
		L.ArgError(1, "string or function expected")
		return 0
	}
}
