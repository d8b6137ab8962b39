package js

import (
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// Inspect bounds of a program's console (§3.4, §7), and node's layout
// constants (util.inspect's defaults).
const (
	inspectDepth       = 4
	inspectMaxArray    = 100
	inspectMaxString   = 10_000
	inspectBreakLength = 80
	inspectCompact     = 3
	// inspectMaxNodes bounds the values one log entry renders (100 items
	// at each of 5 levels would be 10^10): past it, values render as "...".
	inspectMaxNodes = 100_000
	// maxProtoWalk bounds prototype-chain walks.
	maxProtoWalk = 1000
)

var (
	proxyType       = reflect.TypeOf(goja.Proxy{})
	classType       = reflect.TypeOf((func(goja.ConstructorCall) *goja.Object)(nil))
	setType         = reflect.TypeOf([]any(nil))
	mapType         = reflect.TypeOf([][2]any(nil))
	arrayBufferType = reflect.TypeOf(goja.ArrayBuffer{})
	stringType      = reflect.TypeOf("")
	promiseType     = reflect.TypeOf((*goja.Promise)(nil))
	bigIntType      = reflect.TypeOf((*big.Int)(nil))
	timeType        = reflect.TypeOf(time.Time{})
)

// descriptorFields are what Object.getOwnPropertyDescriptor writes into its
// result with ordinary assignments: a setter under one of these names on
// Object.prototype would run, so descriptors are not read then.
var descriptorFields = [...]string{"value", "writable", "get", "set", "enumerable", "configurable"}

func isProxy(obj *goja.Object) bool { return obj.ExportType() == proxyType }

type propKind uint8

const (
	propAbsent propKind = iota
	propData
	propAccessor
	propUnknown // could not be read without running script code
)

// prop is one own property as its descriptor tells it.
type prop struct {
	kind           propKind
	value          goja.Value
	getter, setter bool
	enumerable     bool
}

// polluted reports whether Object.prototype has a property under a
// descriptor field's name (see descriptorFields).
func (r *programRun) polluted() bool {
	for _, k := range r.intr.objectProto.GetOwnPropertyNames() {
		for _, f := range descriptorFields {
			if k == f {
				return true
			}
		}
	}
	return false
}

// own reads obj's own property key (a string or a *goja.Symbol) through the
// captured Object.getOwnPropertyDescriptor, running no script code: obj is
// not a Proxy and the caller checked polluted.
func (r *programRun) own(obj *goja.Object, key goja.Value) (p prop) {
	if isProxy(obj) {
		return prop{kind: propUnknown}
	}
	dv, err := r.intr.gopd(goja.Undefined(), obj, key)
	if err != nil {
		return prop{kind: propUnknown}
	}
	desc, ok := dv.(*goja.Object)
	if !ok {
		return prop{kind: propAbsent}
	}
	fields := desc.Keys()
	has := func(f string) bool {
		for _, k := range fields {
			if k == f {
				return true
			}
		}
		return false
	}
	p.enumerable = has("enumerable") && desc.Get("enumerable").ToBoolean()
	if has("value") {
		p.kind, p.value = propData, desc.Get("value")
		return p
	}
	p.kind = propAccessor
	p.getter = has("get") && !goja.IsUndefined(desc.Get("get"))
	p.setter = has("set") && !goja.IsUndefined(desc.Get("set"))
	return p
}

// renderLog is one console call's entry: strings raw, anything else
// inspect-style, joined with spaces.
func (r *programRun) renderLog(args []goja.Value) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if goja.IsString(a) {
			b.WriteString(a.String())
			continue
		}
		in := inspector{r: r, polluted: r.polluted()}
		b.WriteString(in.value(a, 0))
	}
	return b.String()
}

// inspector renders one value as node's util.inspect does with depth 4,
// maxArrayLength 100 and maxStringLength 10,000, reading it Go-side: no
// getter, toString, Proxy trap or other script code runs.
type inspector struct {
	r            *programRun
	polluted     bool
	seen         []*goja.Object
	refs         map[*goja.Object]int
	indent       int
	currentDepth int
	nodes        int
	// indices caches the own index keys of the arrays whose holes were
	// counted (see holes), sorted.
	indices map[*goja.Object][]int
}

// holeProbe is how many indices past a hole the inspector looks at one by
// one before it finds the next element from the array's own keys.
const holeProbe = 64

