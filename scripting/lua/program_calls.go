package lua

import (
	"strings"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// A program's call of a name its namespace does not bind (tools.nope{})
// raises the namespace's error, `unknown tool "nope"` with the closest
// bound names, as a failed call does. A read of the same name
// (type(tools.nope), tools.nope == nil) is still nil, and pairs and rawget
// see the bindings alone: only a call fails. Lua cannot tell the two apart,
// so the namespace's __index (Go, calling no program code) tells them apart
// by the line the program is at: a miss on a line that calls that name
// (tools.nope{...}, tools["nope"](...), tools[name](...), tools:nope(),
// pcall(tools.nope, ...)) and does not also read it otherwise gives a
// function that raises; any other miss is nil. A name read on one line and
// called on another (local f = tools.nope, then f{}) keeps Lua's "attempt
// to call a non-function object".

// luaCallSites are the lines of a program where it calls a member.
type luaCallSites struct {
	calls map[lineName]bool // a call of o.name (o["name"]) on the line
	any   map[int]bool      // a call of o[expression] on the line
	reads map[lineName]bool // a read of o.name that is no call
}

// lineName is a member name on a line.
type lineName struct {
	line int
	name string
}

// protectedCalls are the functions whose first argument is called (pcall(f,
// ...)): passing tools.nope to them is a call of it.
var protectedCalls = map[string]bool{"pcall": true, "xpcall": true}

// collectLuaCallSites finds the call sites of a program that compiled.
func collectLuaCallSites(src string) (luaCallSites, error) {
	chunk, err := parse.Parse(strings.NewReader(src), programChunk)
	if err != nil {
		return luaCallSites{}, err
	}
	s := luaCallSites{calls: map[lineName]bool{}, any: map[int]bool{}, reads: map[lineName]bool{}}
	called := map[*ast.AttrGetExpr]bool{}
	var gets []*ast.AttrGetExpr
	callee := func(e ast.Expr) {
		a, ok := e.(*ast.AttrGetExpr)
		if !ok {
			return
		}
		called[a] = true
		if k, ok := a.Key.(*ast.StringExpr); ok {
			s.calls[lineName{a.Line(), k.Value}] = true
		} else {
			s.any[a.Line()] = true
		}
	}
	hostapi.WalkTree(chunk, func(n any) {
		switch x := n.(type) {
		case *ast.FuncCallExpr:
			switch {
			case x.Func == nil: // o:name(...): the method is fetched on the call's line
				s.calls[lineName{x.Line(), x.Method}] = true
			case len(x.Args) > 0 && isProtectedCall(x.Func):
				callee(x.Args[0])
			default:
				callee(x.Func)
			}
		case *ast.AttrGetExpr:
			gets = append(gets, x)
		}
	})
	for _, a := range gets {
		if k, ok := a.Key.(*ast.StringExpr); ok && !called[a] {
			s.reads[lineName{a.Line(), k.Value}] = true
		}
	}
	return s, nil
}

func isProtectedCall(e ast.Expr) bool {
	id, ok := e.(*ast.IdentExpr)
	return ok && protectedCalls[id.Value]
}

// fetches reports whether the program's code calling L's running Go
// function (an __index) is on a line that calls name and does not read it.
func (s luaCallSites) fetches(L *glua.LState, name string) bool {
	if len(s.calls) == 0 && len(s.any) == 0 {
		return false
	}
	dbg, ok := L.GetStack(1)
	if !ok {
		return false
	}
	if _, err := L.GetInfo("Sl", dbg, glua.LNil); err != nil || dbg.Source != programChunk {
		return false // a Go function (rawget is no miss), or a chunk the program loaded
	}
	at := lineName{dbg.CurrentLine, name}
	return (s.calls[at] || s.any[at.line]) && !s.reads[at]
}

// unknownBinding is what a call site finds for a name namespace ns does not
// bind: a function that raises the namespace's error.
func (r *programRun) unknownBinding(L *glua.LState, ns int, name string) *glua.LFunction {
	names := make([]string, len(r.req.Bindings[ns].Bindings))
	for j, b := range r.req.Bindings[ns].Bindings {
		names[j] = b.Name
	}
	msg := ptc.UnknownBindingMessage(name, names)
	return L.NewFunction(func(L *glua.LState) int {
		r.raise(L, ns, name, msg)
		return 0
	})
}
