package lua

import (
	"context"
	"runtime"
	"strings"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/ptc"
)

// Messages a program's binding call raises.
const (
	msgArgsAbsent      = "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"
	msgArgsLossyPrefix = "tool arguments must be lossless JSON: "
	msgResolutionLossy = "binding resolution must be lossless JSON"
)

// Bounds of tools.gather.
const (
	// maxGatherFunctions is how many functions one tools.gather call may
	// run (each is a coroutine: a gopher-lua thread of a few KiB).
	maxGatherFunctions = 10_000
	// maxGatherDepth is how many tools.gather calls may run inside one
	// another (each is a Go call holding its threads).
	maxGatherDepth = 100
)

// The program's JSON helpers (see ProgramRuntime).
const (
	nullGlobal   = "null"
	arrayGlobal  = "array"
	objectGlobal = "object"
	gatherName   = "gather"
)

// bind installs the run's globals in its state, before any program code:
// no require, print, the JSON helpers, the error classes and the namespaces (which
// shadow a helper of the same name).
func (r *programRun) bind() error {
	L := r.L
	g := L.G.Global
	g.RawSetString("require", glua.LNil) // no module reaches a program
	g.RawSetString("print", L.NewFunction(r.print))
	g.RawSetString(nullGlobal, r.conv.Null())
	g.RawSetString(arrayGlobal, L.NewFunction(r.markArray))
	g.RawSetString(objectGlobal, L.NewFunction(r.markObject))
	r.marker = L.NewUserData()
	r.classes = make([]*glua.LTable, len(r.req.Bindings))
	for i, ns := range r.req.Bindings {
		if ns.ErrorClass == "" {
			continue
		}
		mt := L.CreateTable(0, 3)
		mt.RawSetString("__metatable", glua.LString(ns.ErrorClass))
		mt.RawSetString("__tostring", L.NewFunction(errorString))
		r.classes[i] = mt
		class := L.CreateTable(0, 1)
		class.RawSetString("is", L.NewFunction(func(L *glua.LState) int {
			t, ok := L.Get(1).(*glua.LTable)
			L.Push(glua.LBool(ok && t.Metatable == glua.LValue(mt)))
			return 1
		}))
		g.RawSetString(ns.ErrorClass, class)
	}
	gatherFn := L.NewFunction(r.gather)
	for i, ns := range r.req.Bindings {
		t := L.CreateTable(0, len(ns.Bindings))
		for _, b := range ns.Bindings {
			gofn := L.NewFunction(func(L *glua.LState) int { return r.callBinding(L, i, b) })
			L.Push(r.wrap)
			L.Push(gofn)
			if err := L.PCall(1, 1, nil); err != nil {
				return err
			}
			t.RawSetString(b.Name, L.Get(-1))
			L.Pop(1)
		}
		mt := L.CreateTable(0, 2)
		mt.RawSetString("__index", L.NewFunction(func(L *glua.LState) int {
			L.Push(r.index(L, i, gatherFn))
			return 1
		}))
		mt.RawSetString("__metatable", glua.LString(ns.Global))
		t.Metatable = mt
		g.RawSetString(ns.Global, t)
	}
	return nil
}

// index is the __index of namespace ns, for a key it does not bind: gather
// (the helper), a function raising an unknown tool's error at a call site
// (see luaCallSites), nil anywhere else.
func (r *programRun) index(L *glua.LState, ns int, gatherFn *glua.LFunction) glua.LValue {
	key, ok := L.Get(2).(glua.LString)
	switch {
	case !ok:
		return glua.LNil
	case key == gatherName:
		return gatherFn
	case r.calledAt.fetches(L, string(key)):
		return r.unknownBinding(L, ns, string(key))
	}
	return glua.LNil
}

// errorString is the __tostring of an error class: the error's message.
func errorString(L *glua.LState) int {
	t := L.CheckTable(1)
	L.Push(t.RawGetString("message"))
	return 1
}

// markArray is array(t): t (or a new table) marked as a JSON array.
func (r *programRun) markArray(L *glua.LState) int { return r.mark(L, true) }

// markObject is object(t): t (or a new table) marked as a JSON object.
func (r *programRun) markObject(L *glua.LState) int { return r.mark(L, false) }

