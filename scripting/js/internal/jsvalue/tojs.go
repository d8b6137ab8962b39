package jsvalue

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// ToJS converts a value in the Go form of JSON values to JavaScript: null,
// booleans, numbers, strings, and plain objects (prototype Object.prototype)
// and arrays, every one frozen. Object members keep their order, except that
// JavaScript lists integer-like keys first, in ascending order. A member
// named __proto__ becomes an own data property.
//
// Other values dsl.Snapshot accepts (integers, map[string]any, typed slices
// and maps, …) are normalised with it first; what it refuses, a value that
// contains itself, and one beyond the realm's limits (see [Realm.SetLimits])
// give a *dsl.SnapshotError with paths rooted at "value". A string is
// measured before it is converted, so one too large is never copied.
//
// ToJS runs no script code and looks up no global: objects come from
// Runtime.NewObject and NewArray, members are defined with
// Object.DefineDataProperty (which, unlike assignment, never consults
// Object.prototype, so a setter a script put there does not run), and
// containers are sealed with the Object.freeze and Object.preventExtensions
// captured by NewRealm.
func (r *Realm) ToJS(v any) (goja.Value, error) {
	c := r.spareJS
	if c == nil {
		c = &toJS{r: r}
		c.runIn = c.runInput
	} else {
		r.spareJS = nil // in case a conversion ever starts another one
	}
	c.lim, c.nodes, c.bytes = r.limitsFor(Limits{}), 1, dsl.ValueBytes
	c.in = v
	ex := r.vm.Try(c.runIn)
	out, err := c.out, c.err
	c.reset()
	r.spareJS = c
	if ex != nil {
		return nil, fmt.Errorf("jsvalue: building the value threw: %w", ex)
	}
	return out, err
}

// runInput converts c.in into c.out and c.err, for vm.Try without a closure
// made per call.
func (c *toJS) runInput() { c.out, c.err = c.run(c.in) }

// reset clears c for the next ToJS, keeping its buffers.
func (c *toJS) reset() {
	clear(c.stack[:cap(c.stack)])
	c.stack = c.stack[:0]
	for d := range c.vals {
		clear(c.vals[d][:cap(c.vals[d])])
	}
	if len(c.vals) > keepDepth {
		clear(c.vals[keepDepth:])
		c.vals = c.vals[:keepDepth]
	}
	clear(c.open)
	c.in, c.out, c.err = nil, nil, nil
}

// keepDepth bounds the vals buffers a toJS keeps between conversions.
const keepDepth = 64

// jsFrame is a Go container being converted.
type jsFrame struct {
	obj  *dsl.Object // the object, or nil for an array
	list []any       // the array
	n, i int         // children, and the index after the current child
	vals []any       // converted children, goja.Value each
	id   any         // identity for cycle detection, nil if it cannot cycle
}

// sliceID identifies a non-empty slice by its first element and length.
type sliceID struct {
	p *any
	n int
}

// toJS is the state of one ToJS call. It walks with an explicit stack.
// The Realm keeps the last one for the next call (see Realm.ToJS).
type toJS struct {
	r     *Realm
	stack []jsFrame
	vals  [][]any // the frames' vals buffers by depth, kept (see valsAt)
	open  map[any]struct{}
	lim   Limits
	nodes int // values so far
	bytes int // size so far, as Limits.MaxBytes counts it

	in    any        // the value to convert
	out   goja.Value // and what it became
	err   error
	runIn func() // runInput, made once
}

func (c *toJS) run(v any) (goja.Value, error) {
	if c.bytes > c.lim.MaxBytes {
		return nil, dsl.BytesError("value", c.lim.MaxBytes)
	}
	val, f, err := c.enter(v)
	if err != nil || f.n < 0 {
		return val, err
	}
	if err := c.push(&f); err != nil {
		return nil, err
	}
	for {
		f := &c.stack[len(c.stack)-1]
		if f.i == f.n {
			done, err := c.build(f)
			if err != nil {
				return nil, err
			}
			if f.id != nil && len(c.stack) > scanDepth {
				delete(c.open, f.id)
			}
			clear(f.vals)
			c.stack[len(c.stack)-1] = jsFrame{}
			c.stack = c.stack[:len(c.stack)-1]
			if len(c.stack) == 0 {
				return done, nil
			}
			p := &c.stack[len(c.stack)-1]
			p.vals[p.i-1] = done
			continue
		}
		var child any
		if f.obj != nil {
			var key string
			key, child = f.obj.At(f.i)
			f.i++
			if !utf8.ValidString(key) {
				return nil, c.fail("invalid UTF-8 in object key")
			}
			if c.bytes += len(key); c.bytes > c.lim.MaxBytes {
				return nil, dsl.BytesError(c.path(), c.lim.MaxBytes)
			}
		} else {
			child = f.list[f.i]
			f.i++
		}
		val, cf, err := c.enter(child)
		if err != nil {
			return nil, err
		}
		if cf.n < 0 {
			f.vals[f.i-1] = val
			continue
		}
		if err := c.push(&cf); err != nil {
			return nil, err
		}
	}
}

// noFrame is what enter returns with a scalar: a frame with n < 0.
var noFrame = jsFrame{n: -1}

