package jsguard

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// walkSrc walks the intrinsics reachable from the global object (and a few
// only reachable from instances) and reports every function-valued property,
// getter and setter to rec, with the path of its holder from its root (the
// global object, -1, or hidden[i]) and a name for messages. Breadth first,
// the hidden intrinsics next and prototype links last, so that a function
// shared by several paths is named by the shortest plain one. It runs once per
// process, on a scratch runtime (see plan).
const walkSrc = `(function (rec, hidden) {
  'use strict';
  var getProto = Object.getPrototypeOf, ownKeys = Reflect.ownKeys, gopd = Object.getOwnPropertyDescriptor,
      seen = new Set(), queue = [[globalThis, '', -1, []]], roots = [], later = [], head = 0;
  for (var i = 0; i < hidden.length; i++) roots.push([hidden[i][0], hidden[i][1], i, []]);
  for (;;) {
    if (head >= queue.length) {
      if (roots !== null) { queue = roots; roots = null; }
      else if (later.length > 0) { queue = later; later = []; }
      else break;
      head = 0;
    }
    var e = queue[head++], o = e[0], path = e[1], root = e[2], steps = e[3];
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
    seen.add(o);
    later.push([getProto(o), path + '.__proto__', root, steps.concat([['^', '']])]);
    var keys = ownKeys(o);
    for (var j = 0; j < keys.length; j++) {
      var k = keys[j], d = gopd(o, k);
      var name = (path ? path + '.' : '') + (typeof k === 'symbol' ? '[' + k.description + ']' : k);
      if ('value' in d) {
        var v = d.value;
        if (v === null || (typeof v !== 'object' && typeof v !== 'function')) continue;
        queue.push([v, name, root, steps.concat([[typeof k === 'symbol' ? 's' : 'p', k]])]);
        if (typeof v === 'function' && (d.configurable || d.writable)) {
          rec(v, name, root, steps, k, 'v', d.writable, d.enumerable, d.configurable);
        }
      } else if (d.get !== d.set) { // getter === setter: %ThrowTypeError%, left alone
        if (d.get) rec(d.get, 'get ' + name, root, steps, k, 'g', false, d.enumerable, d.configurable);
        if (d.set) rec(d.set, 'set ' + name, root, steps, k, 's', false, d.enumerable, d.configurable);
      }
    }
  }
})`

// hiddenSrc lists intrinsics that are not reachable through properties of
// the global object, with the names used in messages.
const hiddenSrc = `(function () {
  var p = Object.getPrototypeOf;
  return [
    [p(Int8Array), '%TypedArray%'],
    [p([][Symbol.iterator]()), '%ArrayIteratorPrototype%'],
    [p(new Map()[Symbol.iterator]()), '%MapIteratorPrototype%'],
    [p(new Set()[Symbol.iterator]()), '%SetIteratorPrototype%'],
    [p(''[Symbol.iterator]()), '%StringIteratorPrototype%'],
    [p(/x/[Symbol.matchAll]('')), '%RegExpStringIteratorPrototype%'],
    [p(function* () {}).constructor, 'GeneratorFunction'],
    [p(async function () {}).constructor, 'AsyncFunction'],
    [p(p(function* () {}).prototype), '%GeneratorPrototype%']
  ];
})()`

var programs = sync.OnceValues(func() ([2]*goja.Program, error) {
	walk, err := goja.Compile("<jsguard>", walkSrc, true)
	if err != nil {
		return [2]*goja.Program{}, err
	}
	hidden, err := goja.Compile("<jsguard>", hiddenSrc, true)
	return [2]*goja.Program{walk, hidden}, err
})

// proxiedCtors are the constructors that convert their arguments when
// called (so a bound or trap call of them can close a cycle) or allocate by
// a requested size; they are replaced by a Proxy whose apply and construct
// traps count depth and check caps. Other constructors are left alone.
var proxiedCtors = []string{
	"String", "Number", "BigInt", "Symbol", "RegExp", "Function",
	"Error", "EvalError", "RangeError", "ReferenceError", "SyntaxError", "TypeError", "URIError", "AggregateError",
	"Proxy", "ArrayBuffer", "SharedArrayBuffer",
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
	"Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
}

// skipped are intrinsics left unwrapped: eval (goja recognises direct eval
// by identity), Function.prototype (a callable that converts nothing), and methods that convert nothing and that goja compares by
// identity for its fast paths (array iteration, Map/Set construction).
var skipped = []string{
	"eval", "Function.prototype", "Array.prototype.values", "Map.prototype.set", "Set.prototype.add", "Set.prototype.has",
	"Set.prototype.values", "WeakMap.prototype.set", "WeakSet.prototype.add",
}

