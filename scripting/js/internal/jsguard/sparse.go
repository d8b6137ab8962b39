package jsguard

import (
	"fmt"
	"reflect"

	"github.com/dop251/goja"
)

// Native loops over a length: goja's Array.prototype methods walk every
// index from 0 to length (or a part of it) in Go, reading each one, with no
// interrupt check. On an array that holds its elements, the walk is as long
// as the memory the script already holds; on a sparse array (length
// 2^32-1 set on an empty one) or an array-like ({length: 2**53-1}) it is
// not: about 90 ns an index, hours for 2^32 of them. Some also allocate by
// the length (sort copies the present elements into a slice made with the
// length as capacity: 64 GiB for a sparse 2^32-1). The checks below run
// before the builtin: a walk over more than MaxHoleWalk indices that hold
// no element is refused, and so is an allocation by the length past
// MaxAllocBytes.

// MaxHoleWalk is the most indices without an element that one native
// Array.prototype walk may visit: at about 90 ns an index on goja's generic
// path, 2^20 of them take about a tenth of a second.
const MaxHoleWalk = 1 << 20

// Per-element costs of the results charged against MaxAllocBytes.
const (
	// pieceBytes is one short string element of a result array: the
	// array slot and the string's own header.
	pieceBytes = 32
	// keyBytes is one index key (Object.keys of a typed array): measured
	// at about 43 bytes.
	keyBytes = 48
	// entryBytes is one [key, value] pair (Object.entries).
	entryBytes = 256
	// descriptorBytes is one property descriptor object.
	descriptorBytes = 512
	// propertyBytes is one property written to a plain object.
	propertyBytes = 128
)

// heldElements is how many element slots o's storage holds when o is one
// of goja's own arrays (its values slice, or the items of a sparse array),
// and 0 for any other object: a walk over those is as long as memory the
// script already holds. It reads goja's unexported layout through reflect
// (TestHeldElementsReadsGojasArrays pins it); a layout it does not know
// reads as 0, which only makes the checks stricter.
func heldElements(o *goja.Object) int64 {
	v := reflect.ValueOf(o).Elem().FieldByName("self")
	if !v.IsValid() || v.Kind() != reflect.Interface || v.IsNil() {
		return 0
	}
	impl := v.Elem()
	if impl.Kind() != reflect.Pointer || impl.IsNil() {
		return 0
	}
	var field string
	switch impl.Type().String() {
	case "*goja.arrayObject":
		field = "values"
	case "*goja.sparseArrayObject":
		field = "items"
	default:
		return 0
	}
	f := impl.Elem().FieldByName(field)
	if !f.IsValid() || f.Kind() != reflect.Slice {
		return 0
	}
	return int64(f.Len())
}

// arrayWalk is what one Array.prototype method (or Array.from) visits and
// allocates, computed from this's length and the arguments, which it
// converts (args holds the converted ones, passed on to the builtin).
type arrayWalk func(g *guard, n int64, args []goja.Value) (walk, alloc int64)

// walkAll visits every index and allocates nothing by the length.
func walkAll(_ *guard, n int64, _ []goja.Value) (int64, int64) { return n, 0 }

// walkAllAlloc visits every index and makes an array of the length.
func walkAllAlloc(_ *guard, n int64, _ []goja.Value) (int64, int64) { return n, n }

// numberArg converts args[i] with ToNumber in place (when present and not
// undefined), so that the builtin converts a primitive again.
func numberArg(args []goja.Value, i int) goja.Value {
	if i >= len(args) || goja.IsUndefined(args[i]) {
		return goja.Undefined()
	}
	args[i] = args[i].ToNumber()
	return args[i]
}

// fromIndex resolves a fromIndex argument of indexOf and includes.
func fromIndex(v goja.Value, n int64) int64 {
	if goja.IsUndefined(v) {
		return 0
	}
	f := toInteger(v.ToFloat())
	if f < 0 {
		return int64(max(float64(n)+f, 0))
	}
	return int64(min(f, float64(n)))
}