func (r *programRun) mark(L *glua.LState, array bool) int {
	var t *glua.LTable
	switch v := L.Get(1).(type) {
	case *glua.LNilType:
		t = L.CreateTable(0, 0)
	case *glua.LTable:
		t = v
		if v.Metatable != glua.LNil && !r.conv.IsArray(v) && !r.conv.IsObject(v) {
			L.ArgError(1, "a table with a metatable cannot be marked")
		}
	default:
		L.ArgError(1, "table or nil expected")
	}
	if array {
		r.conv.MarkArray(t)
	} else {
		r.conv.MarkObject(t)
	}
	L.Push(t)
	return 1
}

// raise raises the namespace's error for a failed call of name: a table of
// its error class, or the message without one (§2.4).
func (r *programRun) raise(L *glua.LState, ns int, name, msg string) {
	L.Error(r.bindingError(L, ns, name, msg), 0)
}

func (r *programRun) bindingError(L *glua.LState, ns int, name, msg string) glua.LValue {
	mt := r.classes[ns]
	if mt == nil {
		return glua.LString(msg)
	}
	decl := r.req.Bindings[ns]
	e := L.CreateTable(0, 3)
	e.RawSetString("name", glua.LString(decl.ErrorClass))
	e.RawSetString(decl.ErrorMember, glua.LString(name))
	e.RawSetString("message", glua.LString(msg))
	e.Metatable = mt
	return e
}

// interrupted raises the end of the run: the state's context is done, so
// the sandbox reports the interruption whatever the program does with it.
func (r *programRun) interrupted(L *glua.LState) {
	L.RaiseError("%s", r.calls.Err().Error())
}

// pending is a binding call submitted by a gathered function, waited for
// by its gather.
type pending struct {
	ns   int
	name string
	wait func(ctx context.Context) (any, error) // Start's
	done chan outcome                           // or Call's, on a goroutine of its own
}

type outcome struct {
	v   any
	err error
}

// gather is one tools.gather call: the state running it, whose resumes of
// its threads make them its own.
type gather struct {
	L *glua.LState
}

// callBinding is a call of binding b of namespace ns: the argument
// converted Go-side (refused before any dispatch when it is not lossless
// JSON), the call made, its value converted back or its error raised.
// Called by a function that tools.gather runs, it submits the call and
// suspends the function's coroutine when it can (see yieldable); otherwise
// it blocks the program, never the engine, until the call settles.
func (r *programRun) callBinding(L *glua.LState, ns int, b ptc.Binding) int {
	arg := L.Get(1)
	if arg == glua.LNil {
		r.raise(L, ns, b.Name, msgArgsAbsent)
	}
	args, err := r.conv.ToGo(arg, "args", nil)
	if err != nil {
		r.raise(L, ns, b.Name, msgArgsLossyPrefix+err.Error())
	}
	ctx := r.calls
	if ctx.Err() != nil {
		r.interrupted(L)
	}
	if g := r.gathers[L]; g != nil && L.Parent == g.L && yieldable() {
		p := &pending{ns: ns, name: b.Name}
		if b.Start != nil {
			wait, err := b.Start(ctx, args)
			if err != nil {
				r.raise(L, ns, b.Name, err.Error())
			}
			p.wait = wait
		} else {
			p.done = make(chan outcome, 1)
			r.inFlight.Add(1)
			go func() {
				defer r.inFlight.Done()
				v, err := b.Call(ctx, args)
				p.done <- outcome{v, err}
			}()
		}
		if r.pending == nil {
			r.pending = make(map[*glua.LState]*pending)
		}
		r.pending[L] = p
		return L.Yield(r.marker)
	}
	var v any
	r.pause()
	if b.Start != nil {
		var wait func(context.Context) (any, error)
		if wait, err = b.Start(ctx, args); err == nil {
			v, err = wait(ctx)
		}
	} else {
		v, err = b.Call(ctx, args)
	}
	r.resume()
	lv := r.settle(L, ns, b.Name, v, err)
	L.Push(lv)
	return 1
}

// settle is the Lua value of a call's outcome, or raises its error (or the
// run's end).
func (r *programRun) settle(L *glua.LState, ns int, name string, v any, err error) glua.LValue {
	if r.calls.Err() != nil {
		r.interrupted(L)
	}
	if err != nil {
		r.raise(L, ns, name, err.Error())
	}
	lv, cerr := r.conv.TryToLua(v)
	if cerr != nil {
		r.raise(L, ns, name, msgResolutionLossy)
	}
	return lv
}