// holes counts the run of absent elements of obj from i (absent itself),
// below n: index by index up to holeProbe, then from the sorted own index
// keys, so that a sparse array of length 2^32-1 costs its present
// elements, not its 4 billion holes.
func (in *inspector) holes(obj *goja.Object, i, n int) int {
	holes := 1
	for ; holes < holeProbe && i+holes < n; holes++ {
		if in.r.own(obj, in.r.vm.ToValue(strconv.Itoa(i+holes))).kind != propAbsent {
			return holes
		}
	}
	if i+holes >= n {
		return n - i
	}
	idx, ok := in.indices[obj]
	if !ok {
		for _, k := range obj.GetOwnPropertyNames() {
			if isIndex(k) {
				j, _ := strconv.Atoi(k)
				idx = append(idx, j)
			}
		}
		slices.Sort(idx)
		if in.indices == nil {
			in.indices = make(map[*goja.Object][]int)
		}
		in.indices[obj] = idx
	}
	j, _ := slices.BinarySearch(idx, i+holes)
	if j < len(idx) && idx[j] < n {
		return idx[j] - i
	}
	return n - i
}

// halted reports whether the run has been stopped (a budget, the wall
// ceiling, an abort): the inspector then stops where it is.
func (r *programRun) halted() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fail != nil
}

func (in *inspector) value(v goja.Value, recurse int) string {
	in.nodes++
	if in.nodes > inspectMaxNodes {
		return "..."
	}
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	case goja.IsString(v):
		return quoteInspect(v.String(), true)
	}
	switch x := v.(type) {
	case *goja.Symbol:
		return "Symbol(" + x.String() + ")"
	case *goja.Object:
		return in.object(x, recurse)
	}
	if v.ExportType() == bigIntType {
		return v.String() + "n"
	}
	if goja.IsNumber(v) {
		f := v.ToFloat()
		if f == 0 && math.Signbit(f) {
			return "-0"
		}
	}
	return v.String()
}

// ctorName is the name of obj's constructor as node finds it (the first
// prototype with a named "constructor"), null when obj has no prototype,
// ok false when it cannot be read.
func (in *inspector) ctorName(obj *goja.Object) (name string, null, ok bool) {
	p := obj.Prototype()
	if p == nil {
		return "", true, true
	}
	for range maxProtoWalk {
		if p == nil || isProxy(p) || in.polluted {
			return "", false, false
		}
		c := in.r.own(p, in.r.vm.ToValue("constructor"))
		if c.kind == propData {
			fn, isObj := c.value.(*goja.Object)
			for range maxProtoWalk { // jsguard wraps constructors in proxies
				if !isObj || !isProxy(fn) {
					break
				}
				px, _ := fn.Export().(goja.Proxy)
				fn = px.Target()
				isObj = fn != nil
			}
			if isObj && !isProxy(fn) {
				if n := in.r.own(fn, in.r.vm.ToValue("name")); n.kind == propData && goja.IsString(n.value) && n.value.String() != "" {
					return n.value.String(), false, true
				}
			}
		}
		p = p.Prototype()
	}
	return "", false, false
}

func (in *inspector) object(obj *goja.Object, recurse int) string {
	for range maxProtoWalk { // node shows a Proxy's target
		if !isProxy(obj) {
			break
		}
		px, _ := obj.Export().(goja.Proxy)
		t := px.Target()
		if t == nil {
			return "<Revoked Proxy>"
		}
		obj = t
	}
	if isProxy(obj) {
		return "[Proxy]"
	}
	for i, s := range in.seen {
		if s == obj {
			if in.refs == nil {
				in.refs = map[*goja.Object]int{}
			}
			n, ok := in.refs[in.seen[i]]
			if !ok {
				n = len(in.refs) + 1
				in.refs[in.seen[i]] = n
			}
			return "[Circular *" + strconv.Itoa(n) + "]"
		}
	}
	class := obj.ClassName()
	if class == "Error" {
		return in.errorValue(obj, recurse)
	}
	if in.polluted {
		if _, fn := goja.AssertFunction(obj); fn {
			return "[Function]"
		}
		return "[Object]"
	}
	switch obj.ExportType() {
	case timeType:
		t, _ := obj.Export().(time.Time)
		if t.IsZero() {
			return "Invalid Date"
		}
		return t.UTC().Format("2006-01-02T15:04:05.000Z")
	case promiseType:
		p, _ := obj.Export().(*goja.Promise)
		in.push(obj, recurse)
		defer in.pop()
		var s string
		switch p.State() {
		case goja.PromiseStatePending:
			s = "<pending>"
		case goja.PromiseStateRejected:
			s = "<rejected> " + in.child(p.Result(), recurse+1)
		default:
			s = in.child(p.Result(), recurse+1)
		}
		return in.ref(obj, in.reduce([]string{s}, "", "Promise {", "}", false, recurse+1, nil))
	}
	name, null, ok := in.ctorName(obj)
	if _, fn := goja.AssertFunction(obj); fn {
		return in.function(obj, name, null, ok, recurse)
	}
	if base, isBoxed := in.boxed(obj, class); isBoxed {
		return in.withKeys(obj, base, recurse, class == "String")
	}
	switch t := obj.ExportType(); {
	case class == "RegExp":
		return in.regexp(obj, name, null, ok, recurse)
	case class != "Object":
	case t == setType:
		return in.set(obj, name, null, ok, recurse)
	case t == mapType:
		return in.mapValue(obj, name, null, ok, recurse)
	case ok && (name == "WeakMap" || name == "WeakSet") && in.isWeak(obj, name):
		return in.opaque(obj, name, name, null, ok, recurse)
	case t == arrayBufferType:
		return in.arrayBuffer(obj, name, null, ok, recurse)
	case t != nil && t.Kind() == reflect.Slice && typedElems[t.Elem().Kind()]:
		return in.typedArray(obj, name, null, ok, recurse)
	}
	isArray := class == "Array"
	if recurse > inspectDepth {
		if isArray {
			return cut(name, null, ok, "Array")
		}
		return cut(name, null, ok, "Object")
	}
	in.push(obj, recurse)
	defer in.pop()
	if isArray {
		return in.ref(obj, in.array(obj, name, null, ok, recurse+1))
	}
	prefix := ""
	switch {
	case null:
		prefix = "[Object: null prototype] "
	case ok && name != "Object":
		prefix = name + " "
	}
	out := in.keyed(obj, nil, recurse+1)
	if len(out) == 0 {
		return in.ref(obj, prefix+"{}")
	}
	return in.ref(obj, in.reduce(out, "", prefix+"{", "}", false, recurse+1, nil))
}