// arrayWalks are the Array.prototype methods that walk indices natively,
// by the name jsguard's plan gives them. Methods that call a function per
// index still walk the holes between elements without calling it.
var arrayWalks = map[string]arrayWalk{
	"Array.prototype.indexOf": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		return n - fromIndex(numberArg(args, 1), n), 0
	},
	"Array.prototype.includes": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		return n - fromIndex(numberArg(args, 1), n), 0
	},
	"Array.prototype.lastIndexOf": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		if len(args) < 2 {
			return n, 0
		}
		f := toInteger(numberArg(args, 1).ToFloat())
		if f < 0 {
			f += float64(n)
		}
		return int64(max(min(f+1, float64(n)), 0)), 0
	},
	"Array.prototype.copyWithin": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		to := relIndex(numberArg(args, 0), n, 0)
		from := relIndex(numberArg(args, 1), n, 0)
		final := relIndex(numberArg(args, 2), n, n)
		return max(min(final-from, n-to), 0), 0
	},
	"Array.prototype.slice": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		start := relIndex(numberArg(args, 0), n, 0)
		end := relIndex(numberArg(args, 1), n, n)
		count := max(end-start, 0)
		return count, count
	},
	"Array.prototype.splice": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		if len(args) == 0 {
			return 0, 0
		}
		start := relIndex(numberArg(args, 0), n, 0)
		del := n - start
		if len(args) > 1 {
			numberArg(args, 1)
			del = int64(min(max(toInteger(args[1].ToFloat()), 0), float64(n-start)))
		}
		items := int64(max(len(args)-2, 0))
		if items == del {
			return del, del
		}
		return n - start, del
	},
	// fill writes every index it visits: an element each (the allocation
	// cap), or on an array-like a property each (see checkWalk).
	"Array.prototype.fill": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		k := relIndex(numberArg(args, 1), n, 0)
		final := relIndex(numberArg(args, 2), n, n)
		return 0, max(final-k, 0)
	},
	"Array.prototype.with": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		numberArg(args, 0)
		return n, n
	},
	"Array.prototype.toSpliced": func(_ *guard, n int64, args []goja.Value) (int64, int64) {
		numberArg(args, 0)
		numberArg(args, 1)
		return n, n + int64(max(len(args)-2, 0))
	},
	"Array.prototype.reverse":       walkAll,
	"Array.prototype.every":         walkAll,
	"Array.prototype.some":          walkAll,
	"Array.prototype.forEach":       walkAll,
	"Array.prototype.filter":        walkAll,
	"Array.prototype.reduce":        walkAll,
	"Array.prototype.reduceRight":   walkAll,
	"Array.prototype.find":          walkAll,
	"Array.prototype.findIndex":     walkAll,
	"Array.prototype.findLast":      walkAll,
	"Array.prototype.findLastIndex": walkAll,
	"Array.prototype.flat":          walkAll,
	"Array.prototype.flatMap":       walkAll,
	"Array.prototype.join": func(g *guard, n int64, args []goja.Value) (int64, int64) {
		// The result cap first (arrayJoin checks it again): each
		// separator counts at least one unit.
		sepLen := int64(1)
		if len(args) > 0 && !goja.IsUndefined(args[0]) {
			sep := g.toStr(args[0])
			args[0] = sep
			sepLen = max(int64(sep.Length()), 1)
		}
		if n > 0 && g.tooBig(float64(n-1)*float64(stringBytes(sepLen))) {
			panic(g.capErr("Array.prototype.join", "result"))
		}
		return n, 0
	},
	"Array.prototype.toLocaleString": walkAll,
	"Array.prototype.shift":          walkAll,
	"Array.prototype.unshift":        walkAll,
	"Array.prototype.map":            walkAllAlloc,
	"Array.prototype.sort":           walkAllAlloc,
	"Array.prototype.toSorted":       walkAllAlloc,
	"Array.prototype.toReversed":     walkAllAlloc,
}

// walkLength reads ToLength(o.length) for the checks. An array's length is
// a data property; any other object's is read here and again by the
// builtin (an accessor length runs twice).
func walkLength(o *goja.Object) int64 { return toLength(o.Get("length")) }

