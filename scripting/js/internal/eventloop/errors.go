package eventloop

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/internal/textcap"
)

var (
	// ErrClosed is returned by Runs that were pending, or started, after Close.
	ErrClosed = errors.New("eventloop: closed")
	// ErrInterrupted is returned once a script ran on past the grace period
	// after its deadline or cancellation and the runtime was interrupted. The
	// Run whose deadline expired gets an error matching both ErrInterrupted
	// and its context's error; every other pending and later Run gets
	// ErrInterrupted. A Run cut short at its deadline while its script was
	// waiting gets ErrOverdue, which matches it too.
	ErrInterrupted = errors.New("eventloop: script interrupted")
	// ErrBroken is wrapped by the error of a loop broken for a reason other
	// than an interrupt: a Go panic on the loop, or an uncatchable error that
	// made goja discard its promise job queue.
	ErrBroken = errors.New("eventloop: broken")
	// ErrOrphanWork is wrapped by the stop reason of a loop whose orphan work
	// (work left by finished Runs, see Options.OrphanBudget) spent its
	// budget. It matches ErrInterrupted too: the loop interrupted the script.
	ErrOrphanWork error = orphanWorkError{}
	// ErrNotStarted is matched, besides the stop reason, by the error of a Run
	// whose fn never ran because the loop stopped first: the caller may retry
	// it elsewhere, since the script saw nothing of it.
	ErrNotStarted = errors.New("eventloop: the job never started")
)

// IsInterrupt reports whether err, a reason the loop stopped (as OnError
// and Err give it), is one the loop or its host caused rather than a fault:
// a deadline's interrupt or the orphan budget's (both ErrInterrupted), a
// [Loop.Break], or Close. A Go panic on the loop and a stack overflow that
// made goja discard its job queue are faults. Like gojaError, it never
// unwraps a *goja.Exception (which would run script code).
func IsInterrupt(err error) bool {
	switch e := err.(type) {
	case nil, *goja.Exception:
		return false
	case hostBreak:
		return true
	case interface{ Is(error) bool }:
		if e.Is(ErrInterrupted) {
			return true
		}
	case interface{ Unwrap() []error }:
		for _, err := range e.Unwrap() {
			if IsInterrupt(err) {
				return true
			}
		}
		return false
	}
	return err == ErrInterrupted || err == ErrClosed || IsInterrupt(errors.Unwrap(err))
}

// hostBreak marks the reason of a Break; its text is the reason's.
type hostBreak struct{ error }

func (e hostBreak) Unwrap() error { return e.error }

type orphanWorkError struct{}

func (orphanWorkError) Error() string {
	return "eventloop: background work left by a finished call ran past its budget"
}

func (orphanWorkError) Is(target error) bool { return target == ErrInterrupted }

// notStarted is a stop reason given to a Run that never started: its text is
// the reason's, and it matches ErrNotStarted as well.
type notStarted struct{ reason error }

func (e notStarted) Error() string      { return e.reason.Error() }
func (e notStarted) Unwrap() error      { return e.reason }
func (notStarted) Is(target error) bool { return target == ErrNotStarted }

// maxStackFrames bounds the frames formatted into JSError.Stack (a stack
// overflow captures thousands).
const maxStackFrames = 50

// unprintable is the message of a thrown value that cannot be turned into
// text without running script code.
const unprintable = "<unprintable thrown value>"

// JSError is a script error in Go form. It holds no goja value, so it may leave
// the loop.
type JSError struct {
	// Name is the error's name ("TypeError", a coded object's name), or ""
	// for a thrown primitive.
	Name string
	// Message is the error's message, or String(v) for a thrown non-Error.
	// Name, Message and a thrown object's own stack text are each cut to
	// Options.MaxErrorText bytes, marked (see CutText).
	Message string
	// Stack is "Name: Message" followed by one "\tat …" line per frame.
	Stack string
	// Value is the thrown value in Go form when Options.ThrownValue (or, for
	// primitives, the default conversion) could convert it; nil otherwise.
	Value any
}

// Error returns "Name: Message", or whichever of them is not empty.
func (e *JSError) Error() string {
	switch {
	case e.Name == "":
		return e.Message
	case e.Message == "":
		return e.Name
	}
	return e.Name + ": " + e.Message
}

// PanicError is a Go panic recovered on the loop (wrapped in ErrBroken) or in
// a Go work function (rejecting its promise).
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("eventloop: panic: %v", e.Value) }

