package jsguard

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// The cap checks convert a builtin's arguments (and this) once, as the
// builtin would, check the size of what it is about to make, and call the
// original with the converted primitives, which it converts again without
// any script code running. A refused call throws
// RangeError("<builtin>: <what> larger than <cap> bytes") before anything
// large is allocated.

// toInteger is ToIntegerOrInfinity on an already converted number.
func toInteger(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return math.Trunc(f)
}

// thisString is RequireObjectCoercible(this) + ToString(this); ok is false
// for undefined and null, which the original reports itself.
func (g *guard) thisString(this goja.Value) (goja.String, bool) {
	if this == nil || goja.IsUndefined(this) || goja.IsNull(this) {
		return nil, false
	}
	return g.toStr(this), true
}

// toStr is ToString. goja's Value.ToString leaves numbers (and booleans)
// as they are, so those are formatted here.
func (g *guard) toStr(v goja.Value) goja.String {
	sv := v.ToString()
	if s, ok := sv.(goja.String); ok {
		return s
	}
	return g.vm.ToValue(sv.String()).(goja.String)
}

func (g *guard) tooBig(bytes float64) bool { return bytes > float64(g.maxBytes) }

func (g *guard) capRepeat(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		s, ok := g.thisString(c.This)
		if !ok {
			return orig(c)
		}
		count := c.Argument(0).ToNumber()
		n := toInteger(count.ToFloat())
		if n > 0 && !math.IsInf(n, 0) && g.tooBig(float64(stringBytes(int64(s.Length())))*n) {
			panic(g.capErr("String.prototype.repeat", "result"))
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{count}})
	}
}

func (g *guard) capPad(orig func(goja.FunctionCall) goja.Value, name string) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		s, ok := g.thisString(c.This)
		if !ok {
			return orig(c)
		}
		maxLen := toLength(c.Argument(0))
		args := []goja.Value{g.vm.ToValue(maxLen)}
		if maxLen > int64(s.Length()) {
			fill := c.Argument(1)
			if !goja.IsUndefined(fill) {
				fill = g.toStr(fill)
			}
			args = append(args, fill)
			empty := !goja.IsUndefined(fill) && fill.(goja.String).Length() == 0
			if !empty && g.tooBig(float64(stringBytes(maxLen))) {
				panic(g.capErr(name, "result"))
			}
		}
		return orig(goja.FunctionCall{This: s, Arguments: args})
	}
}

func (g *guard) capConcat(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		s, ok := g.thisString(c.This)
		if !ok {
			return orig(c)
		}
		total := float64(stringBytes(int64(s.Length())))
		args := make([]goja.Value, len(c.Arguments))
		for i, a := range c.Arguments {
			as := g.toStr(a)
			args[i] = as
			total += float64(stringBytes(int64(as.Length())))
		}
		if g.tooBig(total) {
			panic(g.capErr("String.prototype.concat", "result"))
		}
		return orig(goja.FunctionCall{This: s, Arguments: args})
	}
}

// arrayJoin is Array.prototype.join, written after goja's: an object whose
// join is already in progress (a cycle) joins as "", and the result is
// capped.
func (g *guard) arrayJoin(c goja.FunctionCall) goja.Value {
	const name = "Array.prototype.join"
	o := c.This.ToObject(g.vm)
	for _, a := range g.joining {
		if a == o {
			return g.vm.ToValue("")
		}
	}
	g.joining = append(g.joining, o)
	defer func() {
		g.joining[len(g.joining)-1] = nil
		g.joining = g.joining[:len(g.joining)-1]
	}()
	n := toLength(o.Get("length"))
	var sep goja.String
	if s := c.Argument(0); !goja.IsUndefined(s) {
		sep = g.toStr(s)
	} else {
		sep = g.toStr(g.vm.ToValue(","))
	}
	if n == 0 {
		return g.vm.ToValue("")
	}
	// Each separator counts at least one unit, so that joining a huge
	// sparse array with "" is refused too (the loop cannot be interrupted).
	if g.tooBig(float64(n-1) * float64(stringBytes(int64(max(sep.Length(), 1))))) {
		panic(g.capErr(name, "result"))
	}
	var b goja.StringBuilder
	size := int64(0)
	add := func(s goja.String) {
		size += stringBytes(int64(s.Length()))
		if size > g.maxBytes {
			panic(g.capErr(name, "result"))
		}
		b.WriteString(s)
	}
	for i := int64(0); i < n; i++ {
		if i > 0 {
			add(sep)
		}
		e := o.Get(strconv.FormatInt(i, 10))
		if e != nil && !goja.IsUndefined(e) && !goja.IsNull(e) {
			add(g.toStr(e))
		}
	}
	return b.String()
}