// cut is an object past the depth limit: "[Name]", after its constructor,
// or the fallback when that cannot be read.
func cut(name string, null, ok bool, fallback string) string {
	switch {
	case null:
		return "[" + fallback + ": null prototype]"
	case !ok:
		return "[" + fallback + "]"
	}
	return "[" + name + "]"
}

// keyed are obj's own enumerable properties as "key: value" entries,
// string keys (but those skip reports) then symbols, as node lists them.
func (in *inspector) keyed(obj *goja.Object, skip func(string) bool, recurse int) []string {
	keys := obj.Keys()
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if skip != nil && skip(k) {
			continue
		}
		out = append(out, in.property(obj, in.r.vm.ToValue(k), inspectKey(k), recurse))
	}
	for _, sym := range obj.Symbols() {
		if p := in.r.own(obj, sym); p.kind == propUnknown || !p.enumerable {
			continue
		}
		out = append(out, in.property(obj, sym, "[Symbol("+sym.String()+")]", recurse))
	}
	return out
}

// prefixed is node's type prefix of a collection: "Map(2) ", or the
// constructor's name when it is not the type's own, or the null-prototype
// form.
func prefixed(typ, size, name string, null, ok bool) string {
	switch {
	case null:
		return "[" + typ + size + ": null prototype] "
	case !ok || name == typ:
		return typ + size + " "
	}
	return name + size + " [" + typ + "] "
}

// withKeys is base followed by obj's own enumerable properties in braces,
// or base alone when it has none (functions, boxed primitives, errors).
func (in *inspector) withKeys(obj *goja.Object, base string, recurse int, stringBox bool) string {
	var skip func(string) bool
	if stringBox {
		skip = isIndex
	}
	if recurse > inspectDepth {
		return base
	}
	in.push(obj, recurse)
	defer in.pop()
	out := in.keyed(obj, skip, recurse+1)
	if len(out) == 0 {
		return in.ref(obj, base)
	}
	return in.ref(obj, in.reduce(out, base, "{", "}", false, recurse+1, nil))
}

func isIndex(k string) bool {
	i, err := strconv.Atoi(k)
	return err == nil && i >= 0 && strconv.Itoa(i) == k
}

// errorValue is an error's stack, mapped to the program's source, then its
// own enumerable properties.
func (in *inspector) errorValue(obj *goja.Object, recurse int) string {
	stack := in.r.mapStack(in.r.loop.Thrown(in.r.vm, obj).Stack)
	if in.indent > 0 {
		stack = strings.ReplaceAll(stack, "\n", "\n"+strings.Repeat(" ", in.indent))
	}
	if in.polluted {
		return stack
	}
	return in.withKeys(obj, stack, recurse, false)
}

// function is node's getFunctionBase (and getClassBase for classes): the
// kind from the constructor's name (AsyncFunction, GeneratorFunction),
// the own "name", then any own enumerable properties.
func (in *inspector) function(obj *goja.Object, ctor string, null, ok bool, recurse int) string {
	fname := ""
	if n := in.r.own(obj, in.r.vm.ToValue("name")); n.kind == propData && goja.IsString(n.value) {
		fname = n.value.String()
	}
	var base string
	if obj.ExportType() == classType {
		if fname == "" {
			fname = "(anonymous)"
		}
		base = "class " + fname
		if ok && !null && ctor != "Function" {
			base += " [" + ctor + "]"
		}
		switch {
		case null:
			base += " extends [null prototype]"
		default:
			if p := obj.Prototype(); p != nil && !isProxy(p) {
				if n := in.r.own(p, in.r.vm.ToValue("name")); n.kind == propData && goja.IsString(n.value) && n.value.String() != "" {
					base += " extends " + n.value.String()
				}
			}
		}
		return in.withKeys(obj, "["+base+"]", recurse, false)
	}
	typ := "Function"
	switch ctor {
	case "AsyncFunction", "GeneratorFunction", "AsyncGeneratorFunction":
		typ = ctor
	}
	base = "[" + typ
	if null {
		base += " (null prototype)"
	}
	if fname == "" {
		base += " (anonymous)]"
	} else {
		base += ": " + fname + "]"
	}
	if ok && !null && ctor != typ {
		base += " " + ctor
	}
	return in.withKeys(obj, base, recurse, false)
}

