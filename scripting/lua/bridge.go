package lua

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// invoke runs a script callback of the plugin on an instance: the pinned one
// for a key registered from a call, the least busy otherwise. spec names the
// callback and sets its deadline; run calls the script on the instance's
// goroutine and converts its result there.
//
// A tool body (spec.body) runs under the caller's ctx: when it is cancelled
// the script's signal aborts and, after the grace period, the script is
// interrupted. Every other callback (listeners, guards, renderers…) runs
// whatever the caller does, as the pipeline awaits a slow listener: the
// caller's cancellation only aborts the script's signal, and the callback's
// own deadline (spec.timeout, from when the script starts) interrupts it.
func (pl *pool) invoke(key int, ctx context.Context, spec callSpec, run func(i *instance, L *glua.LState, f *frame) (any, error)) (any, error) {
	exit, ok := pl.plugin.Enter()
	if !ok {
		return nil, scripting.ErrDisposed
	}
	defer exit()
	// A call that never started because its instance broke meanwhile (a
	// call before it was stuck and interrupted) goes to a fresh instance.
	for attempt := 1; ; attempt++ {
		v, err := pl.invokeOnce(key, ctx, spec, run)
		if !errors.Is(err, errNotStarted) || attempt == 3 {
			if errors.Is(err, errNotStarted) {
				err = fmt.Errorf("%s: %w", spec.what, err)
			}
			return v, err
		}
	}
}

func (pl *pool) invokeOnce(key int, ctx context.Context, spec callSpec, run func(i *instance, L *glua.LState, f *frame) (any, error)) (any, error) {
	// A callback other than a body runs whatever its caller does, so it
	// waits for an instance (a fresh one replacing an interrupted one, say)
	// after its caller's cancellation too: a post-execute listener's coded
	// failure after an abort stays that failure.
	getCtx := ctx
	if !spec.body {
		getCtx = context.WithoutCancel(ctx)
	}
	inst, release, err := pl.instances.Get(getCtx, key)
	if err != nil {
		return nil, err
	}
	defer release()
	return inst.do(ctx, spec, run)
}

// key records a callback under the next effect key (see hostapi.Key).
func (i *instance) key(cb glua.LValue) int {
	return hostapi.Key(i.callbacks, &i.seq, i.topDone, func() int { return i.pool.pin(i) }, cb)
}

// callback returns the function stored at key, or its field name when the
// stored value is a definition table.
func (i *instance) callback(key int, name string) (glua.LValue, *glua.LTable, error) {
	obj := i.callbacks[key]
	if obj == nil {
		return nil, nil, errGone
	}
	if name == "" {
		if !isFunction(obj) {
			return nil, nil, errors.New("the script callback is not a function")
		}
		return obj, nil, nil
	}
	t, ok := obj.(*glua.LTable)
	if !ok {
		return nil, nil, errors.New("the script definition is not a table")
	}
	fn := t.RawGetString(name)
	if !isFunction(fn) {
		return nil, nil, fmt.Errorf("%s is not a function", name)
	}
	return fn, t, nil
}

// pcall calls fn with args in protected mode and returns its first result;
// a script error comes back as a Go error (see thrown).
func (i *instance) pcall(L *glua.LState, fn glua.LValue, args ...glua.LValue) (glua.LValue, error) {
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	if err := sandbox.Call(L, len(args), 1); err != nil {
		return nil, i.thrown(err)
	}
	v := L.Get(-1)
	L.Pop(1)
	return v, nil
}

// toLua converts a Go value (lossless, as the engine hands them over) for
// the script; dsl.Undefined is nil.
func (i *instance) toLua(v any) glua.LValue {
	if _, undef := v.(dsl.Undefined); undef {
		return glua.LNil
	}
	return i.conv.ToLua(v)
}

// throw raises err in the script as an error table {name, message, code?},
// whose tostring is the message; a coded error keeps its name and code. The
// table is remembered for the current call, so that when the script lets it
// through, the Go error comes back unchanged.
func (i *instance) throw(L *glua.LState, err error) {
	t := L.CreateTable(0, 3)
	var coded engine.CodedError
	if errors.As(err, &coded) {
		t.RawSetString("name", glua.LString(coded.Name()))
		t.RawSetString("code", glua.LString(coded.Code()))
	} else {
		t.RawSetString("name", glua.LString("Error"))
	}
	t.RawSetString("message", glua.LString(err.Error()))
	t.Metatable = i.mts.err
	if f := i.current(); f != nil {
		if f.raised == nil {
			f.raised = map[*glua.LTable]error{}
		}
		f.raised[t] = err
	}
	L.Error(t, 1)
}

// positionPrefix is the "file.lua:12: " Lua puts before an error message.
var positionPrefix = regexp.MustCompile(`^([^\s:]+\.lua):(\d+): `)

// maxPositionPrefix bounds the text positionPrefix is matched against: a
// "file.lua:line: " prefix is shorter (a path of at most 4 KiB), and a
// message of megabytes without one would otherwise be scanned whole (its
// first run of characters other than spaces and ':' is a candidate file
// name): a 15 MiB message took seconds per match.
const maxPositionPrefix = 4096 + 32

// position matches positionPrefix against the head of msg: the file and
// line of a message that starts with a position, or nil.
func position(msg string) []string {
	return positionPrefix.FindStringSubmatch(msg[:min(len(msg), maxPositionPrefix)])
}

