package jsguard

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// Walking the intrinsics in script costs milliseconds (every lazily built
// builtin gets built, every property gets a descriptor object), too much
// for each new runtime. So the walk runs once per process, on a scratch
// runtime, and yields a plan: for each builtin to replace, where it sits.
// Install replays the plan on the new runtime from Go.

// step is one link of a holder's path: a property ('p'), a symbol-keyed
// property ('s') or the prototype ('^').
type step struct {
	kind byte
	name string
	sym  *goja.Symbol
}

// holderPath is where an object holding replaced builtins sits: a root and
// the path from it.
type holderPath struct {
	root int // -1: the global object; i: hidden intrinsic i
	path []step
	key  string // the path as text, for messages
}

// site is one place where a replaced builtin sits.
type site struct {
	holder int // index in installPlan.holders
	key    string
	sym    *goja.Symbol // the key when it is a symbol
	kind   byte         // 'v' data value, 'g' getter, 's' setter
	flags  [3]bool      // writable, enumerable, configurable
}

// planned is one builtin to replace: native methods get a counting wrapper,
// the constructors of proxiedCtors a Proxy.
type planned struct {
	name  string
	ctor  string // proxiedCtors name, or "" for a native method
	sites []site
	// countedOnly is a native method whose wrapper only counts re-entry:
	// a contained runtime leaves it alone (see contained.go).
	countedOnly bool
}

// installPlan is the plan: the builtins to replace and the distinct
// objects that hold them, each resolved once per Install.
type installPlan struct {
	items   []planned
	holders []holderPath
}

var plan = sync.OnceValues(makePlan)

func makePlan() (*installPlan, error) {
	vm := goja.New()
	progs, err := programs()
	if err != nil {
		return nil, err
	}
	hidden, err := vm.RunProgram(progs[1])
	if err != nil {
		return nil, err
	}
	skip := make(map[*goja.Object]bool)
	for _, path := range skipped {
		if o, ok := lookup(vm, path); ok {
			skip[o] = true
		}
	}
	ctors := make(map[*goja.Object]string)
	for _, name := range proxiedCtors {
		if o, ok := lookup(vm, name); ok {
			ctors[o] = name
		}
	}
	for _, h := range hiddenRoots(hidden) {
		if h.name == "GeneratorFunction" || h.name == "AsyncFunction" {
			ctors[h.obj] = h.name
		}
	}
	var out []planned
	var holders []holderPath
	holderIndex := make(map[string]int)
	index := make(map[*goja.Object]int)
	var recErr error
	rec := func(c goja.FunctionCall) goja.Value {
		fn, _ := c.Argument(0).(*goja.Object)
		if fn == nil || skip[fn] || stdRegExp[c.Argument(1).String()] {
			return goja.Undefined()
		}
		st := site{kind: c.Argument(5).String()[0]}
		hp := holderPath{root: int(c.Argument(2).ToInteger())}
		for i := range st.flags {
			st.flags[i] = c.Argument(6 + i).ToBoolean()
		}
		if sym, ok := c.Argument(4).(*goja.Symbol); ok {
			st.sym = sym
		} else {
			st.key = c.Argument(4).String()
		}
		steps, _ := c.Argument(3).(*goja.Object)
		if steps != nil {
			n := int(steps.Get("length").ToInteger())
			for i := 0; i < n; i++ {
				pair := steps.Get(fmt.Sprint(i)).(*goja.Object)
				s := step{kind: pair.Get("0").String()[0]}
				if sym, ok := pair.Get("1").(*goja.Symbol); ok {
					s.sym = sym
				} else {
					s.name = pair.Get("1").String()
				}
				hp.path = append(hp.path, s)
			}
		}
		var key strings.Builder
		fmt.Fprint(&key, hp.root)
		for _, s := range hp.path {
			key.WriteByte(s.kind)
			key.WriteString(s.name)
			if s.sym != nil {
				key.WriteString(s.sym.String())
			}
			key.WriteByte(0)
		}
		hp.key = key.String()
		hi, ok := holderIndex[hp.key]
		if !ok {
			hi = len(holders)
			holderIndex[hp.key] = hi
			holders = append(holders, hp)
		}
		st.holder = hi
		if i, ok := index[fn]; ok {
			out[i].sites = append(out[i].sites, st)
			return goja.Undefined()
		}
		p := planned{name: c.Argument(1).String(), sites: []site{st}}
		if name, ok := ctors[fn]; ok {
			p.ctor = name
		} else if _, isCtor := goja.AssertConstructor(fn); isCtor {
			return goja.Undefined()
		} else if _, native := fn.Export().(func(goja.FunctionCall) goja.Value); !native {
			return goja.Undefined()
		}
		if st.kind != 'v' && p.ctor != "" {
			recErr = fmt.Errorf("%s: a constructor as an accessor", p.name)
		}
		index[fn] = len(out)
		out = append(out, p)
		return goja.Undefined()
	}
	walk, err := vm.RunProgram(progs[0])
	if err != nil {
		return nil, err
	}
	walkFn, ok := goja.AssertFunction(walk)
	if !ok {
		return nil, errors.New("walker is not a function")
	}
	if _, err := walkFn(goja.Undefined(), vm.ToValue(rec), hidden); err != nil {
		return nil, err
	}
	// jsguard's own implementations are chosen by name: check that the
	// walk named each of them as expected.
	names := make(map[string]bool, len(out))
	for _, p := range out {
		names[p.name] = true
	}
	for _, name := range specialNames {
		if !names[name] {
			recErr = errors.Join(recErr, fmt.Errorf("builtin %s not found where expected", name))
		}
	}
	markCountedOnly(out)
	return &installPlan{items: out, holders: holders}, recErr
}

