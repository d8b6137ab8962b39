package js

import (
	"context"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/engine"
)

// The plain decisions boxed once: the rest of a chain that lets the call
// through answers one of them almost every time, and boxing a decision
// into an any allocates. They are never written.
var (
	boxedAllow  any = engine.Allow()
	boxedAccept any = engine.Accept()
)

// boxPre is d as an any, without allocating for the plain allow.
func boxPre(d engine.PreDecision) any {
	if d == engine.Allow() {
		return boxedAllow
	}
	return d
}

// boxPost is d as an any, without allocating for the plain accept.
func boxPost(d engine.PostDecision) any {
	if plainKind(d) == "accept" && d.Content == nil && d.Value == nil {
		return boxedAccept
	}
	return d
}

// chainNext makes a pre-execute (post false) or post-execute listener's
// next(): a function returning a promise that settles with what the rest
// of the chain (work) decides. The caller waits for the chain, and may run
// work itself once the listener's entry is over (eventloop GoInline).
//
// When the engine can tell, without running anything, what the rest of the
// chain decides (it is empty), next() returns a promise already settled
// with that answer instead: for the plain allow and accept, one made once
// per instance (see plainSettled).
//
// It is goNext for the two chains, with the parts every call shares (how
// to settle) made once per instance, so a listener's next() costs one
// native function and its closure.
func (i *instance) chainNext(vm *goja.Runtime, ctx context.Context, exec *engine.Execution, post bool, work func(context.Context) (any, error)) goja.Value {
	return vm.ToValue(func(goja.FunctionCall) goja.Value {
		settle := i.chainSettle(post)
		var v any
		var ok bool
		if post {
			var d engine.PostDecision
			if d, ok = engine.EndPostChain(exec); ok {
				v = boxPost(d)
			}
		} else {
			var d engine.PreDecision
			if d, ok = engine.EndPreChain(exec); ok {
				v = boxPre(d)
			}
		}
		if ok {
			if p := i.plainSettled(vm, v); p != nil {
				return p
			}
			p, resolve, reject := vm.NewPromise()
			if r, err := settle(vm, v, nil); err != nil {
				_ = reject(err)
			} else {
				_ = resolve(r)
			}
			return vm.ToValue(p)
		}
		return vm.ToValue(i.loop.GoInline(vm, ctx, work, settle))
	})
}

// chainSettle is how a pre-execute (post false) or post-execute listener's
// next() settles with the decision the rest of its chain made, made once
// per instance.
func (i *instance) chainSettle(post bool) func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
	c := &i.caches
	if post {
		if c.postSettle == nil {
			c.postSettle = func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
				if err != nil {
					return nil, i.rethrow(vm, err)
				}
				return i.postDecisionJS(vm, v.(engine.PostDecision))
			}
		}
		return c.postSettle
	}
	if c.preSettle == nil {
		c.preSettle = func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
			if err != nil {
				return nil, i.rethrow(vm, err)
			}
			return i.preDecisionJS(vm, v.(engine.PreDecision))
		}
	}
	return c.preSettle
}
