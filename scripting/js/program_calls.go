package js

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// A program's call of a name its namespace does not bind (tools.nope({}))
// fails as a call of that namespace does: a rejected promise of its error
// class, `unknown tool "nope"` with the closest bound names. A read of the
// same name (typeof tools.nope, tools["nope"] === undefined, const {nope} =
// tools) still finds nothing, and "nope" in tools and Object.keys(tools)
// are as they were: only a call fails. JavaScript cannot tell the two
// apart, so the namespace is a Proxy whose get trap (Go, calling no program
// code) tells them apart by where the program is: a miss at a place where
// the compiled program fetches a callee returns a function that rejects;
// a miss anywhere else is undefined.
//
// goja maps the instruction that fetches a call's callee (tools.nope in
// tools.nope(args)) to the source position of its object, tools, and a
// plain read to the position of its member name (nope, or the [ of
// tools["nope"]), so the positions tell a call from a read even within
// one expression (tools.nope.x() reads nope and calls x). The calls
// recognised are those whose callee is o.name, o["literal"] or o[variable]
// with o a name (tools, or an alias of it) or itself o2.name (this.tools);
// any other shape keeps goja's TypeError. An optional call
// (tools.nope?.()) is a read: it gives undefined, as the program asked.

// callSite is a source position where the program fetches a callee.
type callSite struct{ line, column int }

// callee is what a call site fetches: a member name, or any member (a
// computed one).
type callee struct {
	names []string
	any   bool
}

// callSites are a compiled program's call sites.
type callSites map[callSite]*callee

// collectCallSites finds the call sites of a parsed program.
func collectCallSites(prog *ast.Program) callSites {
	sites := callSites{}
	add := func(at file.Idx, name string, anyName bool) {
		if at <= 0 {
			return
		}
		p := prog.File.Position(int(at) - 1)
		s := callSite{p.Line, p.Column}
		c := sites[s]
		if c == nil {
			c = &callee{}
			sites[s] = c
		}
		if anyName {
			c.any = true
		} else {
			c.names = append(c.names, name)
		}
	}
	// A function's DeclarationList repeats declarations its body holds.
	hostapi.WalkTree(prog, func(n any) {
		call, ok := n.(*ast.CallExpression)
		if !ok {
			return
		}
		switch c := call.Callee.(type) {
		case *ast.DotExpression:
			add(objectIdx(c.Left), string(c.Identifier.Name), false)
		case *ast.BracketExpression:
			switch m := c.Member.(type) {
			case *ast.StringLiteral:
				add(objectIdx(c.Left), string(m.Value), false)
			case *ast.Identifier:
				// The member's value is fetched last: its position is
				// the callee's.
				add(m.Idx0(), "", true)
			}
		}
	}, "DeclarationList", "File")
	return sites
}

// objectIdx is where goja places the fetch of a member of e: e's own
// position for a name, its member name's for a dotted expression, 0 (none)
// for any other shape.
func objectIdx(e ast.Expression) file.Idx {
	switch o := e.(type) {
	case *ast.Identifier:
		return o.Idx0()
	case *ast.DotExpression:
		return o.Identifier.Idx0()
	}
	return 0
}

// fetches reports whether the program's innermost frame is at a call site
// fetching name.
func (s callSites) fetches(vm *goja.Runtime, name string) bool {
	if len(s) == 0 {
		return false
	}
	var buf [1]goja.StackFrame
	frames := vm.CaptureCallStack(1, buf[:0])
	if len(frames) == 0 || frames[0].SrcName() != programPath {
		return false // a native (Reflect.get) reads; it calls nothing
	}
	p := frames[0].Position()
	c := s[callSite{p.Line, p.Column}]
	if c == nil {
		return false
	}
	if c.any {
		return true
	}
	for _, n := range c.names {
		if n == name {
			return true
		}
	}
	return false
}

// unknownBinding is what a call site finds for a name namespace i does
// not bind: a function that rejects with the namespace's error.
func (r *programRun) unknownBinding(vm *goja.Runtime, i int, name string) goja.Value {
	names := make([]string, len(r.req.Bindings[i].Bindings))
	for j, b := range r.req.Bindings[i].Bindings {
		names[j] = b.Name
	}
	msg := ptc.UnknownBindingMessage(name, names)
	return native(vm, name, 1, func(goja.FunctionCall) goja.Value {
		p, _, reject := vm.NewPromise()
		_ = reject(r.bindingError(vm, i, name, msg))
		return vm.ToValue(p)
	})
}
