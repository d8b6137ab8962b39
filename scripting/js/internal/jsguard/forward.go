package jsguard

import (
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/dop251/goja"
)

// forwardTable remembers how long a chain of forwarding objects (bound
// functions and proxies, which goja forwards to in Go without a call frame)
// stands behind each such object jsguard saw created. Keys are weak, so the
// table never keeps an object alive; an entry is dropped when its object is
// collected (the cleanup runs on another goroutine, hence the mutex).
type forwardTable struct {
	mu sync.Mutex
	m  map[weak.Pointer[goja.Object]]int
}

func newForwardTable() *forwardTable {
	return &forwardTable{m: make(map[weak.Pointer[goja.Object]]int)}
}

func (t *forwardTable) depth(v goja.Value) int {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[weak.Make(o)]
}

func (t *forwardTable) record(o *goja.Object, d int) {
	wp := weak.Make(o)
	t.mu.Lock()
	t.m[wp] = d
	t.mu.Unlock()
	runtime.AddCleanup(o, func(wp weak.Pointer[goja.Object]) {
		t.mu.Lock()
		delete(t.m, wp)
		t.mu.Unlock()
	}, wp)
}

// chainDepth is 1 + the deepest chain behind any of vs, or a RangeError.
func (g *guard) chainDepth(name string, vs ...goja.Value) int {
	d := 0
	for _, v := range vs {
		d = max(d, g.fwd.depth(v))
	}
	d++
	if d > g.maxDepth {
		panic(g.rangeErr(fmt.Sprintf("%s: chain deeper than %d levels", name, g.maxDepth)))
	}
	return d
}

// bind is Function.prototype.bind refusing chains of bound functions (through
// the target, the bound this or the bound arguments) deeper than MaxDepth.
func (g *guard) bind(c goja.FunctionCall) goja.Value {
	c.This = g.execTarget(c.This)
	vs := append([]goja.Value{c.This}, c.Arguments...)
	d := g.chainDepth("Function.prototype.bind", vs...)
	v := g.origBind(c)
	if o, ok := v.(*goja.Object); ok {
		g.fwd.record(o, d)
	}
	return v
}

// recordProxy notes the chain depth of a proxy made by new Proxy(target,
// handler), refusing it when too deep. The check runs after construction
// (the constructor validates its arguments first), before the proxy is
// returned to the script.
func (g *guard) recordProxy(p *goja.Object, args []goja.Value) {
	d := g.chainDepth("Proxy", args...)
	g.fwd.record(p, d)
}

// proxyRevocable is Proxy.revocable with the same chain limit as new Proxy.
func (g *guard) proxyRevocable(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		if len(c.Arguments) > 0 {
			c.Arguments[0] = g.execTarget(c.Arguments[0])
		}
		d := g.chainDepth("Proxy.revocable", c.Arguments...)
		v := orig(c)
		if o, ok := v.(*goja.Object); ok {
			if p, ok := o.Get("proxy").(*goja.Object); ok {
				g.fwd.record(p, d)
			}
		}
		return v
	}
}

// execTarget is what bind, call, apply, Reflect.apply and new Proxy forward
// to when asked to forward to RegExp.prototype.exec, which jsguard leaves
// unwrapped (see stdRegExp): the watched exec (see regexp.go), which counts
// one level of native re-entry (so an object whose toString is exec bound
// to a regexp and itself cannot recurse in Go without bound) and confirms
// a no match from regexp2. Anything else is v.
func (g *guard) execTarget(v goja.Value) goja.Value {
	o, ok := v.(*goja.Object)
	if !ok || g.origExec == nil || o != g.origExec {
		return v
	}
	return g.re.exec
}