// boxed is node's "[Number: 1]" of a primitive wrapper object, read
// Go-side: goja exports a wrapper's primitive without running code.
func (in *inspector) boxed(obj *goja.Object, class string) (string, bool) {
	switch class {
	case "Number", "Boolean":
		return "[" + class + ": " + in.value(in.r.vm.ToValue(obj.Export()), 0) + "]", true
	case "String":
		return "[String: " + quoteInspect(in.stringBox(obj), true) + "]", true
	}
	switch obj.ExportType() {
	case bigIntType:
		b, _ := obj.Export().(*big.Int)
		return "[BigInt: " + b.String() + "n]", true
	case stringType: // a Symbol wrapper exports its description
		return "[Symbol: Symbol(" + obj.Export().(string) + ")]", true
	}
	return "", false
}

// stringBox is a String wrapper's string, read from its own index
// properties (at most inspectMaxString+1 of them).
func (in *inspector) stringBox(obj *goja.Object) string {
	n := 0
	if l := in.r.own(obj, in.r.vm.ToValue("length")); l.kind == propData {
		n = int(l.value.ToInteger())
	}
	var b strings.Builder
	for i := range min(n, inspectMaxString+1) {
		if p := in.r.own(obj, in.r.vm.ToValue(strconv.Itoa(i))); p.kind == propData {
			b.WriteString(p.value.String())
		}
	}
	return b.String()
}

// opaque is a Map or RegExp, whose contents goja keeps where only
// program-replaceable methods read them: its own properties, and a marker.
func (in *inspector) opaque(obj *goja.Object, typ, name string, null, ok bool, recurse int) string {
	if recurse > inspectDepth {
		return cut(name, null, ok, typ)
	}
	in.push(obj, recurse)
	defer in.pop()
	out := append([]string{"<" + opaqueWhat[typ] + " unknown>"}, in.keyed(obj, nil, recurse+1)...)
	return in.ref(obj, in.reduce(out, "", prefixed(typ, "", name, null, ok)+"{", "}", false, recurse+1, nil))
}

var opaqueWhat = map[string]string{"Map": "entries", "RegExp": "source", "WeakMap": "items", "WeakSet": "items"}

// isWeak reports whether obj, whose constructor is named name, is a WeakMap
// or WeakSet: the captured has accepts only its own kind of receiver.
func (in *inspector) isWeak(obj *goja.Object, name string) bool {
	has := in.r.intr.weakMapHas
	if name == "WeakSet" {
		has = in.r.intr.weakSetHas
	}
	_, err := has(obj, goja.Undefined())
	return err == nil
}

// regexp is node's "/source/flags", read through the captured getters
// (RegExp.prototype.flags would read properties the program may have
// redefined), then the own enumerable properties.
func (in *inspector) regexp(obj *goja.Object, name string, null, ok bool, recurse int) string {
	src, err := in.r.intr.reSource(obj)
	if err != nil {
		return in.opaque(obj, "RegExp", name, null, ok, recurse)
	}
	var b strings.Builder
	b.WriteByte('/')
	b.WriteString(src.String())
	b.WriteByte('/')
	for _, f := range in.r.intr.reFlags {
		if v, err := f.get(obj); err == nil && v.ToBoolean() {
			b.WriteByte(f.letter)
		}
	}
	base := b.String()
	switch {
	case null:
		base = "[RegExp: null prototype] " + base
	case ok && name != "RegExp":
		base = name + " " + base
	}
	return in.withKeys(obj, base, recurse, false)
}