// arrayFlat is Array.prototype.flat run with the depth clamped to MaxDepth;
// when the clamp changed the outcome (an array is left in the result), it
// throws instead.
func (g *guard) arrayFlat(c goja.FunctionCall) goja.Value {
	depth := 1.0
	if d := c.Argument(0); !goja.IsUndefined(d) {
		depth = toInteger(d.ToNumber().ToFloat())
	}
	clamped := min(depth, float64(g.maxDepth))
	res := g.origFlat(goja.FunctionCall{This: c.This, Arguments: []goja.Value{g.vm.ToValue(clamped)}})
	if depth > clamped {
		if o, ok := res.(*goja.Object); ok {
			n := toLength(o.Get("length"))
			for i := int64(0); i < n; i++ {
				if g.callIsArray(o.Get(strconv.FormatInt(i, 10))) {
					panic(g.rangeErr(fmt.Sprintf("Array.prototype.flat: nesting deeper than %d levels", g.maxDepth)))
				}
			}
		}
	}
	return res
}

// relIndex resolves a relative start or end argument against length n.
func relIndex(v goja.Value, n int64, dflt int64) int64 {
	if goja.IsUndefined(v) {
		return dflt
	}
	f := toInteger(v.ToNumber().ToFloat())
	if f < 0 {
		return int64(max(float64(n)+f, 0))
	}
	return int64(min(f, float64(n)))
}

// capFill caps Array.prototype.fill on genuine arrays, whose length is a
// plain data property (reading it has no side effect).
func (g *guard) capFill(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		o, ok := c.This.(*goja.Object)
		if !ok || !g.callIsArray(o) {
			return orig(c)
		}
		if isProxy(o) {
			return orig(c)
		}
		n := toLength(o.Get("length"))
		k := relIndex(c.Argument(1), n, 0)
		final := relIndex(c.Argument(2), n, n)
		if final > k && g.tooBig(float64(final-k)*valueBytes) {
			panic(g.capErr("Array.prototype.fill", "array"))
		}
		return orig(goja.FunctionCall{This: o, Arguments: []goja.Value{c.Argument(0), g.vm.ToValue(k), g.vm.ToValue(final)}})
	}
}

// typedWidth is the longest decimal form of one element of a typed array.
func typedWidth(class string) int64 {
	switch class {
	case "Int8Array":
		return 4
	case "Uint8Array", "Uint8ClampedArray":
		return 3
	case "Int16Array":
		return 6
	case "Uint16Array":
		return 5
	case "Int32Array":
		return 11
	case "Uint32Array":
		return 10
	case "BigInt64Array", "BigUint64Array":
		return 20
	}
	return 24 // floats: "-1.7976931348623157e+308"
}

func (g *guard) capTypedJoin(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		o, ok := c.This.(*goja.Object)
		if !ok {
			return orig(c)
		}
		args := c.Arguments
		sepLen := int64(1)
		if s := c.Argument(0); !goja.IsUndefined(s) {
			ss := g.toStr(s)
			sepLen = int64(ss.Length())
			args = []goja.Value{ss}
		}
		n := toLength(o.Get("length"))
		if g.tooBig(float64(n) * float64(stringBytes(typedWidth(o.ClassName())+sepLen))) {
			panic(g.capErr("%TypedArray%.prototype.join", "result"))
		}
		return orig(goja.FunctionCall{This: o, Arguments: args})
	}
}

// capApply makes the argument list of Function.prototype.apply,
// Reflect.apply and Reflect.construct itself (CreateListFromArrayLike: the
// length, then each index, read once), refusing one larger than the cap
// before goja would allocate it.
func (g *guard) capApply(orig func(goja.FunctionCall) goja.Value, idx int) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		if len(c.Arguments) <= idx {
			return orig(c)
		}
		o, ok := c.Arguments[idx].(*goja.Object)
		if !ok {
			return orig(c)
		}
		n := toLength(o.Get("length"))
		if g.tooBig(float64(n) * valueBytes) {
			panic(g.capErr("CreateListFromArrayLike", "argument list"))
		}
		list := make([]any, n)
		for i := range list {
			v := o.Get(strconv.Itoa(i))
			if v == nil {
				v = goja.Undefined()
			}
			list[i] = v
		}
		args := append([]goja.Value(nil), c.Arguments...)
		args[idx] = g.vm.NewArray(list...)
		return orig(goja.FunctionCall{This: c.This, Arguments: args})
	}
}

