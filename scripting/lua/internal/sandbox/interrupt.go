package sandbox

import (
	"context"

	lua "github.com/yuin/gopher-lua"
)

// Interruption by a context.
//
// gopher-lua checks an LState's context before every VM instruction once
// SetContext gave it one (and not at all otherwise), and raises the
// context's error as an ordinary Lua error. Left alone, three things would
// let a script survive or dodge it; the sandbox closes each:
//
//   - pcall and xpcall catch that error like any other. The next
//     instruction raises it again, except when the pcall is the last thing
//     the script does before returning to Go ("return pcall(spin)"), where
//     the host would see a success. The sandbox's pcall and xpcall re-raise
//     it themselves, outside their protection, whenever the context is done
//     when they return; so does coroutine.resume, which also reports errors
//     as values.
//   - A coroutine checks the context its thread was given when created,
//     forever: one created while no context was set would never be
//     interrupted, one created during an earlier call would be interrupted
//     by that call's context. coroutine.resume and the functions
//     coroutine.wrap returns set the resumer's current context on the
//     thread before resuming it.
//   - Go code runs no instructions: the sandbox's pattern functions check
//     the context as they go (see Options.MaxPatternSteps).

// Interruptible sets ctx as L's context, so that running Lua code stops with
// a Lua error once ctx is done, and returns a function that restores L's
// previous context. When ctx can never be done (ctx.Done() is nil, as for
// context.Background), it removes L's context instead: gopher-lua then skips
// the per-instruction check. Typical use, around each call into the state:
//
//	defer sandbox.Interruptible(L, ctx)()
func Interruptible(L *lua.LState, ctx context.Context) (restore func()) {
	prev := L.Context()
	if ctx == nil || ctx.Done() == nil {
		L.RemoveContext()
	} else {
		L.SetContext(ctx)
	}
	return func() {
		if prev == nil {
			L.RemoveContext()
		} else {
			L.SetContext(prev)
		}
	}
}

// InterruptedError is the error of a call that L's context interrupted.
type InterruptedError struct {
	Err error // the context's error: context.Canceled or context.DeadlineExceeded
	Lua error // what the call returned, nil if a script swallowed the interruption
}

func (e *InterruptedError) Error() string { return "interrupted: " + e.Err.Error() }

// Unwrap returns the context's error.
func (e *InterruptedError) Unwrap() error { return e.Err }

// Call is L.PCall(nargs, nret, nil) that tells an interruption apart: when
// L's context is done by the time the call returns, it drops the call's
// results and returns an *InterruptedError wrapping the context's error
// (errors.Is(err, context.DeadlineExceeded) holds), whatever the script did
// with the Lua error on the way.
//
// In a state [New] made, Call runs the function with a bounded traceback
// (see [box.protected]), and a call made while no Lua code runs in L (a call
// from the host, not one nested in a script's call of a host function)
// starts a new budget of coroutines (Options.MaxCoroutines).
func Call(L *lua.LState, nargs, nret int) error {
	base := L.GetTop() - nargs - 1
	var err error
	if b := boxOf(L); b != nil {
		if _, running := L.GetStack(0); !running {
			b.coroutines = 0
		}
		err = b.protectedCall(L, nargs, nret)
	} else {
		err = L.PCall(nargs, nret, nil)
	}
	if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
		L.SetTop(max(base, 0))
		return &InterruptedError{Err: ctx.Err(), Lua: err}
	}
	return err
}

// reraise raises L's context's error, if its context is done.
func reraise(L *lua.LState) {
	if ctx := L.Context(); ctx != nil {
		if err := ctx.Err(); err != nil {
			L.RaiseError("%s", err.Error())
		}
	}
}

// syncContext gives the thread th the context of the resuming state L.
func syncContext(th, L *lua.LState) {
	ctx := L.Context()
	switch {
	case ctx == nil:
		if th.Context() != nil {
			th.RemoveContext()
		}
	case th.Context() != ctx:
		th.SetContext(ctx)
	}
}

// maxResumeDepth bounds coroutines resumed inside one another: each is a Go
// call holding a thread (Lua 5.1 stops at 200 nested C calls likewise).
const maxResumeDepth = 200

// enterResume counts a nested resume, refusing one too many; the caller
// defers leaveResume.
func (b *box) enterResume(L *lua.LState) {
	if b.resumeDepth >= maxResumeDepth {
		L.RaiseError("too many nested coroutines (the limit is %d)", maxResumeDepth)
	}
	b.resumeDepth++
}

func (b *box) leaveResume() { b.resumeDepth-- }

// resume is coroutine.resume giving the thread the resumer's context first,
// then reraise.
func (b *box) resume(call lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		syncContext(L.CheckThread(1), L)
		b.enterResume(L)
		defer b.leaveResume()
		n := call(L)
		reraise(L)
		return n
	}
}

// countCoroutine counts a coroutine made by the current call, refusing one
// over Options.MaxCoroutines.
func (b *box) countCoroutine(L *lua.LState) {
	if b.coroutines >= b.opts.MaxCoroutines {
		L.RaiseError("too many coroutines (the limit is %d per call)", b.opts.MaxCoroutines)
	}
	b.coroutines++
}

// withoutContext runs fn, which makes a coroutine, with L's context
// removed: gopher-lua gives a thread made under a context a child context
// that stays registered with its parent (the instance's, which lives as long
// as the state) until the parent ends, a leak per coroutine. The thread gets
// its resumer's context at each resume instead (see syncContext).
func withoutContext(L *lua.LState, fn lua.LGFunction) int {
	if ctx := L.Context(); ctx != nil {
		L.RemoveContext()
		defer L.SetContext(ctx)
	}
	return fn(L)
}

// create is coroutine.create, counted by countCoroutine and made without a
// context.
func (b *box) create(call lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		L.CheckFunction(1)
		b.countCoroutine(L)
		return withoutContext(L, call)
	}
}

// wrap is coroutine.wrap, counted by countCoroutine and made without a
// context, returning a function that gives the thread the caller's context
// before resuming it.
func (b *box) wrap(call lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		top := L.GetTop()
		L.CheckFunction(1)
		b.countCoroutine(L)
		withoutContext(L, call)
		inner, ok := L.Get(-1).(*lua.LFunction)
		if !ok || !inner.IsG || len(inner.Upvalues) == 0 {
			L.RaiseError("sandbox: unexpected coroutine.wrap")
		}
		th, ok := inner.Upvalues[0].Value().(*lua.LState)
		if !ok {
			L.RaiseError("sandbox: unexpected coroutine.wrap")
		}
		L.SetTop(top)
		// The inner function reads the thread from upvalue 1 of the running
		// function, so the outer one keeps it there too.
		L.Push(L.NewClosure(b.wrapped, th, inner))
		return 1
	}
}

// wrapped is the function coroutine.wrap returns: upvalue 1 is the thread,
// upvalue 2 gopher-lua's own wrapper function.
func (b *box) wrapped(L *lua.LState) int {
	th := L.ToThread(lua.UpvalueIndex(1))
	inner, _ := L.Get(lua.UpvalueIndex(2)).(*lua.LFunction)
	if th == nil || inner == nil {
		L.RaiseError("sandbox: broken coroutine.wrap function")
	}
	syncContext(th, L)
	b.enterResume(L)
	defer b.leaveResume()
	n := inner.GFunction(L)
	reraise(L)
	return n
}