// ScriptError converts an error returned by a goja call made on the loop into
// a form that may leave the loop: a thrown value becomes a *JSError, a stack
// overflow a *JSError RangeError, an interrupt the loop's stop reason
// (ErrInterrupted or ErrClosed). nil and other errors are returned unchanged.
// It must be called on the loop (from fn, done, a host function…).
func (l *Loop) ScriptError(vm *goja.Runtime, err error) error {
	if err == nil {
		return nil
	}
	ie, so, ex := gojaError(err)
	switch {
	case ie != nil:
		if reason := l.Err(); reason != nil {
			return reason
		}
		return ErrInterrupted
	case so != nil:
		return stackOverflow(so)
	case ex != nil:
		return l.thrown(vm, ex.Value(), ex.Stack())
	}
	return err
}

// gojaError finds the goja error in err's chain. It never calls
// (*goja.Exception).Unwrap, which runs an instanceof check (Proxy traps) and
// a property read (getters) on the thrown value: errors.As must not be used
// on chains that may hold a *goja.Exception.
func gojaError(err error) (ie *goja.InterruptedError, so *goja.StackOverflowError, ex *goja.Exception) {
	for err != nil {
		switch e := err.(type) {
		case *goja.InterruptedError:
			return e, nil, nil
		case *goja.StackOverflowError:
			return nil, e, nil
		case *goja.Exception:
			return nil, nil, e
		}
		err = errors.Unwrap(err)
	}
	return nil, nil, nil
}

// Thrown converts a thrown or rejection value into a *JSError. It must be
// called on the loop.
func (l *Loop) Thrown(vm *goja.Runtime, v goja.Value) *JSError {
	return l.thrown(vm, v, nil)
}

func stackOverflow(so *goja.StackOverflowError) *JSError {
	e := &JSError{Name: "RangeError", Message: "Maximum call stack size exceeded"}
	e.Stack = formatStack(e, so.Stack())
	return e
}

// thrown builds the JSError of v. frames, when nil, are recovered from v
// itself (goja keeps the creation frames of Error objects).
func (l *Loop) thrown(vm *goja.Runtime, v goja.Value, frames []goja.StackFrame) (e *JSError) {
	e = &JSError{}
	defer func() {
		// Reading is Go-side, but a revoked proxy or an exotic host object may
		// still throw; never let conversion of an error fail.
		if x := recover(); x != nil {
			e = &JSError{Message: unprintable}
		}
	}()
	if frames == nil && v != nil {
		if ex := vm.Try(func() { panic(v) }); ex != nil {
			frames = ex.Stack()
		}
	}
	obj, isObj := v.(*goja.Object)
	switch {
	case v == nil || goja.IsUndefined(v):
		e.Message = "undefined"
	case !isObj:
		if sym, ok := v.(*goja.Symbol); ok {
			e.Message = "Symbol(" + textcap.String(sym.String(), l.maxErrorText()) + ")"
		} else {
			e.Message = l.errorText(v)
		}
		e.Value = primitiveValue(v)
	case isProxy(obj):
		e.Message = unprintable
	case l.protoPolluted():
		// Descriptors cannot be read without running script code.
		if obj.ClassName() == "Error" {
			e.Name = "Error"
		}
		e.Message = unprintable
	default:
		isError := obj.ClassName() == "Error"
		if s, ok := l.stringProp(obj, "name"); ok {
			e.Name = s
		} else if isError {
			e.Name = "Error"
		}
		if s, ok := l.stringProp(obj, "message"); ok {
			e.Message = jsMessage(e.Name, s)
		} else if !isError {
			e.Message = "[object " + obj.ClassName() + "]"
		}
		if !isError {
			// A thrown non-Error may carry its own stack text. (An Error's
			// "stack" is not read: goja materialises it on first access by
			// formatting name and message, which may call getters.)
			if st, kind := l.ownProp(obj, "stack"); kind == propData && goja.IsString(st) {
				e.Stack = l.errorText(st)
			}
		}
	}
	if e.Stack == "" {
		e.Stack = formatStack(e, frames)
	}
	if l.opts.ThrownValue != nil && isObj {
		if gv, ok := l.opts.ThrownValue(vm, v); ok {
			e.Value = gv
		}
	}
	return e
}

func primitiveValue(v goja.Value) any {
	switch {
	case goja.IsNull(v):
		return nil
	case goja.IsString(v):
		return v.String()
	case goja.IsNumber(v):
		f := v.ToFloat()
		if math.IsNaN(f) || math.IsInf(f, 0) || (f == 0 && math.Signbit(f)) {
			return nil
		}
		return f
	}
	if b, ok := v.Export().(bool); ok {
		return b
	}
	return nil
}