// ctorCheck returns the construct-time cap check of a proxied constructor,
// or nil.
func (g *guard) ctorCheck(name string) func([]goja.Value) []goja.Value {
	switch {
	case name == "Function" || name == "GeneratorFunction" || name == "AsyncFunction":
		// The parameters and body are source goja parses by recursion:
		// convert them once (the constructor then gets the strings) and
		// refuse a source nesting deep enough to overflow the parser.
		return func(args []goja.Value) []goja.Value {
			strs := make([]goja.Value, len(args))
			var src strings.Builder
			for i, a := range args {
				s := a.ToString()
				strs[i] = s
				src.WriteString(s.String())
				src.WriteByte('\n')
			}
			if err := tsbuild.CheckNesting([]byte(src.String()), g.maxDepth); err != nil {
				panic(g.syntaxErr(name + ": " + err.Error()))
			}
			return g.guardFunctionRegExps(name, strs)
		}
	case name == "ArrayBuffer" || name == "SharedArrayBuffer":
		return func(args []goja.Value) []goja.Value {
			if len(args) == 0 {
				return args
			}
			n := args[0].ToNumber()
			if g.tooBig(toInteger(n.ToFloat())) {
				panic(g.capErr(name, "buffer"))
			}
			args = append([]goja.Value(nil), args...)
			args[0] = n
			return args
		}
	case strings.HasSuffix(name, "Array"):
		return func(args []goja.Value) []goja.Value {
			if len(args) == 0 {
				return args
			}
			size := float64(typedSize(name))
			switch a := args[0].(type) {
			case *goja.Object:
				g.typedSourceCheck(name, a, size)
				switch cls := a.ClassName(); {
				case cls == "ArrayBuffer" || cls == "SharedArrayBuffer":
				case strings.HasSuffix(cls, "Array") && cls != "Array", g.callIsArray(a):
					if g.tooBig(float64(toLength(a.Get("length"))) * size) {
						panic(g.capErr(name, "buffer"))
					}
				}
			default:
				if goja.IsUndefined(a) {
					return args
				}
				n := a.ToNumber()
				if g.tooBig(toInteger(n.ToFloat()) * size) {
					panic(g.capErr(name, "buffer"))
				}
				args = append([]goja.Value(nil), args...)
				args[0] = n
			}
			return args
		}
	}
	return nil
}

// guardFunctionRegExps checks and wraps the regular expression literals of
// the parameters and body given to a Function constructor (see
// tsbuild.GuardRegExpLiterals), each parsed inside the function goja makes
// of them.
func (g *guard) guardFunctionRegExps(name string, strs []goja.Value) []goja.Value {
	if len(strs) == 0 {
		return strs
	}
	head := "(function anonymous("
	switch name {
	case "GeneratorFunction":
		head = "(function* anonymous("
	case "AsyncFunction":
		head = "(async function anonymous("
	}
	parts := make([]string, len(strs))
	for i, s := range strs {
		parts[i] = s.String()
	}
	params := strings.Join(parts[:len(parts)-1], ",")
	body := parts[len(parts)-1]
	guard := func(src, prefix, suffix string) string {
		out, err := tsbuild.GuardRegExpLiterals(src, prefix, suffix)
		if err != nil {
			panic(g.syntaxErr(name + ": " + err.Error()))
		}
		return out
	}
	newParams := guard(params, head, "\n) {\n})")
	newBody := guard(body, head+params+"\n) {\n", "\n})")
	if newParams == params && newBody == body {
		return strs
	}
	return []goja.Value{g.vm.ToValue(newParams), g.vm.ToValue(newBody)}
}

// typedSize is BYTES_PER_ELEMENT of a typed array constructor.
func typedSize(name string) int {
	switch name {
	case "Int8Array", "Uint8Array", "Uint8ClampedArray":
		return 1
	case "Int16Array", "Uint16Array", "Float16Array":
		return 2
	case "Int32Array", "Uint32Array", "Float32Array":
		return 4
	}
	return 8
}