// await waits for a pending call's outcome, as busy time's pause.
func (r *programRun) await(p *pending) (any, error) {
	r.pause()
	defer r.resume()
	if p.wait != nil {
		return p.wait(r.calls)
	}
	select {
	case o := <-p.done:
		return o.v, o.err
	case <-r.calls.Done():
		return nil, context.Cause(r.calls)
	}
}

// yieldable reports whether the Go function calling it (a binding's) was
// called by Lua code that its thread's outermost interpreter loop runs:
// then returning L.Yield suspends the thread where the call is. Under a Go
// call that runs Lua code (pcall, xpcall, a metamethod, a table.sort
// comparator, a gsub callback), gopher-lua would unwind the wrong loop, so
// the call must block instead.
func yieldable() bool {
	var pcs [48]uintptr
	n := runtime.Callers(3, pcs[:]) // from the binding's caller
	frames := runtime.CallersFrames(pcs[:n])
	loops := 0
	for {
		f, more := frames.Next()
		name := f.Function
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		switch name {
		case "gopher-lua.threadRun":
			return loops == 1
		case "gopher-lua.mainLoop", "gopher-lua.mainLoopWithContext":
			loops++
		}
		if !more {
			return false
		}
	}
}

// gather is tools.gather(f1, f2, ...): each function runs as a coroutine,
// in order, until it ends or makes a tool call; the calls so made are
// submitted at once and waited for in submission order, each resuming its
// coroutine with its value. Like Promise.all it returns one table, marked
// as a JSON array: each function's first result, in order, null for a
// function that returned nothing (or nil). Or it raises the first error a
// function raised (a failed call in a coroutine is raised there: it is that
// function's error); the other functions are then abandoned.
func (r *programRun) gather(L *glua.LState) int {
	n := L.GetTop()
	if n > maxGatherFunctions {
		L.RaiseError("tools.gather: too many functions (the limit is %d)", maxGatherFunctions)
	}
	fns := make([]*glua.LFunction, n)
	for i := range fns {
		f, ok := L.Get(i + 1).(*glua.LFunction)
		if !ok {
			L.ArgError(i+1, "function expected")
		}
		fns[i] = f
	}
	if r.depth >= maxGatherDepth {
		L.RaiseError("tools.gather: too many gathers inside one another (the limit is %d)", maxGatherDepth)
	}
	r.depth++
	defer func() { r.depth-- }()
	if r.gathers == nil {
		r.gathers = make(map[*glua.LState]*gather)
	}
	g := &gather{L: L}
	threads := make([]*glua.LState, n)
	results := make([]glua.LValue, n)
	defer func() {
		for _, th := range threads {
			if th != nil {
				delete(r.gathers, th)
				delete(r.pending, th)
			}
		}
	}()
	type waiting struct {
		i int
		p *pending
	}
	var queue []waiting
	// step resumes thread i (starting it without args) and records how it
	// stopped; it raises the thread's error.
	step := func(i int, args ...glua.LValue) {
		th := threads[i]
		if ctx := L.Context(); ctx != nil && th.Context() != ctx {
			th.SetContext(ctx)
		}
		st, err, vals := L.Resume(th, fns[i], args...)
		if r.calls.Err() != nil {
			r.interrupted(L)
		}
		switch st {
		case glua.ResumeError:
			raiseAgain(L, err)
		case glua.ResumeOK:
			results[i] = glua.LNil
			if len(vals) > 0 {
				results[i] = vals[0]
			}
		default:
			p := r.pending[th]
			delete(r.pending, th)
			if p == nil || len(vals) == 0 || vals[0] != glua.LValue(r.marker) {
				L.RaiseError("tools.gather: function #%d yielded outside a tool call", i+1)
			}
			queue = append(queue, waiting{i, p})
		}
	}
	for i := range fns {
		th := newThread(L)
		threads[i] = th
		r.gathers[th] = g
		step(i)
	}
	for len(queue) > 0 {
		w := queue[0]
		queue[0] = waiting{}
		queue = queue[1:]
		v, err := r.await(w.p)
		lv := r.settle(L, w.p.ns, w.p.name, v, err)
		step(w.i, lv)
	}
	out := L.CreateTable(n, 0)
	for _, v := range results {
		if v == glua.LNil {
			v = r.conv.Null() // a function that returned nothing: null keeps the sequence whole
		}
		out.Append(v)
	}
	r.conv.MarkArray(out)
	L.Push(out)
	return 1
}