// mapValue is node's "Map(n) { k => v }": the size and at most 100 entries
// read through the captured natives, which call no program code.
func (in *inspector) mapValue(obj *goja.Object, name string, null, ok bool, recurse int) string {
	if recurse > inspectDepth {
		return cut(name, null, ok, "Map")
	}
	intr := &in.r.intr
	sv, err := intr.mapSize(obj)
	if err != nil {
		return in.opaque(obj, "Map", name, null, ok, recurse)
	}
	size := int(sv.ToInteger())
	it, err := intr.mapEntries(obj)
	if err != nil {
		return in.opaque(obj, "Map", name, null, ok, recurse)
	}
	in.push(obj, recurse)
	defer in.pop()
	out := make([]string, 0, min(size, inspectMaxArray)+1)
	for len(out) < min(size, inspectMaxArray) {
		rv, err := intr.mapIterNext(it)
		res, isObj := rv.(*goja.Object)
		if err != nil || !isObj || res.Get("done").ToBoolean() {
			break
		}
		pair, isPair := res.Get("value").(*goja.Object)
		if !isPair {
			break
		}
		out = append(out, in.child(pair.Get("0"), recurse+1)+" => "+in.child(pair.Get("1"), recurse+1))
	}
	if more := size - len(out); more > 0 {
		out = append(out, moreItems(more))
	}
	out = append(out, in.keyed(obj, nil, recurse+1)...)
	open := prefixed("Map", "("+strconv.Itoa(size)+")", name, null, ok)
	if len(out) == 0 {
		return in.ref(obj, open+"{}")
	}
	return in.ref(obj, in.reduce(out, "", open+"{", "}", false, recurse+1, nil))
}

// set is node's "Set(n) { a, b }", its values read Go-side (goja exports
// a Set into a slice of values without running code), at most 100.
func (in *inspector) set(obj *goja.Object, name string, null, ok bool, recurse int) string {
	if recurse > inspectDepth {
		return cut(name, null, ok, "Set")
	}
	var vals []goja.Value
	if err := in.r.vm.ExportTo(obj, &vals); err != nil {
		return cut(name, null, ok, "Set")
	}
	in.push(obj, recurse)
	defer in.pop()
	out := make([]string, 0, min(len(vals), inspectMaxArray)+1)
	for _, v := range vals[:min(len(vals), inspectMaxArray)] {
		out = append(out, in.child(v, recurse+1))
	}
	if more := len(vals) - inspectMaxArray; more > 0 {
		out = append(out, moreItems(more))
	}
	out = append(out, in.keyed(obj, nil, recurse+1)...)
	open := prefixed("Set", "("+strconv.Itoa(len(vals))+")", name, null, ok)
	if len(out) == 0 {
		return in.ref(obj, open+"{}")
	}
	return in.ref(obj, in.reduce(out, "", open+"{", "}", false, recurse+1, nil))
}

func moreItems(n int) string {
	s := "... " + strconv.Itoa(n) + " more item"
	if n > 1 {
		s += "s"
	}
	return s
}

// typedElems are the element kinds of typed arrays' exports.
var typedElems = map[reflect.Kind]bool{
	reflect.Uint8: true, reflect.Int8: true, reflect.Uint16: true, reflect.Int16: true,
	reflect.Uint32: true, reflect.Int32: true, reflect.Float32: true, reflect.Float64: true,
	reflect.Int64: true, reflect.Uint64: true,
}

// typedArray is node's "Uint8Array(3) [ 1, 2, 3 ]", the elements read from
// goja's export (a view of the buffer, no code runs), grouped as an
// array's numbers are.
func (in *inspector) typedArray(obj *goja.Object, name string, null, ok bool, recurse int) string {
	rv := reflect.ValueOf(obj.Export())
	typ := typedNames[rv.Type().Elem().Kind()]
	if typ == "Uint8Array" && ok && name == "Uint8ClampedArray" {
		typ = name
	}
	if recurse > inspectDepth {
		return cut(name, null, ok, typ)
	}
	n := rv.Len()
	shown := min(n, inspectMaxArray)
	out := make([]string, 0, shown+1)
	for i := range shown {
		var s string
		switch e := rv.Index(i); e.Kind() {
		case reflect.Int64:
			s = strconv.FormatInt(e.Int(), 10) + "n"
		case reflect.Uint64:
			s = strconv.FormatUint(e.Uint(), 10) + "n"
		case reflect.Float32, reflect.Float64:
			s = in.value(in.r.vm.ToValue(e.Float()), recurse+1)
		case reflect.Int8, reflect.Int16, reflect.Int32:
			s = strconv.FormatInt(e.Int(), 10)
		default:
			s = strconv.FormatUint(e.Uint(), 10)
		}
		out = append(out, s)
	}
	if n > shown {
		out = append(out, moreItems(n-shown))
	}
	open := prefixed(typ, "("+strconv.Itoa(n)+")", name, null, ok)
	if n == 0 {
		return open + "[]"
	}
	in.push(obj, recurse)
	defer in.pop()
	return in.ref(obj, in.reduce(out, "", open+"[", "]", true, recurse+1, &arrayInfo{items: shown, more: n > shown, numbers: true}))
}

var typedNames = map[reflect.Kind]string{
	reflect.Uint8: "Uint8Array", reflect.Int8: "Int8Array", reflect.Uint16: "Uint16Array", reflect.Int16: "Int16Array",
	reflect.Uint32: "Uint32Array", reflect.Int32: "Int32Array", reflect.Float32: "Float32Array", reflect.Float64: "Float64Array",
	reflect.Int64: "BigInt64Array", reflect.Uint64: "BigUint64Array",
}

