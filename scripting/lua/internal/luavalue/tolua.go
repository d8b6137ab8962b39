package luavalue

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// ToLua converts a value in the Go form of JSON values to Lua: null to
// [Converter.Null], booleans, numbers and strings to their Lua values, and
// arrays and objects to fresh tables marked as arrays and objects, so that
// ToGo turns them back into exactly what they were, [] and {} included. An
// object member whose value is null is present, as dsh.null.
//
// v should be lossless JSON, as dsl.Snapshot and dsl.Unmarshal return it;
// other forms dsl.Snapshot accepts (integers, map[string]any, typed slices)
// are normalised with it. ToLua panics with the *dsl.SnapshotError when v is
// not lossless JSON (NaN, a cycle, a func, …) or exceeds the converter's
// limits: that is a bug in the caller, not bad script input. Use
// [Converter.TryToLua] to get the error instead. A panic inside a Go function
// called from Lua becomes a Lua error; it does not crash the process.
//
// ToLua runs no script code.
func (c *Converter) ToLua(v any) lua.LValue {
	out, err := c.TryToLua(v)
	if err != nil {
		panic(err)
	}
	return out
}

// TryToLua is [Converter.ToLua] returning an error, with paths rooted at
// "value", instead of panicking.
func (c *Converter) TryToLua(v any) (lua.LValue, error) {
	t := toLua{c: c, stack: c.luaStack}
	c.luaStack = nil // taken, should a conversion ever start inside this one
	out, err := t.run(v)
	clear(t.stack) // the frames a failure left; the popped ones are cleared
	if cap(t.stack) <= keepStack {
		c.luaStack = t.stack[:0]
	}
	return out, err
}

// luaFrame is a Go container being converted.
type luaFrame struct {
	obj  *dsl.Object // the object, or nil for an array
	list []any       // the array
	n, i int         // children, and the index after the current child
	t    *lua.LTable
	id   any // identity for the cycle check, nil if it cannot cycle
}

// sliceID identifies a non-empty slice by its first element and length.
type sliceID struct {
	p *any
	n int
}

// toLua is the state of one TryToLua call. It walks with an explicit stack.
type toLua struct {
	c     *Converter
	nodes int
	bytes int // the size so far, as dsl.Limits.MaxBytes counts it
	stack []luaFrame
	open  map[any]struct{}
}

func (t *toLua) run(v any) (lua.LValue, error) {
	t.nodes, t.bytes = 1, dsl.ValueBytes
	if t.bytes > t.c.lim.MaxBytes {
		return nil, t.fail(reasonBytes)
	}
	out, err := t.enter(v)
	if err != nil {
		return nil, err
	}
	for len(t.stack) > 0 {
		f := &t.stack[len(t.stack)-1]
		if f.i == f.n {
			if t.open != nil && f.id != nil {
				delete(t.open, f.id)
			}
			t.stack[len(t.stack)-1] = luaFrame{}
			t.stack = t.stack[:len(t.stack)-1]
			continue
		}
		i := f.i
		f.i++
		tb := f.t
		if f.obj != nil {
			k, x := f.obj.At(i)
			if !utf8.ValidString(k) {
				return nil, t.fail(reasonKey)
			}
			if t.bytes += len(k); t.bytes > t.c.lim.MaxBytes {
				return nil, t.fail(reasonBytes)
			}
			val, err := t.enter(x)
			if err != nil {
				return nil, err
			}
			tb.RawSetString(k, val)
		} else {
			val, err := t.enter(f.list[i])
			if err != nil {
				return nil, err
			}
			tb.RawSetInt(i+1, val)
		}
	}
	return out, nil
}

// enter converts v, opening a frame for a non-empty container.
func (t *toLua) enter(v any) (lua.LValue, error) {
	for normalised := false; ; normalised = true {
		switch x := v.(type) {
		case nil:
			return t.c.null, nil
		case bool:
			return lua.LBool(x), nil
		case string:
			if t.bytes += len(x); t.bytes > t.c.lim.MaxBytes {
				return nil, t.fail(reasonBytes)
			}
			if !utf8.ValidString(x) {
				return nil, t.fail(reasonString)
			}
			return lua.LString(x), nil
		case float64:
			if reason := floatReason(x); reason != "" {
				return nil, t.fail(reason)
			}
			return lua.LNumber(x), nil
		case []any:
			if err := t.checkDepth(); err != nil {
				return nil, err
			}
			if err := t.checkCount(len(x)); err != nil {
				return nil, err
			}
			out := t.c.state.CreateTable(len(x), 0)
			out.Metatable = t.c.arrayMT
			if len(x) == 0 {
				return out, nil
			}
			return out, t.push(luaFrame{list: x, n: len(x), t: out, id: sliceID{&x[0], len(x)}})
		case *dsl.Object:
			if x == nil {
				return t.c.null, nil
			}
			if err := t.checkDepth(); err != nil {
				return nil, err
			}
			if err := t.checkCount(x.Len()); err != nil {
				return nil, err
			}
			out := t.c.state.CreateTable(0, x.Len())
			out.Metatable = t.c.objectMT
			if x.Len() == 0 {
				return out, nil
			}
			return out, t.push(luaFrame{obj: x, n: x.Len(), t: out, id: x})
		}
		if normalised {
			// Not expected: Snapshot returns only the forms above.
			return nil, t.fail(fmt.Sprintf("a %T is not lossless JSON", v))
		}
		s, err := dsl.SnapshotWithin(t.path(), v, t.c.lim)
		if err != nil {
			return nil, err
		}
		v = s
	}
}

// checkDepth refuses a container nested deeper than MaxDepth.
func (t *toLua) checkDepth() error {
	if len(t.stack)+1 > t.c.lim.MaxDepth {
		return t.fail(reasonDepth)
	}
	return nil
}

// checkCount refuses a container of n values that would exceed MaxNodes or
// MaxBytes, before its table is made.
func (t *toLua) checkCount(n int) error {
	if n > t.c.lim.MaxNodes-t.nodes {
		return t.fail(reasonNodes)
	}
	if t.bytes+dsl.ValueBytes*n > t.c.lim.MaxBytes {
		return t.fail(reasonBytes)
	}
	return nil
}

// push opens a frame, checking cycles, and counts its values.
func (t *toLua) push(f luaFrame) error {
	if t.isOpen(f.id) {
		return t.fail(reasonCycle)
	}
	t.nodes += f.n
	t.bytes += dsl.ValueBytes * f.n
	t.stack = append(t.stack, f)
	switch {
	case t.open != nil:
		t.open[f.id] = struct{}{}
	case len(t.stack) > scanDepth:
		t.open = make(map[any]struct{}, 2*len(t.stack))
		for i := range t.stack {
			t.open[t.stack[i].id] = struct{}{}
		}
	}
	return nil
}

func (t *toLua) isOpen(id any) bool {
	if t.open != nil {
		_, ok := t.open[id]
		return ok
	}
	for i := range t.stack {
		if t.stack[i].id == id {
			return true
		}
	}
	return false
}

// path renders the position being converted: the root, then the child each
// open container is at.
func (t *toLua) path() string {
	var b strings.Builder
	dsl.WritePath(&b, "value", len(t.stack), func(b *strings.Builder, i int) {
		f := &t.stack[i]
		if f.obj != nil {
			k, _ := f.obj.At(f.i - 1)
			dsl.WritePathKey(b, k)
		} else {
			dsl.WritePathIndex(b, f.i-1)
		}
	})
	return b.String()
}

func (t *toLua) fail(reason string) error {
	return limitError(t.path(), reason, t.c.lim)
}