type hiddenRoot struct {
	obj  *goja.Object
	name string
}

func hiddenRoots(v goja.Value) []hiddenRoot {
	list, ok := v.(*goja.Object)
	if !ok {
		return nil
	}
	n := int(list.Get("length").ToInteger())
	out := make([]hiddenRoot, n)
	for i := range out {
		if e, ok := list.Get(fmt.Sprint(i)).(*goja.Object); ok {
			out[i].obj, _ = e.Get("0").(*goja.Object)
			out[i].name = e.Get("1").String()
		}
	}
	return out
}

// wrapAll replays the plan on g.vm.
func (g *guard) wrapAll() error {
	p, err := plan()
	if err != nil {
		return err
	}
	progs, err := programs()
	if err != nil {
		return err
	}
	hv, err := g.vm.RunProgram(progs[1])
	if err != nil {
		return err
	}
	roots := hiddenRoots(hv)
	objs := make([]*goja.Object, len(p.holders))
	holder := func(s site) (*goja.Object, error) {
		if o := objs[s.holder]; o != nil {
			return o, nil
		}
		hp := p.holders[s.holder]
		o := g.vm.GlobalObject()
		if hp.root >= 0 {
			if hp.root >= len(roots) || roots[hp.root].obj == nil {
				return nil, fmt.Errorf("hidden intrinsic %d not found", hp.root)
			}
			o = roots[hp.root].obj
		}
		for _, st := range hp.path {
			var next goja.Value
			switch {
			case st.kind == '^':
				next = o.Prototype()
			case st.sym != nil:
				next = o.GetSymbol(st.sym)
			default:
				next = o.Get(st.name)
			}
			n, ok := next.(*goja.Object)
			if !ok {
				return nil, fmt.Errorf("intrinsic holder %q not found", hp.key)
			}
			o = n
		}
		objs[s.holder] = o
		return o, nil
	}
	keyValue := func(s site) goja.Value {
		if s.sym != nil {
			return s.sym
		}
		return g.vm.ToValue(s.key)
	}
	descriptor := func(h *goja.Object, s site) *goja.Object {
		d, _ := g.gopd(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{h, keyValue(s)}}).(*goja.Object)
		return d
	}
	flag := goja.ToFlag
	for _, pl := range p.items {
		if g.contained && pl.countedOnly {
			continue
		}
		h, err := holder(pl.sites[0])
		if err != nil {
			return err
		}
		var orig *goja.Object
		switch s := pl.sites[0]; s.kind {
		case 'v':
			if s.sym != nil {
				orig, _ = h.GetSymbol(s.sym).(*goja.Object)
			} else {
				orig, _ = h.Get(s.key).(*goja.Object)
			}
		default:
			if d := descriptor(h, s); d != nil {
				acc := "get"
				if s.kind == 's' {
					acc = "set"
				}
				orig, _ = d.Get(acc).(*goja.Object)
			}
		}
		if orig == nil {
			return fmt.Errorf("intrinsic %s not found", pl.name)
		}
		var w goja.Value
		if pl.ctor != "" {
			px := g.newCtorProxy(orig, pl.ctor)
			g.proxied[orig] = px
			w = px
		} else {
			f, ok := orig.Export().(func(goja.FunctionCall) goja.Value)
			if !ok {
				return fmt.Errorf("intrinsic %s is not native", pl.name)
			}
			if w, err = g.wrapNative(orig, pl.name, f); err != nil {
				return err
			}
		}
		for _, s := range pl.sites {
			h, err := holder(s)
			if err != nil {
				return err
			}
			if s.kind == 'v' {
				if s.sym != nil {
					err = h.DefineDataPropertySymbol(s.sym, w, flag(s.flags[0]), flag(s.flags[2]), flag(s.flags[1]))
				} else {
					err = h.DefineDataProperty(s.key, w, flag(s.flags[0]), flag(s.flags[2]), flag(s.flags[1]))
				}
			} else {
				d := descriptor(h, s)
				if d == nil {
					return fmt.Errorf("accessor %s not found", pl.name)
				}
				get, set := d.Get("get"), d.Get("set")
				if s.kind == 'g' {
					get = w
				} else {
					set = w
				}
				if s.sym != nil {
					err = h.DefineAccessorPropertySymbol(s.sym, get, set, flag(s.flags[2]), flag(s.flags[1]))
				} else {
					err = h.DefineAccessorProperty(s.key, get, set, flag(s.flags[2]), flag(s.flags[1]))
				}
			}
			if err != nil {
				return fmt.Errorf("replacing %s: %w", pl.name, err)
			}
		}
	}
	// A proxied constructor's parent (TypeError's Error, Uint8Array's
	// %TypedArray%) is its target's [[Prototype]]: point it at the proxy.
	for orig := range g.proxied {
		if parent := orig.Prototype(); parent != nil {
			if px, ok := g.proxied[parent]; ok {
				if err := orig.SetPrototype(px); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