// holesErr is the error of a walk over too many holes.
func (g *guard) holesErr(name string, n int64) any {
	return g.rangeErr(fmt.Sprintf("%s: length %d has more than %d holes", name, n, MaxHoleWalk))
}

// checkHoles refuses a native walk of n indices of o that would visit more
// than MaxHoleWalk indices beyond the elements o holds.
func (g *guard) checkHoles(name string, o *goja.Object, n int64) {
	if n-heldElements(o) > MaxHoleWalk {
		panic(g.holesErr(name, n))
	}
}

// checkWalk refuses a walk of more than MaxHoleWalk indices beyond those o
// holds, and an allocation by the length past the cap.
func (g *guard) checkWalk(name string, o *goja.Object, n, walk, alloc int64) {
	held := heldElements(o)
	if walk-held > MaxHoleWalk {
		panic(g.holesErr(name, n))
	}
	switch {
	case name == "Array.prototype.sort" && held >= n:
		alloc = 0 // in place on an array that holds every element
	case name == "Array.prototype.fill" && !g.callIsArray(o):
		alloc *= propertyBytes / valueBytes
	}
	if g.tooBig(float64(alloc) * valueBytes) {
		panic(g.capErr(name, "array"))
	}
}

// walkChecked wraps an Array.prototype method of arrayWalks (impl is what
// runs: goja's builtin or jsguard's own) with its checks.
func (g *guard) walkChecked(name string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	walk, ok := arrayWalks[name]
	if !ok {
		return impl
	}
	return func(c goja.FunctionCall) goja.Value {
		o, ok := c.This.(*goja.Object)
		if !ok {
			if c.This == nil || goja.IsUndefined(c.This) || goja.IsNull(c.This) {
				return impl(c) // the builtin's TypeError
			}
			o = c.This.ToObject(g.vm)
		}
		n := walkLength(o)
		args := append([]goja.Value(nil), c.Arguments...)
		w, a := walk(g, n, args)
		g.checkWalk(name, o, n, w, a)
		return impl(goja.FunctionCall{This: o, Arguments: args})
	}
}

// concatChecked is Array.prototype.concat refusing a result (and the walk
// that makes it) over the caps: the lengths of this and of the array
// arguments add up.
func (g *guard) concatChecked(impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	const name = "Array.prototype.concat"
	return func(c goja.FunctionCall) goja.Value {
		var total, held int64
		add := func(v goja.Value) {
			o, ok := v.(*goja.Object)
			if !ok || !g.callIsArray(o) {
				total++
				return
			}
			total += walkLength(o)
			held += heldElements(o)
		}
		if o, ok := c.This.(*goja.Object); ok {
			add(o)
		}
		for _, a := range c.Arguments {
			add(a)
		}
		if total-held > MaxHoleWalk {
			panic(g.holesErr(name, total))
		}
		if g.tooBig(float64(total) * valueBytes) {
			panic(g.capErr(name, "array"))
		}
		return impl(c)
	}
}

// arrayFromChecked is Array.from refusing a result over the cap when its
// size is known before: an array (its length), a string (one element per
// code point at most) or an array-like without an iterator.
func (g *guard) arrayFromChecked(impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	const name = "Array.from"
	return func(c goja.FunctionCall) goja.Value {
		switch items := c.Argument(0).(type) {
		case goja.String:
			if g.tooBig(float64(items.Length()) * pieceBytes) {
				panic(g.capErr(name, "array"))
			}
		case *goja.Object:
			// It makes an element per index: the allocation cap bounds
			// the walk too (an array or an array-like; an iterator's
			// length is not known before).
			if isProxy(items) {
				break
			}
			it := items.GetSymbol(goja.SymIterator)
			if g.callIsArray(items) || it == nil || goja.IsUndefined(it) || goja.IsNull(it) {
				if g.tooBig(float64(walkLength(items)) * valueBytes) {
					panic(g.capErr(name, "array"))
				}
			}
		}
		return impl(c)
	}
}

