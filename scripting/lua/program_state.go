package lua

import (
	"errors"
	"strings"
	"sync"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/lua/internal/luavalue"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// programState is a sandboxed state built ahead of need, with nothing of
// any run in it. One run takes it and closes it.
type programState struct {
	L    *glua.LState
	conv *luavalue.Converter
	wrap *glua.LFunction // the prelude: wraps a binding's Go function
}

// preludeSrc makes a binding's Lua function from its Go function g: the
// Go function is called in no tail position, so that it can suspend the
// coroutine of a tools.gather (gopher-lua cannot resume a yield made by a
// tail-called Go function).
const preludeSrc = "local g = ... return function(a) local r = g(a) return r end"

// programPrelude is the prelude compiled once for every state; it holds no
// concatenation, so it needs none of the sandbox's rewriting.
var programPrelude = sync.OnceValues(func() (*glua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(preludeSrc), "<prelude>")
	if err != nil {
		return nil, err
	}
	return glua.Compile(chunk, "<prelude>")
})

// stringCap is the cap on the strings a program makes: the sandbox's
// default, or the output cap when it is larger, so that every completion
// the ledger holds can be made.
func (p *ProgramRuntime) stringCap() int {
	return max(sandbox.DefaultMaxStringBytes, int(p.budgets.MaxOutputBytes))
}

// newState builds a sandboxed state for one run.
func (p *ProgramRuntime) newState() (*programState, error) {
	L, err := sandbox.New(sandbox.Options{MaxStringBytes: p.stringCap()})
	if err != nil {
		return nil, err
	}
	st := &programState{L: L}
	st.conv = luavalue.New(L, luavalue.Limits{MaxBytes: max(dsl.DefaultMaxBytes, int(p.budgets.MaxOutputBytes)+1024)})
	st.conv.SetNullName("null") // the programs' name for it
	if ud, ok := st.conv.Null().(*glua.LUserData); ok {
		if mt, ok := ud.Metatable.(*glua.LTable); ok {
			mt.RawSetString("__tostring", L.NewFunction(nullString))
		}
	}
	proto, err := programPrelude()
	if err != nil {
		L.Close()
		return nil, err
	}
	st.wrap = L.NewFunctionFromProto(proto)
	return st, nil
}

// functionConstant returns a function constant of a prototype tree (the
// state's concat function), or nil when it has none.
func functionConstant(p *glua.FunctionProto) *glua.LFunction {
	todo := []*glua.FunctionProto{p}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, k := range p.Constants {
			if f, ok := k.(*glua.LFunction); ok {
				return f
			}
		}
		todo = append(todo, p.FunctionPrototypes...)
	}
	return nil
}

func nullString(L *glua.LState) int {
	L.Push(glua.LString("null"))
	return 1
}

// concatPlaceholder stands for a state's concat function in the cached
// prototypes; bindProto replaces it with the running state's.
var concatPlaceholder = &glua.LFunction{IsG: true, GFunction: func(L *glua.LState) int {
	L.RaiseError("program: an unbound concatenation")
	return 0
}}

// compile returns the program's function in st's state and its call
// sites, or the exception of its syntax error (nothing ran). A program is
// parsed and compiled by the sandbox once per text; each run gets a copy of
// the prototypes bound to its own state's concat function.
func (p *ProgramRuntime) compile(st *programState, src string) (*glua.LFunction, luaCallSites, *ptc.Failure) {
	p.cmu.Lock()
	cached, ok := p.cache[src]
	p.cmu.Unlock()
	if ok {
		if !cached.concat {
			return st.L.NewFunctionFromProto(cached.proto), cached.calls, nil
		}
		return st.L.NewFunctionFromProto(bindProto(cached.proto, concatPlaceholder, sandbox.ConcatFunction(st.L))), cached.calls, nil
	}
	fn, err := sandbox.Load(st.L, src, programChunk, 0)
	if err != nil {
		return nil, luaCallSites{}, syntaxFailure(err)
	}
	calls, err := collectLuaCallSites(src)
	if err != nil { // the sandbox parsed it: unreachable
		return nil, luaCallSites{}, syntaxFailure(err)
	}
	stored := compiled{proto: fn.Proto, calls: calls}
	if concat := functionConstant(fn.Proto); concat != nil {
		stored = compiled{proto: bindProto(fn.Proto, concat, concatPlaceholder), concat: true, calls: calls}
	}
	p.cmu.Lock()
	if len(p.cache) >= maxCachedPrograms {
		clear(p.cache)
	}
	p.cache[src] = stored
	p.cmu.Unlock()
	return fn, calls, nil
}

// compiled is a cached program: its prototypes, whether they hold
// concatPlaceholder (else they hold no function and are shared as they
// are), and its call sites.
type compiled struct {
	proto  *glua.FunctionProto
	concat bool
	calls  luaCallSites
}

// syntaxFailure is the exception of a program the sandbox refused to
// compile: the parser's message, which names the line.
func syntaxFailure(err error) *ptc.Failure {
	var ae *glua.ApiError
	if errors.As(err, &ae) {
		return ptc.ExceptionFailure(ae.Object.String())
	}
	return ptc.ExceptionFailure(err.Error())
}

// bindProto copies a prototype tree with every constant from replaced by
// to: the sandbox compiles .. as a call of a function constant of the
// state (its capped concat function), the only function constant a
// prototype has. The code, the string constants and the debug information
// are shared, read-only.
func bindProto(p *glua.FunctionProto, from, to *glua.LFunction) *glua.FunctionProto {
	type item struct {
		src *glua.FunctionProto
		dst **glua.FunctionProto
	}
	var root *glua.FunctionProto
	todo := []item{{p, &root}}
	for len(todo) > 0 {
		it := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		cp := *it.src
		cp.Constants = make([]glua.LValue, len(it.src.Constants))
		for i, k := range it.src.Constants {
			if f, ok := k.(*glua.LFunction); ok && f == from {
				k = to
			}
			cp.Constants[i] = k
		}
		if n := len(it.src.FunctionPrototypes); n > 0 {
			cp.FunctionPrototypes = make([]*glua.FunctionProto, n)
			for i, child := range it.src.FunctionPrototypes {
				todo = append(todo, item{child, &cp.FunctionPrototypes[i]})
			}
		}
		*it.dst = &cp
	}
	return root
}