// inspectMaxBytes is how many bytes of an ArrayBuffer node shows.
const inspectMaxBytes = 50

// arrayBuffer is node's "ArrayBuffer { [Uint8Contents]: <00 01>,
// byteLength: 2 }".
func (in *inspector) arrayBuffer(obj *goja.Object, name string, null, ok bool, recurse int) string {
	if recurse > inspectDepth {
		return cut(name, null, ok, "ArrayBuffer")
	}
	ab, _ := obj.Export().(goja.ArrayBuffer)
	data := ab.Bytes()
	var b strings.Builder
	b.WriteString("[Uint8Contents]: <")
	for i, c := range data[:min(len(data), inspectMaxBytes)] {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(int64(c)|0x100, 16)[1:])
	}
	if more := len(data) - inspectMaxBytes; more > 0 {
		b.WriteString(" ... " + strconv.Itoa(more) + " more byte")
		if more > 1 {
			b.WriteByte('s')
		}
	}
	b.WriteByte('>')
	in.push(obj, recurse)
	defer in.pop()
	out := append([]string{b.String(), "byteLength: " + strconv.Itoa(len(data))}, in.keyed(obj, nil, recurse+1)...)
	return in.ref(obj, in.reduce(out, "", prefixed("ArrayBuffer", "", name, null, ok)+"{", "}", false, recurse+1, nil))
}

func (in *inspector) push(obj *goja.Object, recurse int) {
	in.seen = append(in.seen, obj)
	in.currentDepth = recurse + 1
}

func (in *inspector) pop() { in.seen = in.seen[:len(in.seen)-1] }

// ref prefixes "<ref *n> " to an object a circular reference points to.
func (in *inspector) ref(obj *goja.Object, s string) string {
	if n, ok := in.refs[obj]; ok {
		return "<ref *" + strconv.Itoa(n) + "> " + s
	}
	return s
}

func (in *inspector) child(v goja.Value, recurse int) string {
	in.indent += 2
	s := in.value(v, recurse)
	in.indent -= 2
	return s
}

// property is one "label: value" entry, the value of obj's own key.
func (in *inspector) property(obj *goja.Object, key goja.Value, label string, recurse int) string {
	return label + ": " + in.propValue(obj, key, recurse)
}

// propValue is the value of obj's own key, or what its accessors are.
func (in *inspector) propValue(obj *goja.Object, key goja.Value, recurse int) string {
	p := in.r.own(obj, key)
	switch {
	case p.kind == propData:
		return in.child(p.value, recurse)
	case p.getter && p.setter:
		return "[Getter/Setter]"
	case p.getter:
		return "[Getter]"
	case p.setter:
		return "[Setter]"
	}
	return "undefined"
}

func (in *inspector) array(obj *goja.Object, name string, null, ok bool, recurse int) string {
	n := 0
	if l := in.r.own(obj, in.r.vm.ToValue("length")); l.kind == propData {
		n = int(l.value.ToInteger())
	}
	prefix := ""
	switch {
	case null:
		prefix = "[Array(" + strconv.Itoa(n) + "): null prototype] "
	case ok && name != "Array":
		prefix = name + "(" + strconv.Itoa(n) + ") "
	}
	var extra []string
	if n <= 10*inspectMaxArray {
		for _, k := range obj.Keys() {
			if i, err := strconv.Atoi(k); err == nil && i >= 0 && i < n && strconv.Itoa(i) == k {
				continue
			}
			extra = append(extra, k)
		}
	}
	if n == 0 && len(extra) == 0 {
		return prefix + "[]"
	}
	// Up to inspectMaxArray entries, a run of holes counting as one (as
	// node's formatSpecialArray does), and not past the run's end.
	out := make([]string, 0, min(n, inspectMaxArray)+1+len(extra))
	numbers := true
	i := 0
	for i < n && len(out) < inspectMaxArray {
		if in.r.halted() {
			break
		}
		key := in.r.vm.ToValue(strconv.Itoa(i))
		p := in.r.own(obj, key)
		if p.kind == propAbsent {
			holes := in.holes(obj, i, n)
			s := "<" + strconv.Itoa(holes) + " empty item"
			if holes > 1 {
				s += "s"
			}
			out = append(out, s+">")
			numbers = false
			i += holes
			continue
		}
		if p.kind != propData || !(goja.IsNumber(p.value) || p.value.ExportType() == bigIntType) {
			numbers = false
		}
		out = append(out, in.propValue(obj, key, recurse))
		i++
	}
	items := len(out)
	if more := n - i; more > 0 {
		s := "... " + strconv.Itoa(more) + " more item"
		if more > 1 {
			s += "s"
		}
		out = append(out, s)
	}
	for _, k := range extra {
		out = append(out, in.property(obj, in.r.vm.ToValue(k), inspectKey(k), recurse))
	}
	return in.reduce(out, "", prefix+"[", "]", true, recurse, &arrayInfo{items: items, more: n > i, numbers: numbers})
}