// ownKeysCost is the per-key cost of the Object functions that make one
// value per own property of their argument.
var ownKeysCost = map[string]float64{
	"Object.keys":                      keyBytes,
	"Object.getOwnPropertyNames":       keyBytes,
	"Reflect.ownKeys":                  keyBytes,
	"Object.values":                    pieceBytes,
	"Object.entries":                   entryBytes,
	"Object.getOwnPropertyDescriptors": descriptorBytes,
	"Object.assign":                    propertyBytes,
}

// indexedCount is how many index properties o has without anything to
// hold them one by one: a typed array's elements and a String object's
// characters (0 for anything else).
func indexedCount(o *goja.Object) int64 {
	if isProxy(o) {
		return 0
	}
	switch cls := o.ClassName(); {
	case cls == "String":
		if s, ok := o.Get("length").Export().(int64); ok {
			return s
		}
	case cls != "Array":
		// A typed array exports its elements as a slice of numbers
		// (sharing its buffer, no copy); an array as a slice of any.
		if t := o.ExportType(); t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Interface {
			if v := reflect.ValueOf(o.Export()); v.Kind() == reflect.Slice {
				return int64(v.Len())
			}
		}
	}
	return 0
}

// ownKeysChecked refuses Object.keys and its kin on a typed array or String
// object whose result (a value per element) is over the cap: the elements
// take one to eight bytes each, their keys about 48
// (Object.keys(new Uint8Array(2**27)) made 5.6 GiB).
func (g *guard) ownKeysChecked(name string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	cost, ok := ownKeysCost[name]
	if !ok {
		return impl
	}
	return func(c goja.FunctionCall) goja.Value {
		args := c.Arguments
		if name != "Object.assign" {
			args = args[:min(len(args), 1)]
		} else if len(args) > 0 {
			args = args[1:]
		}
		var count int64
		for _, a := range args {
			if o, ok := a.(*goja.Object); ok {
				count += indexedCount(o)
			}
		}
		if g.tooBig(float64(count) * cost) {
			panic(g.capErr(name, "result"))
		}
		return impl(c)
	}
}

// typedSourceCheck refuses a typed array made from (or set from) an array
// or an array-like that goja reads index by index: new Uint8Array(a) of a
// sparse array of length 2^24 took 78 s, Uint8Array.from(a) 55 s. A typed
// array, a buffer or an iterable other than an array is left alone (goja
// copies the first two; a builtin iterator's steps look for interrupts,
// see iterate.go). elemSize is the made array's element size, 0 for set.
func (g *guard) typedSourceCheck(name string, src goja.Value, elemSize float64) {
	o, ok := src.(*goja.Object)
	if !ok || isProxy(o) {
		return
	}
	if !g.callIsArray(o) {
		switch cls := o.ClassName(); {
		case cls == "ArrayBuffer" || cls == "SharedArrayBuffer" || indexedCount(o) > 0:
			return
		}
		if t := o.ExportType(); t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Interface {
			return // a typed array, empty
		}
		if it := o.GetSymbol(goja.SymIterator); it != nil && !goja.IsUndefined(it) && !goja.IsNull(it) {
			return
		}
	}
	n := walkLength(o)
	if g.tooBig(float64(n) * elemSize) {
		panic(g.capErr(name, "buffer"))
	}
	g.checkHoles(name, o, n)
}

// nativeLoopCheck returns the checks of the builtin at path (see
// arrayWalks, concat, Array.from, ownKeysCost and strings.go), wrapped
// around impl, or nil when it has none.
func (g *guard) nativeLoopCheck(path string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	switch {
	case arrayWalks[path] != nil:
		return g.walkChecked(path, impl)
	case path == "Array.prototype.concat":
		return g.concatChecked(impl)
	case path == "Array.from":
		return g.arrayFromChecked(impl)
	case ownKeysCost[path] != 0:
		return g.ownKeysChecked(path, impl)
	case path == "%TypedArray%.from" || path == "%TypedArray%.prototype.set":
		return func(c goja.FunctionCall) goja.Value {
			g.typedSourceCheck(path, c.Argument(0), 0)
			return impl(c)
		}
	}
	if f := g.iteratorChecked(path, impl); f != nil {
		return f
	}
	return g.stringCheck(path, impl)
}