// stripPosition removes a leading "file.lua:line: " from a message.
func stripPosition(msg string) string {
	if loc := positionPrefix.FindStringIndex(msg[:min(len(msg), maxPositionPrefix)]); loc != nil {
		return msg[loc[1]:]
	}
	return msg
}

// thrown converts what a script raised into a Go error. An error table this
// host raised is its Go error again; a table with a string message is that
// message, keeping name and code as a coded error when both are strings; a
// string is itself, without the "file.lua:line: " Lua puts in front (the
// position is logged at debug level, with the traceback). A script error
// comes back as a *hostapi.Raised that says where it was raised, and whether
// the interpreter raised it (a runtime error) rather than the script (error,
// assert).
func (i *instance) thrown(err error) error {
	var ae *glua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	r := &hostapi.Raised{}
	if t, ok := ae.Object.(*glua.LTable); ok {
		for k := len(i.stack) - 1; k >= 0; k-- {
			if e, ok := i.stack[k].raised[t]; ok {
				r.Err = e
				break
			}
		}
	}
	if r.Err == nil {
		r.Err = thrownValue(ae.Object)
		i.pool.log.Debug("script error", "error", r.Err.Error(), "stack", ae.StackTrace)
	}
	if s, ok := ae.Object.(glua.LString); ok {
		if m := position(string(s)); m != nil {
			r.File = m[1]
			r.Line, _ = strconv.Atoi(m[2])
		}
		r.Fault = !i.raisedOnPurpose(string(s))
		r.Text = r.Err.Error()
	}
	if r.File == "" {
		r.File, r.Line = tracebackTop(ae.StackTrace)
	}
	return r
}

// raisedOnPurpose reports whether s, a string a script raised, is the one
// its last error() or failed assert() raised (with or without the position
// Lua puts in front), rather than one the interpreter raised.
func (i *instance) raisedOnPurpose(s string) bool {
	if !i.raisedSet {
		return false
	}
	m := i.raisedMsg
	return s == m || stripPosition(s) == m || strings.TrimPrefix(s, " ") == m
}

// noteRaise wraps the base library's error or assert so that the plugin
// remembers the message it raises (see raisedOnPurpose); the function it
// calls raises exactly as before, from the same call depth.
func (i *instance) noteRaise(f glua.LGFunction, assert bool) glua.LGFunction {
	return func(L *glua.LState) int {
		switch {
		case !assert:
			if s, ok := L.Get(1).(glua.LString); ok {
				i.raisedMsg, i.raisedSet = string(s), true
			}
		case !glua.LVAsBool(L.Get(1)):
			msg := "assertion failed!"
			if s, ok := L.Get(2).(glua.LString); ok {
				msg = string(s)
			}
			i.raisedMsg, i.raisedSet = msg, true
		}
		return f(L)
	}
}

// tracebackTop returns the file and line of the innermost Lua frame of a
// gopher-lua traceback, or "" and 0.
func tracebackTop(trace string) (string, int) {
	for _, ln := range strings.Split(trace, "\n") {
		if m := tracebackFrame.FindStringSubmatch(ln); m != nil {
			n, _ := strconv.Atoi(m[2])
			return m[1], n
		}
	}
	return "", 0
}

// thrownValue is the Go error of a raised Lua value, read without calling
// script code, each text cut to hostapi.MaxErrorText bytes (a Lua string
// is a Go string: the cut copies only the prefix).
func thrownValue(v glua.LValue) error {
	switch x := v.(type) {
	case glua.LString:
		return errors.New(hostapi.ErrorText(stripPosition(string(x))))
	case glua.LNumber:
		return errors.New(x.String())
	case *glua.LTable:
		msg, ok := x.RawGetString("message").(glua.LString)
		if !ok {
			return errors.New("(error object is a table value)")
		}
		name, nok := x.RawGetString("name").(glua.LString)
		code, cok := x.RawGetString("code").(glua.LString)
		if nok && cok && name != "" && code != "" {
			return engine.NewError(hostapi.ErrorText(string(name)), hostapi.ErrorText(string(code)), hostapi.ErrorText(string(msg)))
		}
		return errors.New(hostapi.ErrorText(string(msg)))
	}
	return fmt.Errorf("(error object is a %s value)", v.Type())
}

// callID formats a nested call id.
func callID(parent string, n int) string { return parent + ":call:" + strconv.Itoa(n) }

// what strings are built once per definition.
func toolWhat(name, part string) string {
	if part == "" {
		return fmt.Sprintf("tool %q", name)
	}
	return fmt.Sprintf("tool %q %s", name, part)
}

// policyFailure is the error of a policy of the plugin (a listener, a
// wrapper, a guard) whose call for exec failed with err: see
// hostapi.PolicyFailure.
func (pl *pool) policyFailure(ctx context.Context, what string, exec *engine.Execution, err error) error {
	return hostapi.PolicyFailure(ctx, pl.log, pl.src.Rel, what, exec, err)
}

// listenerSpec is the call spec of a non-body callback.
func (pl *pool) listenerSpec(what string) callSpec {
	return callSpec{what: what, timeout: pl.host.listenerTimeout()}
}

// noTimeout marks a tools/execute wrapper, which encloses the body and so has
// no deadline of its own.
const noTimeout time.Duration = 0