// formatStack writes e's header ("Name: Message", as Error gives it) and the
// frames, skipping the loop's trampoline. The header is copied once, into a
// string grown to its final size (a message may be megabytes long).
func formatStack(e *JSError, frames []goja.StackFrame) string {
	var b bytes.Buffer
	n := 0
	for i := range frames {
		f := &frames[i]
		if f.SrcName() == EntrySource || f.FuncName() == EntrySource {
			continue
		}
		if n == maxStackFrames {
			b.WriteString("\n\t... ")
			b.WriteString(strconv.Itoa(len(frames) - i))
			b.WriteString(" more frames")
			break
		}
		b.WriteString("\n\tat ")
		f.Write(&b)
		n++
	}
	var out strings.Builder
	out.Grow(len(e.Name) + 2 + len(e.Message) + b.Len())
	switch {
	case e.Name == "":
		out.WriteString(e.Message)
	case e.Message == "":
		out.WriteString(e.Name)
	default:
		out.WriteString(e.Name)
		out.WriteString(": ")
		out.WriteString(e.Message)
	}
	out.Write(b.Bytes())
	return out.String()
}

var proxyType = reflect.TypeOf(goja.Proxy{})

// isProxy reports whether obj is a Proxy, without running a trap.
func isProxy(obj *goja.Object) bool { return obj.ExportType() == proxyType }

// hasOwnKey lists obj's own keys. Not for Error objects: listing their keys
// materialises "stack" (see thrown).
func hasOwnKey(obj *goja.Object, key string) bool {
	for _, k := range obj.GetOwnPropertyNames() {
		if k == key {
			return true
		}
	}
	return false
}

// stringProp looks key up along obj's prototype chain, reading data
// properties only: it stops (not found) at an accessor, a Proxy, or a
// non-string value, so no script code runs. The text is cut to the loop's
// bound (see errorText).
func (l *Loop) stringProp(obj *goja.Object, key string) (string, bool) {
	for o, depth := obj, 0; o != nil && depth < 64; o, depth = o.Prototype(), depth+1 {
		if isProxy(o) {
			return "", false
		}
		v, kind := l.ownProp(o, key)
		switch kind {
		case propAbsent:
			continue
		case propData:
			if goja.IsString(v) {
				return l.errorText(v), true
			}
		}
		return "", false
	}
	return "", false
}

// descriptorFields are the properties goja sets, one by one and through the
// prototype chain, on the object Object.getOwnPropertyDescriptor returns.
var descriptorFields = [...]string{"value", "writable", "get", "set", "enumerable", "configurable"}

// protoPolluted reports whether Object.prototype has an own property named
// like a descriptor field. goja builds descriptor objects with ordinary [[Set]]
// (not CreateDataProperty), so a setter there would run, and a field could be
// missing; reading descriptors is then refused.
func (l *Loop) protoPolluted() bool {
	for _, k := range l.objectProto.GetOwnPropertyNames() {
		for _, f := range descriptorFields {
			if k == f {
				return true
			}
		}
	}
	return false
}

type propKind int

const (
	propAbsent propKind = iota
	propData
	propOther // an accessor, or unreadable
)

// ownProp reads obj's own property key through the intrinsic
// Object.getOwnPropertyDescriptor, so an accessor is reported, not called.
// obj must not be a Proxy, key must not be "stack" of an Error, and
// Object.prototype must not be polluted (protoPolluted).
func (l *Loop) ownProp(obj *goja.Object, key string) (goja.Value, propKind) {
	d, err := l.gopd(goja.Undefined(), obj, l.vm.ToValue(key))
	if err != nil {
		return nil, propOther
	}
	desc, ok := d.(*goja.Object)
	if !ok {
		return nil, propAbsent
	}
	// The descriptor is a fresh plain object: "value" is own for a data
	// property; for an accessor it is absent and Get would search
	// Object.prototype, where a script may have put a getter.
	if !hasOwnKey(desc, "value") {
		return nil, propOther
	}
	return desc.Get("value"), propData
}

// rejectionValue turns a Go error into the JS value a promise rejects with: a
// thrown value is rethrown as is, anything else becomes a plain Error with the
// error's text (not a GoError, which would expose the Go value to scripts).
func (l *Loop) rejectionValue(vm *goja.Runtime, err error) goja.Value {
	if _, _, ex := gojaError(err); ex != nil && ex.Value() != nil {
		return ex.Value()
	}
	msg := err.Error()
	if o, nerr := vm.New(l.errorCtor, vm.ToValue(msg)); nerr == nil {
		return o
	}
	return vm.ToValue(msg)
}
