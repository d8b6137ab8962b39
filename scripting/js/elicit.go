package js

import (
	"context"
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
)

// The errors of exec.elicit: its arguments, calling it on something other
// than a body's execution object (thrown), and asking once the body's call
// has settled (a rejection).
var (
	errElicitMessage = errors.New("exec.elicit(message, schema?): message must be a string")
	errElicitSchema  = errors.New("exec.elicit(message, schema?): schema must be an object")
	errElicitThis    = errors.New("exec.elicit(message, schema?): this is not a tool body's execution object")
	errElicitOver    = errors.New("exec.elicit(message, schema?): the call is over")
)

// elicit is exec.elicit(message, schema?): it puts the question to the user
// behind the body's caller (engine.Elicit under the body's ctx) off the
// loop, and returns a promise of the answer, {action, content}. The promise
// rejects with the Go error's text when asking fails, with the body's
// signal's reason when the call is cancelled meanwhile, and with
// errElicitOver when the call settled first (or had already).
func (i *instance) elicit(vm *goja.Runtime, call goja.FunctionCall) goja.Value {
	q, err := elicitArgs(vm, call.Arguments)
	if err != nil {
		throw(vm, err)
	}
	o, _ := call.This.(*goja.Object)
	l := i.liveExec(o)
	if l == nil || l.run == nil {
		if l != nil || o == nil || o.Prototype() != i.fns.bodyProto {
			throw(vm, errElicitThis)
		}
		p, _, reject := vm.NewPromise()
		_ = reject(errorObject(vm, errElicitOver))
		return vm.ToValue(p)
	}
	// The question ends with the call: its cancellation, or its settling.
	ctx, cancel := context.WithCancelCause(l.ctx)
	l.st.release = append(l.st.release, func() { cancel(errElicitOver) })
	return vm.ToValue(i.loop.Go(vm, ctx, func(ctx context.Context) (any, error) {
		return hostapi.Elicit(ctx, q)
	}, func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
		switch {
		case err == nil:
			return elicitAnswer(vm, v.(engine.ElicitResult))
		case errors.Is(context.Cause(ctx), errElicitOver):
			// The call settled first (ctx's cause says which came first).
			return nil, errElicitOver
		case l.ctx.Err() != nil:
			// Cancelled: the promise rejects with the abort, the reason
			// of the body's signal (aborted now if the loop has not done
			// it yet).
			l.st.abortSignals(vm)
			panic(i.signalReason(l.current(vm, i, l.st)))
		}
		return nil, err
	}))
}

// elicitArgs reads exec.elicit(message, schema?): message a string, schema
// undefined or an object, converted as a tool's result is.
func elicitArgs(vm *goja.Runtime, args []goja.Value) (engine.Elicitation, error) {
	arg := func(k int) goja.Value {
		if k < len(args) {
			return args[k]
		}
		return goja.Undefined()
	}
	var q engine.Elicitation
	m := arg(0)
	if !goja.IsString(m) {
		return q, errElicitMessage
	}
	q.Message = eventloop.CutText(m, engine.MaxProgressMessage)
	s := arg(1)
	if goja.IsUndefined(s) {
		return q, nil
	}
	if _, ok := s.(*goja.Object); !ok {
		return q, errElicitSchema
	}
	g, err := toGo(vm, s, "schema")
	if err != nil {
		return q, fmt.Errorf("exec.elicit(message, schema?): %w", err)
	}
	o, ok := g.(*dsl.Object)
	if !ok {
		return q, errElicitSchema
	}
	q.Schema = o
	return q, nil
}

// elicitAnswer is the value exec.elicit's promise resolves to: {action,
// content}, content the form's values for "accept" and undefined otherwise.
// Its properties are defined, not set, so no setter on Object.prototype
// sees them.
func elicitAnswer(vm *goja.Runtime, r engine.ElicitResult) (goja.Value, error) {
	content := goja.Undefined()
	if r.Action == "accept" && r.Content != nil {
		c, err := toJS(vm, r.Content)
		if err != nil {
			return nil, err
		}
		content = c
	}
	o := vm.NewObject()
	_ = o.DefineDataProperty("action", vm.ToValue(r.Action), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	_ = o.DefineDataProperty("content", content, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
	return o, nil
}

// signalReason reads an AbortSignal's reason from its internal state (an
// own, read-only property of the prelude's signals), so that no getter a
// script replaced runs; it is undefined for anything else.
func (i *instance) signalReason(signal goja.Value) goja.Value {
	o, ok := signal.(*goja.Object)
	if !ok {
		return goja.Undefined()
	}
	s, ok := o.Get("_s").(*goja.Object)
	if !ok {
		return goja.Undefined()
	}
	if r := s.Get("reason"); r != nil {
		return r
	}
	return goja.Undefined()
}

// errorObject is the Error a host function throws for err (see throw).
func errorObject(vm *goja.Runtime, err error) *goja.Object {
	e := vm.NewGoError(err)
	_ = e.Set("name", "Error")
	_ = e.Set("message", err.Error())
	return e
}
