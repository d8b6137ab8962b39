package jsvalue

import (
	"cmp"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// Default limits of [Realm.ToGo] and [Realm.ToJS]: dsl's, the same as Lua's.
const (
	DefaultMaxDepth = dsl.DefaultMaxDepth
	DefaultMaxNodes = dsl.DefaultMaxNodes
	DefaultMaxBytes = dsl.DefaultMaxBytes
)

// Limits bound the values a [Realm] converts: nesting depth, number of
// values and size in bytes (see dsl.Limits). A zero field takes the realm's
// limit (see [Realm.SetLimits]), which defaults to dsl's.
type Limits = dsl.Limits

// Reasons for refusing a value, as dsl.SnapshotError.Reason.
const (
	reasonUndefined     = "undefined is not lossless JSON"
	reasonNaN           = "NaN is not lossless JSON"
	reasonNegZero       = "-0 is not lossless JSON"
	reasonInf           = "Infinity is not lossless JSON"
	reasonNegInf        = "-Infinity is not lossless JSON"
	reasonBigInt        = "a BigInt is not lossless JSON"
	reasonFunction      = "a function is not lossless JSON"
	reasonSymbol        = "a symbol is not lossless JSON"
	reasonCycle         = "the value contains itself (cycle)"
	reasonSparse        = "a sparse array is not lossless JSON"
	reasonArrayExtra    = "an array with extra properties is not lossless JSON"
	reasonArraySubclass = "an array subclass is not lossless JSON"
	reasonDate          = "a Date is not lossless JSON"
	reasonPrototype     = "an object whose prototype is not Object.prototype is not lossless JSON"
	reasonExotic        = "an exotic object is not lossless JSON"
	reasonAccessor      = "an accessor property is not lossless JSON"
	reasonProxy         = "a Proxy is not lossless JSON"
	reasonSymbolKey     = "a symbol-keyed property is not lossless JSON"
	reasonNonEnumerable = "a non-enumerable property is not lossless JSON"
	reasonLoneSurrogate = "a string with a lone surrogate is not lossless JSON"
	reasonLoneKey       = "a key with a lone surrogate is not lossless JSON"
)

// maxSafeInteger is 2^53: goja keeps some numbers as int64, and beyond this
// magnitude not every one of them is a float64.
const maxSafeInteger = 1 << 53

var (
	boolType    = reflect.TypeFor[bool]()
	int64Type   = reflect.TypeFor[int64]()
	float64Type = reflect.TypeFor[float64]()
	mapType     = reflect.TypeFor[map[string]any]()
)

// descriptorKeys are the properties goja's Object.getOwnPropertyDescriptor
// gives each descriptor object by ordinary assignment (setOwnStr, in
// valuePropToDescriptorObject), which consults
// Object.prototype: a setter there under one of these names would run, and a
// read-only property there would silently leave the descriptor without it.
var descriptorKeys = [...]string{"value", "writable", "get", "set", "enumerable", "configurable"}

// ToGo converts a script's value to the Go form of JSON values (nil, bool,
// float64, string, []any, *dsl.Object) following the pipeline spec's §1.8, or
// returns a *dsl.SnapshotError whose Path starts with root and names the
// first value refused, in own-key order, depth first.
//
// Objects must be ordinary objects whose prototype is Object.prototype or
// null, with only own, enumerable, string-keyed data properties; arrays must
// be ordinary arrays (prototype Array.prototype), dense, without extra
// properties. Keys keep the engine's own-key order: integer-like keys
// ascending, then the others in insertion order. A property named __proto__
// is kept as data. Shared references are copied each time they occur; a
// value that contains itself is refused. Strings are converted from UTF-16 to
// UTF-8; one with a lone surrogate is refused.
//
// ToGo never runs script code. It lists a container's keys from Go
// (Object.GetOwnPropertyNames, and the captured Object.getOwnPropertySymbols
// to refuse symbol keys, enumerable or not), then reads each own property
// once, as the descriptor the captured Object.getOwnPropertyDescriptor
// returns for it, so a getter is reported as an accessor and never invoked.
// It calls those built-ins only on ordinary objects and arrays, on which they
// run no script: a Proxy, function, Date, or object with another prototype or
// internal class is refused from Go-side facts first (ExportType, ClassName,
// Prototype and AssertFunction read Go fields, and call no trap).
//
// Values a Go host put into the runtime are read the same way when they
// present as an array (Runtime.ToValue of any slice, a DynamicArray) or as an
// object exporting map[string]any (Runtime.ToValue of a map[string]any, whose
// keys come in Go's map order, integer-like keys first as for any object);
// their Go methods run, but no script. Other
// Go-backed objects (structs, typed maps, a DynamicObject) are refused as
// exotic.
//
// The built-in makes each descriptor object by assignment, which would call
// a setter that a script installed on Object.prototype under "value",
// "writable", "get", "set", "enumerable" or "configurable" (goja departs
// from the specification here). If Object.prototype has an own property of
// one of those names (the captured Object.hasOwn tells, without calling
// anything), no object or array can be read safely, and ToGo refuses the
// value with a reason that says so instead of reading it.
func (r *Realm) ToGo(v goja.Value, root string, lim Limits) (any, error) {
	c := r.spare
	if c == nil {
		c = &toGo{r: r}
		c.runIn = c.runInput
	} else {
		r.spare = nil // a ToGo that Go code called by this one makes runs on its own state
	}
	lim = r.limitsFor(lim)
	c.root, c.maxDepth, c.maxNodes, c.maxBytes = root, lim.MaxDepth, lim.MaxNodes, lim.MaxBytes
	c.in = v
	ex := r.vm.Try(c.runIn)
	out, err := c.out, c.err
	c.reset()
	r.spare = c
	if ex != nil {
		// Not expected: nothing ToGo calls throws on the values it calls it on.
		return nil, fmt.Errorf("jsvalue: reading the value threw: %w", ex)
	}
	return out, err
}

// goFrame is an array or object being read.
type goFrame struct {
	obj     *goja.Object
	object  bool           // an object, not an array
	keys    []string       // an object's keys, in order
	lone    map[int]string // keys with a lone surrogate: index → path segment
	n, i    int            // children, and the index after the current child
	list    []any          // an array's elements
	vals    []goja.Value   // the children, when the fast path read them
	members []dsl.Member   // an object's members
	slot    *any           // where the finished object goes
}

// scanDepth is how deep the stack gets before the containers on it are kept
// in a map for the cycle check; below it, scanning the stack is cheaper.
const scanDepth = 32

// toGo is the state of one ToGo call. It walks with an explicit stack, so the
// Go stack does not grow with the depth of the value.
type toGo struct {
	r        *Realm
	root     string
	maxDepth int
	maxNodes int
	maxBytes int
	nodes    int
	bytes    int  // the size so far, as Limits.MaxBytes counts it
	checked  bool // Object.prototype was found safe for descriptors
	stack    []goFrame
	open     map[*goja.Object]struct{} // the containers on the stack, once it is deeper than scanDepth
	args     [2]goja.Value             // the arguments of the built-in being called
	members  []dsl.Member              // the members of the open objects, each frame's a slice of it
	keyBuf   []string                  // the fast path's keys of the open objects, like members
	valBuf   []goja.Value              // the fast path's children of the open containers, like members

	// The value to convert and the result, for runIn, which is runInput
	// made once, so that calling it through vm.Try allocates nothing.
	in    goja.Value
	out   any
	err   error
	runIn func()

	result any // the slot run reads the value into: in c, so &result allocates nothing
}

// Beyond these capacities a toGo does not keep its buffers for the next call.
const (
	keepStack   = 256
	keepMembers = 1024
)

func (c *toGo) runInput() { c.out, c.err = c.run(c.in) }

// reset readies c for another call, dropping every reference to this one's
// values.
func (c *toGo) reset() {
	clear(c.stack[:cap(c.stack)])
	c.stack = c.stack[:0]
	if cap(c.stack) > keepStack {
		c.stack = nil
	}
	clear(c.members[:cap(c.members)])
	c.members = c.members[:0]
	if cap(c.members) > keepMembers {
		c.members = nil
	}
	clear(c.keyBuf[:cap(c.keyBuf)])
	c.keyBuf = c.keyBuf[:0]
	clear(c.valBuf[:cap(c.valBuf)])
	c.valBuf = c.valBuf[:0]
	if cap(c.keyBuf) > keepMembers || cap(c.valBuf) > keepMembers {
		c.keyBuf, c.valBuf = nil, nil
	}
	c.open = nil
	c.nodes, c.bytes = 0, 0
	c.checked = false
	c.in, c.out, c.err, c.result = nil, nil, nil, nil
}

func (c *toGo) run(v goja.Value) (any, error) {
	// The result's slot lives in c, which is reused, so that taking its
	// address allocates nothing.
	out := &c.result
	c.nodes, c.bytes = 1, dsl.ValueBytes
	if c.bytes > c.maxBytes {
		return nil, c.fail(reasonBytes)
	}
	if reason := c.enter(v, out); reason != "" {
		return nil, c.fail(reason)
	}
	for len(c.stack) > 0 {
		f := &c.stack[len(c.stack)-1]
		if f.i == f.n {
			c.finish()
			continue
		}
		i := f.i
		f.i++
		if f.vals != nil {
			var slot *any
			if f.object {
				f.members[i].Key = f.keys[i]
				slot = &f.members[i].Value
			} else {
				slot = &f.list[i]
			}
			if reason := c.enter(f.vals[i], slot); reason != "" {
				return nil, c.fail(reason)
			}
			continue
		}
		var key goja.Value
		var slot *any
		if !f.object {
			key = c.r.vm.ToValue(i)
			slot = &f.list[i]
		} else {
			if _, bad := f.lone[i]; bad {
				return nil, c.fail(reasonLoneKey)
			}
			k := f.keys[i]
			f.members[i].Key = k
			key = c.r.vm.ToValue(k)
			slot = &f.members[i].Value
		}
		val, reason := c.read(f.obj, key)
		if reason == "" {
			reason = c.enter(val, slot)
		}
		if reason != "" {
			return nil, c.fail(reason)
		}
	}
	return *out, nil
}

// read reads o's own property key, which must be an enumerable data
// property, through the captured Object.getOwnPropertyDescriptor: it runs no
// script on the ordinary objects and arrays it is given (see [Realm.ToGo]),
// and makes a fresh descriptor object holding own data properties only, so
// reading the descriptor runs nothing either. An accessor's descriptor has
// get and set but no value (and Object.prototype was checked to have none
// either).
func (c *toGo) read(o *goja.Object, key goja.Value) (goja.Value, string) {
	d, _ := c.call(builtinDescriptor, o, key).(*goja.Object)
	if d == nil {
		return nil, "the property could not be read"
	}
	val := d.Get("value")
	if val == nil {
		return nil, reasonAccessor
	}
	if e := d.Get("enumerable"); e == nil || !e.ToBoolean() {
		return nil, reasonNonEnumerable
	}
	return val, ""
}

// call runs a captured built-in with the arguments a and, unless nil, b, as
// [Realm.call] does, without allocating the argument list.
func (c *toGo) call(fn int, a, b goja.Value) goja.Value {
	n := 1
	c.args[0] = a
	if b != nil {
		c.args[1] = b
		n = 2
	}
	v := c.r.builtins[fn](goja.FunctionCall{This: goja.Undefined(), Arguments: c.args[:n]})
	c.args = [2]goja.Value{}
	return v
}

// finish closes the container on top of the stack.
func (c *toGo) finish() {
	f := &c.stack[len(c.stack)-1]
	if f.object {
		// NewObject copies the members; their place in the buffer is free
		// again, as this frame's are the last ones in it.
		*f.slot = dsl.NewObject(f.members...)
		clear(f.members)
		c.members = c.members[:len(c.members)-len(f.members)]
	}
	if f.vals != nil {
		// The fast path's buffers, like members: this frame's are last.
		clear(f.vals)
		c.valBuf = c.valBuf[:len(c.valBuf)-len(f.vals)]
		if f.object {
			clear(f.keys)
			c.keyBuf = c.keyBuf[:len(c.keyBuf)-len(f.keys)]
		}
	}
	if c.open != nil {
		delete(c.open, f.obj)
	}
	c.stack[len(c.stack)-1] = goFrame{}
	c.stack = c.stack[:len(c.stack)-1]
}

// enter converts v into *slot, opening a frame for a container. It returns
// the reason v is refused, or "".
func (c *toGo) enter(v goja.Value, slot *any) string {
	switch x := v.(type) {
	case nil:
		return reasonUndefined
	case *goja.Object:
		return c.enterObject(x, slot)
	case *goja.Symbol: // before goja.String: a symbol exports as a string
		return reasonSymbol
	case goja.String:
		// Measured before it is converted: a string too large is never copied.
		if units, ok := c.r.utf16Units(x); ok {
			n, lone := utf8Size(units)
			if c.bytes += n; c.bytes > c.maxBytes {
				return reasonBytes
			}
			if lone {
				return reasonLoneSurrogate
			}
			*slot = utf16ToString(units, n)
			return ""
		}
		if c.bytes+c.r.sizeBound(x) > c.maxBytes {
			return reasonBytes
		}
		s, ok := goString(x)
		if !ok {
			return reasonLoneSurrogate
		}
		if c.bytes += len(s); c.bytes > c.maxBytes {
			return reasonBytes
		}
		*slot = s
		return ""
	}
	switch {
	case goja.IsUndefined(v):
		return reasonUndefined
	case goja.IsNull(v):
		*slot = nil
		return ""
	case goja.IsBigInt(v):
		return reasonBigInt
	}
	switch v.ExportType() {
	case boolType:
		*slot = v.ToBoolean()
	case int64Type:
		i := v.ToInteger()
		if i > maxSafeInteger || i < -maxSafeInteger {
			return "integer " + strconv.FormatInt(i, 10) + " is outside ±2^53"
		}
		*slot = float64(i)
	case float64Type:
		f := v.ToFloat()
		switch {
		case math.IsNaN(f):
			return reasonNaN
		case math.IsInf(f, 1):
			return reasonInf
		case math.IsInf(f, -1):
			return reasonNegInf
		case f == 0 && math.Signbit(f):
			return reasonNegZero
		}
		*slot = f
	default:
		return fmt.Sprintf("a %v value is not lossless JSON", v.ExportType())
	}
	return ""
}

// enterObject classifies o from Go-side facts only, then opens it.
func (c *toGo) enterObject(o *goja.Object, slot *any) string {
	if c.r.fast != nil {
		if reason, done := c.openFast(o, slot); done {
			return reason
		}
	}
	if isProxy(o) {
		return reasonProxy
	}
	if _, ok := goja.AssertFunction(o); ok {
		return reasonFunction
	}
	class, proto := o.ClassName(), o.Prototype()
	switch {
	case class == "Array":
		if proto != c.r.arrayProto {
			return reasonArraySubclass
		}
		return c.openArray(o, slot)
	case class == "Date":
		return reasonDate
	case proto != nil && proto != c.r.objectProto:
		return reasonPrototype
	case class != "Object":
		return article(class) + " " + class + " object is not lossless JSON"
	case o.ExportType() != mapType:
		// A Go struct, typed map or DynamicObject; or a Map, Set, typed
		// array or Promise whose prototype a script set to Object.prototype.
		return reasonExotic
	}
	return c.openObject(o, slot)
}

// openFast opens o through the fast path (see fast.go) when o is a shape it
// knows; done is false when the built-in path must read o instead.
func (c *toGo) openFast(o *goja.Object, slot *any) (reason string, done bool) {
	l := c.r.fast
	k0, v0 := len(c.keyBuf), len(c.valBuf)
	keys, vals, object := c.keyBuf, c.valBuf, true
	room := c.maxNodes - c.nodes
	keys, vals, res := l.object(o, c.r.objectProto, keys, vals, room, c.maxBytes-c.bytes)
	if res == fastNo {
		object = false
		var ok bool
		if vals, ok = l.array(o, c.r.arrayProto, vals); !ok {
			return "", false
		}
		res = fastOK
	}
	n := len(vals) - v0
	c.keyBuf, c.valBuf = keys, vals
	undo := func() {
		clear(c.keyBuf[k0:])
		clear(c.valBuf[v0:])
		c.keyBuf, c.valBuf = c.keyBuf[:k0], c.valBuf[:v0]
	}
	if c.isOpen(o) {
		undo()
		return reasonCycle, true
	}
	if len(c.stack)+1 > c.maxDepth {
		undo()
		return c.tooDeep(), true
	}
	if res == fastTooMany || n > c.maxNodes-c.nodes {
		undo()
		return c.tooMany(), true
	}
	if res == fastTooBig || !c.addBytes(n, c.keyBuf[k0:]) {
		undo()
		return reasonBytes, true
	}
	f := goFrame{obj: o, object: object, n: n, vals: c.valBuf[v0 : v0+n : v0+n]}
	if n == 0 {
		f.vals = []goja.Value{} // not nil: the frame is a fast one
	}
	if object {
		f.keys = c.keyBuf[k0 : k0+n : k0+n]
		start := len(c.members)
		c.members = slices.Grow(c.members, n)[:start+n]
		f.members = c.members[start : start+n : start+n]
		f.slot = slot
	} else {
		f.list = make([]any, n)
		*slot = f.list
	}
	c.push(f)
	return "", true
}

// article returns the indefinite article for a class name.
func article(class string) string {
	if class != "" && strings.ContainsRune("AEIOUaeiou", rune(class[0])) {
		return "an"
	}
	return "a"
}

// openCheck is what opening any container starts with.
func (c *toGo) openCheck(o *goja.Object) string {
	if !c.checked {
		if reason := c.checkObjectProto(); reason != "" {
			return reason
		}
		c.checked = true
	}
	if c.isOpen(o) {
		return reasonCycle
	}
	if len(c.stack)+1 > c.maxDepth {
		return c.tooDeep()
	}
	return ""
}

// checkObjectProto makes sure that Object.prototype has no own property
// named like a descriptor's, asking the captured Object.hasOwn, which reads
// the own property table of the intrinsic Object.prototype (an ordinary
// object) and calls nothing.
func (c *toGo) checkObjectProto() string {
	for _, k := range c.r.descriptorKeyValues {
		if c.call(builtinHasOwn, c.r.objectProto, k).ToBoolean() {
			// Name the first one in Object.prototype's own key order.
			for _, name := range c.r.objectProto.GetOwnPropertyNames() {
				for _, k := range descriptorKeys {
					if name == k {
						return "Object.prototype has a property named " + strconv.Quote(k) +
							", so the value cannot be read without running script code"
					}
				}
			}
		}
	}
	return ""
}

// isOpen reports whether o is a container on the stack.
func (c *toGo) isOpen(o *goja.Object) bool {
	if c.open != nil {
		_, ok := c.open[o]
		return ok
	}
	for i := range c.stack {
		if c.stack[i].obj == o {
			return true
		}
	}
	return false
}

// Reasons that stand for exceeding a limit; fail words them (see dsl.Limits).
const (
	reasonDepth = "\x00depth"
	reasonNodes = "\x00nodes"
	reasonBytes = "\x00bytes"
)

// tooMany is the reason for exceeding MaxNodes.
func (c *toGo) tooMany() string { return reasonNodes }

// tooDeep is the reason for exceeding MaxDepth.
func (c *toGo) tooDeep() string { return reasonDepth }

// addBytes counts a container's n children and its keys, and reports
// whether the size is still within MaxBytes.
func (c *toGo) addBytes(n int, keys []string) bool {
	c.bytes += dsl.ValueBytes * n
	for _, k := range keys {
		c.bytes += len(k)
	}
	return c.bytes <= c.maxBytes
}

// hasSymbols reports whether o has a symbol key, enumerable or not, asking
// the captured Object.getOwnPropertySymbols (o.Symbols lists only the
// enumerable ones). It reads o's own key table, calling nothing.
func (c *toGo) hasSymbols(o *goja.Object) bool {
	syms, _ := c.call(builtinSymbols, o, nil).(*goja.Object)
	// A fresh array: length is a Go field, read as an own data property.
	return syms == nil || syms.Get("length").ToInteger() != 0
}

// openArray checks an array's shape: its own string keys are the indices
// first, ascending, then "length", then any other key.
func (c *toGo) openArray(o *goja.Object, slot *any) string {
	if reason := c.openCheck(o); reason != "" {
		return reason
	}
	// length is a Go field of goja's array, read as an own data property.
	length := o.Get("length").ToInteger()
	if length > int64(c.maxNodes-c.nodes) {
		// Too long to read; but a long sparse array is only a few keys.
		if reason := arrayShape(o.GetOwnPropertyNames(), length); reason != "" {
			return reason
		}
		return c.tooMany()
	}
	if reason := arrayShape(o.GetOwnPropertyNames(), length); reason != "" {
		return reason
	}
	if c.hasSymbols(o) {
		return reasonSymbolKey
	}
	n := int(length)
	if !c.addBytes(n, nil) {
		return reasonBytes
	}
	list := make([]any, n)
	*slot = list
	c.push(goFrame{obj: o, n: n, list: list})
	return ""
}

// arrayShape checks the own string keys of an array of the given length, in
// own-key order: dense indices, then length, and nothing else.
func arrayShape(keys []string, length int64) string {
	present := int64(0)
	for _, k := range keys {
		if k == "length" {
			continue
		}
		if i, ok := arrayIndex(k); !ok || i >= length {
			return reasonArrayExtra
		}
		present++
	}
	if present != length {
		return reasonSparse
	}
	return ""
}

// openObject lists an ordinary object's keys.
func (c *toGo) openObject(o *goja.Object, slot *any) string {
	if reason := c.openCheck(o); reason != "" {
		return reason
	}
	if c.hasSymbols(o) {
		return reasonSymbolKey
	}
	// The own string keys, in own-key order, read from Go.
	keys := o.GetOwnPropertyNames()
	if len(keys) > c.maxNodes-c.nodes {
		return c.tooMany()
	}
	if !c.addBytes(len(keys), keys) {
		return reasonBytes
	}
	integerKeysFirst(keys)
	var lone map[int]string
	for _, k := range keys {
		if strings.Contains(k, "\uFFFD") {
			lone = c.loneKeys(o, keys)
			break
		}
	}
	// The frame's members are a slice of the shared buffer: when opening a
	// child object grows the buffer into a new array, the frame and the
	// slots its children write to keep the old one, and no two open
	// objects' members overlap.
	n := len(keys)
	start := len(c.members)
	c.members = slices.Grow(c.members, n)[:start+n]
	c.push(goFrame{obj: o, object: true, keys: keys, lone: lone, n: n, members: c.members[start : start+n : start+n], slot: slot})
	return ""
}

// integerKeysFirst puts integer-like keys first, ascending, keeping the order
// of the others, as JavaScript orders an object's own keys. An ordinary
// object lists them so already; a Go map lists its keys in Go's map order.
func integerKeysFirst(keys []string) {
	other, last := false, int64(-1)
	for _, k := range keys {
		i, ok := arrayIndex(k)
		if !ok {
			other = true
			continue
		}
		if other || i <= last {
			slices.SortStableFunc(keys, compareOwnKeys)
			return
		}
		last = i
	}
}

// compareOwnKeys orders integer-like keys before the others, ascending, and
// finds all the others equal.
func compareOwnKeys(a, b string) int {
	i, aok := arrayIndex(a)
	j, bok := arrayIndex(b)
	switch {
	case aok && bok:
		return cmp.Compare(i, j)
	case aok:
		return -1
	case bok:
		return 1
	}
	return 0
}

// push opens a frame.
func (c *toGo) push(f goFrame) {
	c.nodes += f.n
	c.stack = append(c.stack, f)
	switch {
	case c.open != nil:
		c.open[f.obj] = struct{}{}
	case len(c.stack) > scanDepth:
		c.open = make(map[*goja.Object]struct{}, 2*len(c.stack))
		for i := range c.stack {
			c.open[c.stack[i].obj] = struct{}{}
		}
	}
}

// loneKeys finds o's keys that hold a lone surrogate. goja hands keys to Go
// decoded, with U+FFFD in place of a lone surrogate, so for each key holding
// U+FFFD the exact key is read from the built-in Object.getOwnPropertyNames,
// which lists the same keys in the same order as JavaScript strings.
func (c *toGo) loneKeys(o *goja.Object, keys []string) map[int]string {
	names, _ := c.call(builtinOwnNames, o, nil).(*goja.Object)
	var lone map[int]string
	for i, k := range keys {
		if !strings.Contains(k, "\uFFFD") {
			continue
		}
		s, ok := names.Get(strconv.Itoa(i)).(goja.String)
		if !ok {
			continue
		}
		if units := codeUnits(s); hasLoneSurrogate(units) {
			if lone == nil {
				lone = make(map[int]string)
			}
			lone[i] = loneKeySegment(units)
		}
	}
	return lone
}

// arrayIndex parses a canonical array index: decimal without leading zeros,
// below 2^32-1.
func arrayIndex(s string) (int64, bool) {
	if s == "" || len(s) > 10 || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, n < math.MaxUint32
}

// fail returns the error for reason at the current position: the root, then
// the child each open container is at.
func (c *toGo) fail(reason string) error {
	var b strings.Builder
	dsl.WritePath(&b, c.root, len(c.stack), func(b *strings.Builder, i int) {
		f := &c.stack[i]
		at := f.i - 1
		switch {
		case !f.object:
			dsl.WritePathIndex(b, at)
		case f.lone[at] != "":
			b.WriteString(f.lone[at])
		default:
			dsl.WritePathKey(b, f.keys[at])
		}
	})
	switch reason {
	case reasonDepth:
		return dsl.DepthError(b.String(), c.maxDepth)
	case reasonNodes:
		return dsl.NodesError(b.String(), c.maxNodes)
	case reasonBytes:
		return dsl.BytesError(b.String(), c.maxBytes)
	}
	return &dsl.SnapshotError{Path: b.String(), Reason: reason}
}