// stdRegExp are the RegExp.prototype properties goja watches: redefining
// any of them (as wrapping would) makes every regular expression of the
// runtime leave goja's fast paths for good (split, replace and match then
// run the generic algorithms, which cost several times more). They are left
// alone; exec is the only one that converts anything (its argument), and a
// cycle through it needs a bound function or a proxy standing for it, which
// bind and new Proxy give the watched exec instead, counted (see execTarget
// and regexp.go).
var stdRegExp = map[string]bool{
	"RegExp.prototype.exec": true, "get RegExp.prototype.global": true, "get RegExp.prototype.multiline": true,
	"get RegExp.prototype.ignoreCase": true, "get RegExp.prototype.unicode": true, "get RegExp.prototype.sticky": true,
}

// lookup reads a dotted path of data properties from the global object.
func lookup(vm *goja.Runtime, path string) (*goja.Object, bool) {
	o := vm.GlobalObject()
	start := 0
	for i := 0; i <= len(path); i++ {
		if i == len(path) || path[i] == '.' {
			next, ok := o.Get(path[start:i]).(*goja.Object)
			if !ok {
				return nil, false
			}
			o = next
			start = i + 1
		}
	}
	return o, true
}

// wrapNative returns the replacement of the native method orig: its own
// implementation when jsguard has one, else orig itself, counted as one level
// of native re-entry. The replacement has orig's name and length.
func (g *guard) wrapNative(orig *goja.Object, name string, f func(goja.FunctionCall) goja.Value) (goja.Value, error) {
	impl := f
	if special := g.special(name, f); special != nil {
		impl = special
	}
	if checked := g.nativeLoopCheck(name, impl); checked != nil {
		impl = checked
	}
	if checked := g.bigintCheck(name, impl); checked != nil {
		impl = checked
	}
	w := g.vm.ToValue(func(c goja.FunctionCall) goja.Value {
		g.enter(name)
		defer g.leave()
		return impl(c)
	}).(*goja.Object)
	for _, prop := range []string{"length", "name"} {
		if err := w.DefineDataProperty(prop, orig.Get(prop), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return w, nil
}

// specialNames are the builtins special replaces.
var specialNames = []string{
	"JSON.parse", "JSON.stringify", "Array.prototype.join", "Array.prototype.flat", "Array.prototype.fill",
	"%TypedArray%.prototype.join", "Function.prototype.bind", "Function.prototype.apply", "Reflect.apply",
	"Reflect.construct", "Proxy.revocable", "Function.prototype.toString", "String.prototype.repeat",
	"String.prototype.padStart", "String.prototype.padEnd", "String.prototype.concat", "Function.prototype.call",
	"RegExp.prototype.test", "RegExp.prototype.compile", "RegExp.prototype.[Symbol.match]",
	"RegExp.prototype.[Symbol.matchAll]", "RegExp.prototype.[Symbol.replace]", "RegExp.prototype.[Symbol.search]",
	"RegExp.prototype.[Symbol.split]",
}

// special returns jsguard's own implementation of the builtin at path, or
// nil when the original is used as is.
func (g *guard) special(path string, orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	switch path {
	case "JSON.parse":
		return g.jsonParse
	case "JSON.stringify":
		return g.jsonStringify
	case "Array.prototype.join":
		return g.arrayJoin
	case "Array.prototype.flat":
		return g.arrayFlat
	case "Array.prototype.fill":
		return g.capFill(orig)
	case "%TypedArray%.prototype.join":
		return g.capTypedJoin(orig)
	case "Function.prototype.bind":
		return g.bind
	case "Function.prototype.call":
		return func(c goja.FunctionCall) goja.Value {
			c.This = g.execTarget(c.This)
			return orig(c)
		}
	case "Function.prototype.apply":
		apply := g.capApply(orig, 1)
		return func(c goja.FunctionCall) goja.Value {
			c.This = g.execTarget(c.This)
			return apply(c)
		}
	case "Reflect.apply":
		apply := g.capApply(orig, 2)
		return func(c goja.FunctionCall) goja.Value {
			if len(c.Arguments) > 0 {
				c.Arguments = append([]goja.Value{g.execTarget(c.Arguments[0])}, c.Arguments[1:]...)
			}
			return apply(c)
		}
	case "RegExp.prototype.test":
		return g.regexpTest(orig)
	case "RegExp.prototype.compile":
		return g.regexpCompile(orig)
	case "RegExp.prototype.[Symbol.match]", "RegExp.prototype.[Symbol.matchAll]", "RegExp.prototype.[Symbol.replace]",
		"RegExp.prototype.[Symbol.search]", "RegExp.prototype.[Symbol.split]":
		return g.regexpMethod(strings.TrimSuffix(strings.TrimPrefix(path, "RegExp.prototype.["), "]"), orig)
	case "Reflect.construct":
		return g.capApply(orig, 1)
	case "Proxy.revocable":
		return g.proxyRevocable(orig)
	case "Function.prototype.toString":
		return g.funcToString(orig)
	case "String.prototype.repeat":
		return g.capRepeat(orig)
	case "String.prototype.padStart", "String.prototype.padEnd":
		return g.capPad(orig, path)
	case "String.prototype.concat":
		return g.capConcat(orig)
	}
	return nil
}

// proxyCtor returns a Proxy standing for the constructor orig whose apply
// and construct traps count one level of native re-entry and check caps.
func (g *guard) newCtorProxy(orig *goja.Object, name string) *goja.Object {
	call, _ := goja.AssertFunction(orig)
	construct, _ := goja.AssertConstructor(orig)
	check := g.ctorCheck(name)
	var self *goja.Object
	p := g.vm.NewProxy(orig, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			g.enter(name)
			defer g.leave()
			if name == "RegExp" && regexpItself(self, args) {
				g.afterRegExp(args[0].(*goja.Object), args)
				return args[0]
			}
			if check != nil && strings.HasSuffix(name, "Function") {
				args = check(args)
			}
			if name == "BigInt" {
				args = g.bigintArgs(args)
			}
			if check != nil && strings.HasSuffix(name, "Function") {
				if f, ok := g.rewrittenFunction(name, args, nil); ok {
					return f
				}
			}
			v, err := call(this, args...)
			rethrow(err)
			if o, ok := v.(*goja.Object); ok && name == "RegExp" {
				g.afterRegExp(o, args)
			}
			return v
		},
		GetSym: func(target *goja.Object, sym *goja.Symbol, receiver goja.Value) goja.Value {
			v := g.reflectGet(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{target, sym, receiver}})
			if sym == goja.SymHasInstance && v == g.origHasInstance {
				return g.hasInstanceFn
			}
			return v
		},
		Construct: func(_ *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			g.enter(name)
			defer g.leave()
			if check != nil {
				args = check(args)
			}
			if name == "Proxy" && len(args) > 0 {
				args[0] = g.execTarget(args[0])
			}
			if check != nil && strings.HasSuffix(name, "Function") {
				if f, ok := g.rewrittenFunction(name, args, newTarget); ok {
					return f
				}
			}
			o, err := construct(newTarget, args...)
			rethrow(err)
			switch name {
			case "Proxy":
				g.recordProxy(o, args)
			case "RegExp":
				g.afterRegExp(o, args)
			}
			return o
		},
	})
	self = g.vm.ToValue(p).(*goja.Object)
	g.proxyOrig[self] = orig
	return self
}

