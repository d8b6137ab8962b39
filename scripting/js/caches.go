package js

import (
	"weak"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// caches are an instance's conversions that calls share (loop-owned): every
// value in them is frozen, so a script cannot tell a shared one from a
// fresh one except by identity, which the spec leaves open.
type caches struct {
	// agents are the agents' frozen {id, parent} objects, keyed weakly:
	// an engine.Agent never changes, and the same ones come every call.
	agents      map[weak.Pointer[engine.Agent]]goja.Value
	agentsSwept int

	// caller is the last verified caller converted for exec.caller, and
	// its frozen object: the calls of one served request share one
	// engine.Caller, which never changes.
	caller   *engine.Caller
	callerJS goja.Value

	// callID is the last call id made a JavaScript string, and that
	// string: every stage of a call in the instance has the same.
	callID   string
	callIDJS goja.Value

	// names are tool names as JavaScript strings (bounded, see nameValue).
	names map[string]goja.Value

	// lastResult is the last result converted for a post-execute listener
	// or a tools/result observer, and its frozen object (see resultValue).
	lastResult   *engine.Result
	lastResultJS goja.Value

	// plain are the frozen {kind: "allow"} and {kind: "accept"} objects the
	// end of a chain settles next() with, by kind (see plainDecision).
	plain map[string]*plainDecision

	// preSettle and postSettle settle a pre- or post-execute listener's
	// next() with the decision the rest of its chain made (see chainNext).
	preSettle, postSettle func(vm *goja.Runtime, v any, err error) (goja.Value, error)

	// callables are the callbacks' functions by key (see callable),
	// dropped with their keys (see forget).
	callables map[int][]callable
}

// maxNames bounds caches.names: tool names come from the model.
const maxNames = 64

// plainDecision is a plain allow or accept decision as the script sees it:
// its frozen object and the Go decision that object reads as.
type plainDecision struct {
	value *goja.Object
	pre   engine.PreDecision
	post  engine.PostDecision
	boxed any // pre or post, as an any made once
}

// cache returns the instance's caches.
func (i *instance) cache(*goja.Runtime) *caches { return &i.caches }

// agentObject is the frozen {id, parent} object of a, the same object for
// the same agent.
func (i *instance) agentObject(vm *goja.Runtime, a *engine.Agent) goja.Value {
	c := i.cache(vm)
	if v, ok := c.agents[weak.Make(a)]; ok {
		return v
	}
	v, err := i.toJS(vm, hostapi.AgentJSON(a))
	if err != nil {
		return goja.Undefined() // as before: an agent id that is not valid UTF-8
	}
	if c.agents == nil {
		c.agents = map[weak.Pointer[engine.Agent]]goja.Value{}
	}
	hostapi.SetWeak(c.agents, &c.agentsSwept, a, v)
	return v
}

// callerObject is exec.caller for c: the frozen {subject, clientId,
// scopes} object with a frozen scopes array, the same object while the same
// caller comes again.
func (i *instance) callerObject(vm *goja.Runtime, c *engine.Caller) (goja.Value, error) {
	cc := i.cache(vm)
	if cc.caller == c && cc.callerJS != nil {
		return cc.callerJS, nil
	}
	v, err := i.toJS(vm, hostapi.CallerJSON(c))
	if err != nil {
		return nil, err
	}
	cc.caller, cc.callerJS = c, v
	return v, nil
}

// nameValue is name as a JavaScript string, shared between calls.
func (i *instance) nameValue(vm *goja.Runtime, name string) goja.Value {
	c := i.cache(vm)
	if v, ok := c.names[name]; ok {
		return v
	}
	if c.names == nil || len(c.names) >= maxNames {
		c.names = map[string]goja.Value{}
	}
	v := vm.ToValue(name)
	c.names[name] = v
	return v
}

// callIDValue is id as a JavaScript string, shared by the stages of a call.
func (i *instance) callIDValue(vm *goja.Runtime, id string) goja.Value {
	c := i.cache(vm)
	if c.callIDJS == nil || c.callID != id {
		c.callID, c.callIDJS = id, vm.ToValue(id)
	}
	return c.callIDJS
}

// resultValue converts r for a post-execute listener or a tools/result
// observer: the frozen object is shared by every one of them in the
// instance that sees the same result (the engine never changes a result it
// handed over; it copies one to change it).
func (i *instance) resultValue(vm *goja.Runtime, r *engine.Result) (goja.Value, error) {
	c := i.cache(vm)
	if r == c.lastResult && c.lastResultJS != nil {
		return c.lastResultJS, nil
	}
	v, err := i.toJS(vm, r.JSON())
	if err != nil {
		return nil, err
	}
	c.lastResult, c.lastResultJS = r, v
	return v, nil
}

// plainKind is "allow" or "accept" for the plain allow and accept decisions
// (no field set), else "".
func plainKind(v any) string {
	switch d := v.(type) {
	case engine.PreDecision:
		if d == engine.Allow() {
			return "allow"
		}
	case engine.PostDecision:
		if d.Kind == engine.PostAccept && !d.HasContent && !d.HasValue && d.Feedback == nil && d.AdditionalContexts == nil {
			return "accept"
		}
	}
	return ""
}

// plainDecision returns the plain decision of kind ("allow" or "accept"),
// made once per instance, or nil if it could not be made.
func (i *instance) plainDecision(vm *goja.Runtime, kind string) *plainDecision {
	c := i.cache(vm)
	if p := c.plain[kind]; p != nil {
		return p
	}
	g := dsl.NewObject(dsl.Member{Key: "kind", Value: kind})
	v, err := i.toJS(vm, g)
	if err != nil {
		return nil
	}
	o, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	p := &plainDecision{value: o}
	// The Go decision is what reading the object back gives.
	switch kind {
	case "allow":
		p.pre, err = scripting.ReadPreDecision(g)
	case "accept":
		p.post, err = scripting.ReadPostDecision(g)
	}
	if err != nil {
		return nil
	}
	if kind == "allow" {
		p.boxed = p.pre
	} else {
		p.boxed = p.post
	}
	if c.plain == nil {
		c.plain = map[string]*plainDecision{}
	}
	c.plain[kind] = p
	return p
}

// preDecisionJS converts the decision the rest of a pre-execute chain made,
// sharing the plain allow object.
func (i *instance) preDecisionJS(vm *goja.Runtime, d engine.PreDecision) (goja.Value, error) {
	if plainKind(d) == "allow" {
		if p := i.plainDecision(vm, "allow"); p != nil {
			return p.value, nil
		}
	}
	return i.toJS(vm, scripting.PreDecisionJSON(d))
}

// postDecisionJS is preDecisionJS for post-execute chains and accept.
func (i *instance) postDecisionJS(vm *goja.Runtime, d engine.PostDecision) (goja.Value, error) {
	if plainKind(d) == "accept" {
		if p := i.plainDecision(vm, "accept"); p != nil {
			return p.value, nil
		}
	}
	return i.toJS(vm, scripting.PostDecisionJSON(d))
}

// readPlain returns the Go decision of v when v is the instance's plain
// decision object of kind, which a pass-through listener hands back as
// next() settled it: it is frozen, so reading it again gives the same.
func (i *instance) readPlain(vm *goja.Runtime, kind string, v goja.Value) (*plainDecision, bool) {
	o, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	p := i.cache(vm).plain[kind]
	if p == nil || p.value != o {
		return nil, false
	}
	return p, true
}

// callable is a script callback's function as found by callback: the
// object stored at its key, the function value (that object, or one of its
// properties), and the Callable goja made for it.
type callable struct {
	name string
	obj  *goja.Object
	v    *goja.Object
	fn   goja.Callable
}

// callable is callback, remembering the Callable of each key and property
// (goja.AssertFunction allocates every time; see assertCached).
func (i *instance) callable(key int, name string) (goja.Callable, *goja.Object, error) {
	obj := i.callbacks[key]
	if obj == nil {
		return i.callback(key, name)
	}
	v := obj
	if name != "" {
		v, _ = obj.Get(name).(*goja.Object)
	}
	fn, ok := i.assertCached(key, name, obj, v)
	if !ok {
		return i.callback(key, name)
	}
	return fn, obj, nil
}

// assertCached is goja.AssertFunction(v) for the function v found as name
// (a path from the object obj a key stores, "" for obj itself), remembered
// by key and name: a remembered Callable is used only while obj and v are
// the same objects, so a script that replaces output.render, or an effect
// key reused after a failed on(), gets what AssertFunction would give.
func (i *instance) assertCached(key int, name string, obj, v *goja.Object) (goja.Callable, bool) {
	if v == nil {
		return nil, false
	}
	c := &i.caches
	list := c.callables[key]
	at := -1
	for k := range list {
		if list[k].name == name {
			if list[k].obj == obj && list[k].v == v {
				return list[k].fn, true
			}
			at = k
			break
		}
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, false
	}
	e := callable{name: name, obj: obj, v: v, fn: fn}
	if at >= 0 {
		list[at] = e
		return fn, true
	}
	if c.callables == nil {
		c.callables = map[int][]callable{}
	}
	c.callables[key] = append(list, e)
	return fn, true
}