// arrayInfo is what grouping needs to know of an array's entries.
type arrayInfo struct {
	items   int  // entries that are elements (before "... more items")
	more    bool // a "... n more items" entry follows them
	numbers bool // every element is a number or a bigint
}

// reduce is node's reduceToSingleString (compact 3, breakLength 80).
func (in *inspector) reduce(out []string, base, open, close string, isArray bool, recurse int, ai *arrayInfo) string {
	entries := len(out)
	if isArray && entries > 6 && ai != nil {
		out = in.group(out, ai)
	}
	if in.currentDepth-recurse < inspectCompact && entries == len(out) {
		start := len(out) + in.indent + width(open) + width(base) + 10
		if belowBreak(out, start, base) {
			joined := strings.Join(out, ", ")
			if !strings.Contains(joined, "\n") {
				b := ""
				if base != "" {
					b = base + " "
				}
				return b + open + " " + joined + " " + close
			}
		}
	}
	ind := "\n" + strings.Repeat(" ", in.indent)
	b := ""
	if base != "" {
		b = base + " "
	}
	return b + open + ind + "  " + strings.Join(out, ","+ind+"  ") + ind + close
}

func belowBreak(out []string, start int, base string) bool {
	total := len(out) + start
	if total+len(out) > inspectBreakLength {
		return false
	}
	for _, s := range out {
		total += width(s)
		if total > inspectBreakLength {
			return false
		}
	}
	return base == "" || !strings.Contains(base, "\n")
}

// width is a string's length in UTF-16 code units, as node measures.
func width(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// group is node's groupArrayElements: short entries in aligned columns.
func (in *inspector) group(out []string, ai *arrayInfo) []string {
	total, maxLen := 0, 0
	outLen := len(out)
	if ai.more {
		outLen--
	}
	outLen = min(outLen, ai.items)
	const sep = 2
	dataLen := make([]int, outLen)
	for i := 0; i < outLen; i++ {
		l := width(out[i])
		dataLen[i] = l
		total += l + sep
		maxLen = max(maxLen, l)
	}
	actualMax := maxLen + sep
	if actualMax*3+in.indent < inspectBreakLength && (float64(total)/float64(actualMax) > 5 || maxLen <= 6) {
		averageBias := math.Sqrt(float64(actualMax) - float64(total)/float64(len(out)))
		biasedMax := math.Max(float64(actualMax)-3-averageBias, 1)
		columns := min(
			int(math.Round(math.Sqrt(2.5*biasedMax*float64(outLen))/biasedMax)),
			(inspectBreakLength-in.indent)/actualMax,
			inspectCompact*4,
			15,
		)
		if columns <= 1 {
			return out
		}
		var maxLine []int
		for i := 0; i < columns; i++ {
			line := 0
			for j := i; j < outLen; j += columns {
				line = max(line, dataLen[j])
			}
			maxLine = append(maxLine, line+sep)
		}
		var tmp []string
		for i := 0; i < outLen; i += columns {
			end := min(i+columns, outLen)
			var b strings.Builder
			j := i
			for ; j < end-1; j++ {
				b.WriteString(pad(out[j]+", ", maxLine[j-i], ai.numbers))
			}
			if ai.numbers {
				b.WriteString(pad(out[j], maxLine[j-i]-sep, true))
			} else {
				b.WriteString(out[j])
			}
			tmp = append(tmp, b.String())
		}
		tmp = append(tmp, out[outLen:]...)
		return tmp
	}
	return out
}

// pad pads s to n code units, at the start (numbers) or the end.
func pad(s string, n int, start bool) string {
	w := width(s)
	if w >= n {
		return s
	}
	if start {
		return strings.Repeat(" ", n-w) + s
	}
	return s + strings.Repeat(" ", n-w)
}

// inspectKey is a property name as node shows it: bare when an identifier.
func inspectKey(k string) string {
	ident := k != ""
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (i > 0 && '0' <= c && c <= '9')) {
			ident = false
			break
		}
	}
	if ident {
		return k
	}
	return quoteInspect(k, false)
}