// regexpItself reports whether RegExp(pattern) returns pattern itself: a
// regexp whose constructor is RegExp, with no flags (goja compares the
// constructor with its own RegExp, which the proxy is not).
func regexpItself(ctor *goja.Object, args []goja.Value) bool {
	if len(args) == 0 || len(args) > 1 && !goja.IsUndefined(args[1]) {
		return false
	}
	o, ok := args[0].(*goja.Object)
	if !ok {
		return false
	}
	isRe := o.ClassName() == "RegExp"
	if m := o.GetSymbol(goja.SymMatch); m != nil && !goja.IsUndefined(m) {
		isRe = m.ToBoolean()
	}
	return isRe && o.Get("constructor") == ctor
}

// hasInstance is what the constructor proxies give for Symbol.hasInstance:
// Function.prototype[Symbol.hasInstance] completed for proxies, which
// goja's instanceof rejects, by OrdinaryHasInstance on the proxy's
// prototype property.
func (g *guard) hasInstance(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		ctor, ok := c.This.(*goja.Object)
		if !ok {
			return orig(c)
		}
		if !isProxy(ctor) {
			return orig(c)
		}
		if _, callable := goja.AssertFunction(ctor); !callable {
			return g.vm.ToValue(false)
		}
		o, ok := c.Argument(0).(*goja.Object)
		if !ok {
			return g.vm.ToValue(false)
		}
		proto, ok := ctor.Get("prototype").(*goja.Object)
		if !ok {
			panic(g.typeErr("Function has non-object prototype in instanceof check"))
		}
		for p := o.Prototype(); p != nil; p = p.Prototype() {
			if p == proto {
				return g.vm.ToValue(true)
			}
		}
		return g.vm.ToValue(false)
	}
}

// funcToString shows a wrapped constructor as the original.
func (g *guard) funcToString(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		if o, ok := c.This.(*goja.Object); ok {
			if t, ok := g.proxyOrig[o]; ok {
				c.This = t
			}
		}
		return orig(c)
	}
}