// newThread makes a thread of L without a context: gopher-lua would give
// it a child context of L's that stays registered with the run's until the
// run ends (a leak per thread). It gets its resumer's context at each
// resume instead.
func newThread(L *glua.LState) *glua.LState {
	if ctx := L.Context(); ctx != nil {
		L.RemoveContext()
		defer L.SetContext(ctx)
	}
	th, _ := L.NewThread()
	return th
}

// raiseAgain raises in L the error value a coroutine raised.
func raiseAgain(L *glua.LState, err error) {
	if ae, ok := err.(*glua.ApiError); ok {
		L.Error(ae.Object, 0)
	}
	L.RaiseError("%s", err.Error())
}

// print is the log channel (§3.4): one entry per call, the arguments
// converted by tostring's rules and joined with a tab. An entry over the
// output cap ends the run as output-limit; it is cut a little past the cap,
// which is all the result may keep of it.
func (r *programRun) print(L *glua.LState) int {
	n := L.GetTop()
	limit := int(r.ledger.Cap()) + 8
	var sb strings.Builder
	for i := 1; i <= n && sb.Len() <= limit; i++ {
		if i > 1 {
			sb.WriteByte('\t')
		}
		sb.WriteString(r.tostring(L, L.Get(i)))
	}
	entry := sb.String()
	if len(entry) > limit {
		entry = entry[:limit]
	}
	if r.req.OnLog != nil {
		r.req.OnLog(entry)
	}
	if !r.ledger.Log(entry) {
		r.stop(ptc.OutputLimitFailure(r.ledger.Cap()))
		r.interrupted(L)
	}
	return 0
}

// tostring is Lua's tostring, read without the program's globals: null is
// "null", an error of a class its message, and a value with a __tostring
// metamethod what it returns (the metamethod runs inside the run, like any
// program code).
func (r *programRun) tostring(L *glua.LState, v glua.LValue) string {
	switch x := v.(type) {
	case glua.LString:
		return string(x)
	case glua.LNumber, glua.LBool, *glua.LNilType:
		return x.String()
	case *glua.LUserData:
		if r.conv.IsNull(x) {
			return "null"
		}
	case *glua.LTable:
		if r.isError(x) {
			if m, ok := x.RawGetString("message").(glua.LString); ok {
				return string(m)
			}
		}
	}
	s := L.ToStringMeta(v)
	if str, ok := s.(glua.LString); ok {
		return string(str)
	}
	L.RaiseError("'__tostring' must return a string")
	return ""
}

// isError reports whether t is an error of one of the run's classes.
func (r *programRun) isError(t *glua.LTable) bool {
	for _, mt := range r.classes {
		if mt != nil && t.Metatable == glua.LValue(mt) {
			return true
		}
	}
	return false
}

// render is the message of a value the program raised and let through,
// read without calling program code (the run is over): a string is itself
// (with the "program.lua:<line>: " of error's level 1), a number, a boolean
// or nil its tostring, null "null", an error of a class "<class>:
// <message>", a plain table with a string message field that message. Any
// other value is unrenderable.
func (r *programRun) render(v glua.LValue) (string, bool) {
	switch x := v.(type) {
	case glua.LString:
		return string(x), true
	case glua.LNumber, glua.LBool, *glua.LNilType:
		return x.String(), true
	case *glua.LUserData:
		if r.conv.IsNull(x) {
			return "null", true
		}
	case *glua.LTable:
		msg, ok := x.RawGetString("message").(glua.LString)
		switch {
		case !ok:
		case r.isError(x):
			name, _ := x.RawGetString("name").(glua.LString)
			return string(name) + ": " + string(msg), true
		case x.Metatable == glua.LNil:
			return string(msg), true
		}
	}
	return "", false
}

// isOverflow reports whether a gopher-lua panic's message is one of its
// stack overflows, which a runaway recursion causes.
func isOverflow(msg string) bool {
	return strings.Contains(msg, "callstack overflow") || strings.Contains(msg, "registry overflow") ||
		strings.Contains(msg, "stack overflow")
}