// enter converts a scalar, or returns a frame for a container (n >= 0).
func (c *toJS) enter(v any) (goja.Value, jsFrame, error) {
	switch x := v.(type) {
	case nil:
		return goja.Null(), noFrame, nil
	case bool:
		return c.r.vm.ToValue(v), noFrame, nil
	case string:
		// Measured before it is converted: goja copies a non-ASCII string.
		if c.bytes += len(x); c.bytes > c.lim.MaxBytes {
			return nil, noFrame, dsl.BytesError(c.path(), c.lim.MaxBytes)
		}
		if utf8.ValidString(x) {
			return c.r.vm.ToValue(v), noFrame, nil
		}
	case float64:
		if !math.IsNaN(x) && !math.IsInf(x, 0) && (x != 0 || !math.Signbit(x)) {
			return c.r.vm.ToValue(v), noFrame, nil
		}
	case *dsl.Object:
		if x != nil {
			n := x.Len()
			return nil, jsFrame{obj: x, n: n, id: x}, nil
		}
	case []any:
		if x != nil {
			f := jsFrame{list: x, n: len(x)}
			if len(x) > 0 {
				f.id = sliceID{&x[0], len(x)}
			}
			return nil, f, nil
		}
	}
	// Not in the Go form, or not lossless: let dsl normalise it or say why,
	// refusing what is beyond the limits before copying it.
	nv, err := dsl.SnapshotWithin(c.path(), v, c.lim)
	if err != nil {
		return nil, noFrame, err
	}
	return c.enter(nv)
}

// push opens a frame, refusing a container already open or beyond the
// limits.
func (c *toJS) push(f *jsFrame) error {
	if f.id != nil && c.isOpen(f.id) {
		return c.fail(reasonCycle)
	}
	if len(c.stack)+1 > c.lim.MaxDepth {
		return dsl.DepthError(c.path(), c.lim.MaxDepth)
	}
	if f.n > c.lim.MaxNodes-c.nodes {
		return dsl.NodesError(c.path(), c.lim.MaxNodes)
	}
	c.nodes += f.n
	if c.bytes += dsl.ValueBytes * f.n; c.bytes > c.lim.MaxBytes {
		return dsl.BytesError(c.path(), c.lim.MaxBytes)
	}
	if f.id != nil && len(c.stack) >= scanDepth {
		if c.open == nil {
			c.open = make(map[any]struct{})
		}
		c.open[f.id] = struct{}{}
	}
	f.vals = c.valsAt(len(c.stack), f.n) // only now that the limits allow it
	c.stack = append(c.stack, *f)
	return nil
}

// isOpen reports whether the container id is open: an ancestor of the one
// being entered, which would make the value contain itself. The outermost
// scanDepth are compared one by one (most values are shallow, and a few
// comparisons cost less than hashing into a map); deeper ones are in the
// open map.
func (c *toJS) isOpen(id any) bool {
	for k := range min(len(c.stack), scanDepth) {
		if c.stack[k].id == id {
			return true
		}
	}
	if len(c.stack) > scanDepth {
		_, ok := c.open[id]
		return ok
	}
	return false
}

// valsAt returns room for n converted children of the frame at depth,
// reusing the buffer of the last frame at that depth: one frame per depth is
// open at a time, and build copies what it needs out of it.
func (c *toJS) valsAt(depth, n int) []any {
	for len(c.vals) <= depth {
		c.vals = append(c.vals, nil)
	}
	if cap(c.vals[depth]) >= n {
		return c.vals[depth][:n]
	}
	b := make([]any, n)
	if n <= keepMembers {
		c.vals[depth] = b
	}
	return b
}

// build makes the frozen JavaScript container for a finished frame.
func (c *toJS) build(f *jsFrame) (*goja.Object, error) {
	vm := c.r.vm
	if f.obj == nil {
		// Frozen element by element: Object.freeze would walk the array
		// with property iterators, which cost more than the elements.
		arr := vm.NewArray(f.vals...)
		for i, v := range f.vals {
			val, _ := v.(goja.Value)
			if err := arr.DefineDataProperty(strconv.Itoa(i), val, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
				return nil, fmt.Errorf("jsvalue: defining [%d]: %w", i, err)
			}
		}
		if err := arr.DefineDataProperty("length", vm.ToValue(len(f.vals)), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			return nil, fmt.Errorf("jsvalue: freezing length: %w", err)
		}
		c.r.call(builtinPreventExtensions, arr)
		return arr, nil
	}
	obj := vm.NewObject()
	for i, v := range f.vals {
		key, _ := f.obj.At(i)
		val, _ := v.(goja.Value)
		// Non-writable and non-configurable already, so preventing
		// extensions is all freezing has left to do.
		if err := obj.DefineDataProperty(key, val, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, fmt.Errorf("jsvalue: defining %q: %w", key, err)
		}
	}
	c.r.call(builtinPreventExtensions, obj)
	return obj, nil
}

// path renders the position of the current child.
func (c *toJS) path() string {
	var b strings.Builder
	dsl.WritePath(&b, "value", len(c.stack), func(b *strings.Builder, i int) {
		f := &c.stack[i]
		if f.obj == nil {
			dsl.WritePathIndex(b, f.i-1)
		} else {
			key, _ := f.obj.At(f.i - 1)
			dsl.WritePathKey(b, key)
		}
	})
	return b.String()
}

func (c *toJS) fail(reason string) error {
	return &dsl.SnapshotError{Path: c.path(), Reason: reason}
}