// quoteInspect is node's strEscape: single quotes unless the string holds
// one (then double quotes, or backticks), control characters escaped; cut
// at 10,000 characters when limit is set.
func quoteInspect(s string, limit bool) string {
	more := 0
	if limit && len(s) > inspectMaxString {
		if n := utf8.RuneCountInString(s); n > inspectMaxString {
			i := 0
			for c := 0; c < inspectMaxString; c++ {
				_, w := utf8.DecodeRuneInString(s[i:])
				i += w
			}
			s, more = s[:i], n-inspectMaxString
		}
	}
	q := byte('\'')
	if strings.Contains(s, "'") {
		switch {
		case !strings.Contains(s, `"`):
			q = '"'
		case !strings.Contains(s, "`") && !strings.Contains(s, "${"):
			q = '`'
		}
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, c := range s {
		switch {
		case c == rune(q) || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c == '\b':
			b.WriteString(`\b`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\f':
			b.WriteString(`\f`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || (c >= 0x7f && c <= 0x9f):
			b.WriteString(`\x` + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte(q)
	if more > 0 {
		b.WriteString("... " + strconv.Itoa(more) + " more character")
		if more > 1 {
			b.WriteByte('s')
		}
	}
	return b.String()
}

// thrownText is the exception message of a thrown value (§3.1): an Error's
// stack, else String(v), computed Go-side; ok is false when that would run
// script code or throw (then the message is the fixed one).
func (r *programRun) thrownText(v goja.Value) (string, bool) {
	obj, isObj := v.(*goja.Object)
	if !isObj {
		switch x := v.(type) {
		case nil:
			return "undefined", true
		case *goja.Symbol:
			return "Symbol(" + x.String() + ")", true
		}
		return v.String(), true
	}
	if isProxy(obj) {
		return "", false
	}
	if r.isError(obj) {
		if obj.ClassName() == "Error" {
			return r.mapStack(r.loop.Thrown(r.vm, obj).Stack), true
		}
		if r.polluted() {
			return "", false
		}
		return r.chainString(obj, "message")
	}
	return r.stringOf(obj, 0)
}

// isError reports whether Error.prototype is on obj's prototype chain.
func (r *programRun) isError(obj *goja.Object) bool {
	p := obj.Prototype()
	for range maxProtoWalk {
		if p == nil || isProxy(p) {
			return false
		}
		if p.SameAs(r.intr.errorProto) {
			return true
		}
		p = p.Prototype()
	}
	return false
}

// chainString reads key along obj's prototype chain when it is a string
// data property.
func (r *programRun) chainString(obj *goja.Object, key string) (string, bool) {
	k := r.vm.ToValue(key)
	for o := obj; o != nil; o = o.Prototype() {
		switch p := r.own(o, k); p.kind {
		case propData:
			if goja.IsString(p.value) {
				return p.value.String(), true
			}
			return "", false
		case propAbsent:
			continue
		}
		return "", false
	}
	return "undefined", true
}

// stringOf is String(obj) for the objects whose conversion runs only
// intrinsics: plain objects ("[object Object]") and plain arrays (their
// elements joined with commas); anything else is refused.
func (r *programRun) stringOf(obj *goja.Object, depth int) (string, bool) {
	if depth > 100 || isProxy(obj) || r.polluted() {
		return "", false
	}
	for _, k := range []goja.Value{r.vm.ToValue("toString"), r.vm.ToValue("valueOf"), goja.SymToPrimitive, goja.SymToStringTag} {
		if r.own(obj, k).kind != propAbsent {
			return "", false
		}
	}
	proto := obj.Prototype()
	switch {
	case proto == nil:
		return "", false
	case proto.SameAs(r.intr.objectProto) && obj.ClassName() == "Object":
		if !r.intact(r.intr.objectProto, "toString", r.intr.toString) {
			return "", false
		}
		return "[object Object]", true
	case proto.SameAs(r.intr.arrayProto) && obj.ClassName() == "Array":
		if !r.intact(r.intr.arrayProto, "toString", r.intr.arrToString) || !r.intact(r.intr.arrayProto, "join", r.intr.join) {
			return "", false
		}
		n := 0
		if l := r.own(obj, r.vm.ToValue("length")); l.kind == propData {
			n = int(l.value.ToInteger())
		}
		if n > inspectMaxNodes {
			return "", false
		}
		parts := make([]string, n)
		for i := range n {
			p := r.own(obj, r.vm.ToValue(strconv.Itoa(i)))
			switch {
			case p.kind == propAbsent:
				continue
			case p.kind != propData:
				return "", false
			case p.value == nil || goja.IsUndefined(p.value) || goja.IsNull(p.value):
				continue
			}
			if o, ok := p.value.(*goja.Object); ok {
				s, ok := r.stringOf(o, depth+1)
				if !ok {
					return "", false
				}
				parts[i] = s
				continue
			}
			if _, isSym := p.value.(*goja.Symbol); isSym {
				return "", false // String of a symbol in join throws
			}
			parts[i] = p.value.String()
		}
		return strings.Join(parts, ","), true
	}
	return "", false
}

// intact reports whether proto's own key still holds the intrinsic want,
// and the object has no Symbol.toPrimitive or Symbol.toStringTag.
func (r *programRun) intact(proto *goja.Object, key string, want goja.Value) bool {
	p := r.own(proto, r.vm.ToValue(key))
	if p.kind != propData || !p.value.SameAs(want) {
		return false
	}
	for o := proto; o != nil; o = o.Prototype() {
		if isProxy(o) || r.own(o, goja.SymToPrimitive).kind != propAbsent || r.own(o, goja.SymToStringTag).kind != propAbsent {
			return false
		}
	}
	return true
}
