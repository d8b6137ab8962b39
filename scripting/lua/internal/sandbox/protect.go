package sandbox

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Protected calls with bounded tracebacks.
//
// gopher-lua's PCall gives every error it catches a traceback, and its
// traceback writes one line per tail call: a frame that tail-called itself
// n times is n lines. "local function f() return f() end f()" makes some
// ten million tail calls a second, so the error that interrupts it after a
// few seconds builds a traceback of gigabytes, in Go code that no context
// stops: out of memory, fatal. The same holds for pcall around a long
// tail-call chain that ends in an error.
//
// PCall computes its traceback only for an error that has none, so the
// sandbox makes every error come with one of its own, short: each protected
// call ([Call], pcall, xpcall) runs its function through [box.protected],
// which sets the state's Panic function (the one that turns a raised Lua
// error into a Go panic) to boundedPanic for the duration of the call
// (PCall restores the previous one). xpcall calls its message handler after
// the stack is unwound rather than at the point of the error, because
// gopher-lua traces an error raised in the handler itself in full; without a
// debug library the handler cannot see the stack either way.

// maxTraceback is how many frames a traceback shows, innermost first.
const maxTraceback = 10

// boundedPanic raises the error value on top of L's stack as a Go panic
// carrying a traceback of at most maxTraceback frames.
func boundedPanic(L *lua.LState) {
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: L.Get(-1), StackTrace: traceback(L)})
}

// traceback describes the innermost frames of L's call stack like
// gopher-lua's tracebacks do, one line each ("\tplugin.lua:12: in function
// <plugin.lua:10>"), at most maxTraceback of them.
func traceback(L *lua.LState) string {
	var sb strings.Builder
	sb.WriteString("stack traceback:")
	for level := 0; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if level == maxTraceback {
			sb.WriteString("\n\t...")
			break
		}
		sb.WriteString("\n\t")
		fv, err := L.GetInfo("Slf", dbg, lua.LNil)
		fn, ok := fv.(*lua.LFunction)
		switch {
		case err != nil || !ok:
			sb.WriteString("?")
		case fn.IsG:
			sb.WriteString("[G]: in ?")
		case dbg.LineDefined == 0:
			fmt.Fprintf(&sb, "%s:%d: in main chunk", dbg.Source, dbg.CurrentLine)
		default:
			fmt.Fprintf(&sb, "%s:%d: in function <%s:%d>", dbg.Source, dbg.CurrentLine, dbg.Source, dbg.LineDefined)
		}
	}
	return sb.String()
}

// protected is the Go function through which the sandbox's protected calls
// run theirs: protected(f, ...) calls f(...) with boundedPanic as L's Panic
// and returns all its results.
//
// A Go panic that is not a Lua error (gopher-lua's "lua callstack overflow"
// is one) becomes the *lua.ApiError of type ApiErrorPanic PCall would make
// of it, with a bounded traceback too.
func protected(L *lua.LState) int {
	L.Panic = boundedPanic
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*lua.ApiError); ok {
				panic(r)
			}
			panic(&lua.ApiError{Type: lua.ApiErrorPanic, Object: lua.LString(fmt.Sprint(r)), StackTrace: traceback(L)})
		}
	}()
	L.Call(L.GetTop()-1, lua.MultRet)
	return L.GetTop()
}

// protectedCall is L.PCall(nargs, nret, nil) of the function below the
// nargs arguments on top of the stack, run through protected.
func (b *box) protectedCall(L *lua.LState, nargs, nret int) error {
	L.Insert(b.protect, L.GetTop()-nargs)
	return L.PCall(nargs+1, nret, nil)
}

// errorValue is the Lua value of an error PCall returned.
func errorValue(err error) lua.LValue {
	if ae, ok := err.(*lua.ApiError); ok {
		return ae.Object
	}
	return lua.LString(err.Error())
}

// pcall is Lua's pcall(f, ...), through protected, and then reraise.
func (b *box) pcall(L *lua.LState) int {
	L.CheckAny(1)
	v := L.Get(1)
	if v.Type() != lua.LTFunction && L.GetMetaField(v, "__call").Type() != lua.LTFunction {
		L.Push(lua.LFalse)
		L.Push(lua.LString("attempt to call a " + v.Type().String() + " value"))
		return 2
	}
	err := b.protectedCall(L, L.GetTop()-1, lua.MultRet)
	reraise(L)
	if err != nil {
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	L.Insert(lua.LTrue, 1)
	return L.GetTop()
}

// xpcall is Lua's xpcall(f, handler), through protected, with the handler
// called once the stack is unwound; then reraise.
func (b *box) xpcall(L *lua.LState) int {
	fn := L.CheckFunction(1)
	handler := L.CheckFunction(2)
	top := L.GetTop()
	L.Push(fn)
	err := b.protectedCall(L, 0, lua.MultRet)
	reraise(L)
	if err == nil {
		L.Insert(lua.LTrue, top+1)
		return L.GetTop() - top
	}
	L.Push(handler)
	L.Push(errorValue(err))
	if err := b.protectedCall(L, 1, 1); err != nil {
		reraise(L)
		L.Push(lua.LFalse)
		L.Push(errorValue(err))
		return 2
	}
	reraise(L)
	L.Insert(lua.LFalse, L.GetTop())
	return 2
}
