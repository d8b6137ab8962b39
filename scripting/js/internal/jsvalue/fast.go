package jsvalue

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/dop251/goja"
	"github.com/dop251/goja/unistring"
	"github.com/dsh-go/dsh/dsl"
)

// The fast path of ToGo reads an ordinary object's or array's own property
// table directly, by reflection on goja's Go structures, instead of asking
// the captured built-ins for a descriptor object per property. It is the
// same Go-side introspection the built-ins do (they read the same table),
// without entering the runtime or allocating: about four times cheaper for
// the small objects a tool call carries.
//
// It is taken only for the shapes it knows exactly: an object whose Go
// implementation is goja's ordinary object, with class "Object", no symbol
// keys ever added, and Object.prototype or null as prototype; an array whose
// implementation is goja's dense array, with Array.prototype as prototype
// and no property besides its indices and length.
//
// It fails closed. An entry of the table is taken as a value only when its
// Go type is on an allow-list: goja's integer, float, boolean, null, its
// three string representations (ASCII, UTF-16 and imported from Go) and
// *goja.Object; or when it is goja's property record (*valueProperty) of an
// enumerable data property whose value is of one of those types. Any other
// entry (an accessor, a non-enumerable property, undefined, a symbol, a
// BigInt, a hole, or a type this file does not know) sends the whole
// container to the built-in path, which classifies the value and words the
// refusal. So does any other object.
//
// The layout (field offsets and the types of goja's unexported structures)
// and the allow-list are discovered by reflection once per process and then
// verified on probe values against what the built-ins report; if goja's
// structures are not the ones this file expects (a goja upgrade changed
// them), the fast path is off and ToGo works as before, only slower.
// TestFastPathLayout fails in that case, so an upgrade that disables it does
// not go unnoticed. [Realm.SetFastPath] turns it off for one realm.

// layout is where goja keeps the facts the fast path reads.
type layout struct {
	selfOff  uintptr      // goja.Object.self, an interface
	selfType reflect.Type // its static (interface) type

	baseType  reflect.Type // *goja.baseObject
	arrayType reflect.Type // *goja.arrayObject
	propType  reflect.Type // *goja.valueProperty

	// baseObject fields.
	valuesOff, namesOff, symOff uintptr
	// arrayObject fields (its baseObject is embedded at offset 0).
	arrayValuesOff, arrayLengthOff uintptr
	// valueProperty fields.
	propValueOff, propEnumOff, propAccessorOff uintptr

	// plain is the allow-list: the Go types of the values the fast path
	// takes as data, most common first.
	plain [8]reflect.Type
}

var (
	valuesType = reflect.TypeFor[map[unistring.String]goja.Value]()
	namesType  = reflect.TypeFor[[]unistring.String]()
	listType   = reflect.TypeFor[[]goja.Value]()
	valueType  = reflect.TypeFor[goja.Value]()
	uint32Type = reflect.TypeFor[uint32]()
)

// fastLayout is the verified layout, or nil when the fast path is off.
var fastLayout = sync.OnceValue(func() *layout {
	l := discover()
	if l == nil || !l.verify() {
		return nil
	}
	return l
})

// field finds a struct field by name and type.
func field(t reflect.Type, name string, want reflect.Type) (uintptr, bool) {
	f, ok := t.FieldByName(name)
	if !ok || (want != nil && f.Type != want) || len(f.Index) != 1 {
		return 0, false
	}
	return f.Offset, true
}

// discover reads goja's structures off probe values.
func discover() *layout {
	vm := goja.New()
	objT := reflect.TypeFor[goja.Object]()
	self, ok := objT.FieldByName("self")
	if !ok || self.Type.Kind() != reflect.Interface {
		return nil
	}
	l := &layout{selfOff: self.Offset, selfType: self.Type}
	o := vm.NewObject()
	a := vm.NewArray()
	l.baseType = l.implType(o)
	l.arrayType = l.implType(a)
	if l.baseType == nil || l.arrayType == nil || l.baseType.Kind() != reflect.Pointer || l.arrayType.Kind() != reflect.Pointer {
		return nil
	}
	base, arr := l.baseType.Elem(), l.arrayType.Elem()
	var okV, okN, okS, okAV, okAL bool
	l.valuesOff, okV = field(base, "values", valuesType)
	l.namesOff, okN = field(base, "propNames", namesType)
	l.symOff, okS = field(base, "symValues", nil)
	if sym, _ := base.FieldByName("symValues"); okS && sym.Type.Kind() != reflect.Pointer {
		okS = false
	}
	embedded, okE := arr.FieldByName("baseObject")
	l.arrayValuesOff, okAV = field(arr, "values", listType)
	l.arrayLengthOff, okAL = field(arr, "length", uint32Type)
	if !okV || !okN || !okS || !okE || embedded.Offset != 0 || embedded.Type != base || !okAV || !okAL {
		return nil
	}
	// A frozen object holds its properties as *valueProperty.
	p := vm.NewObject()
	if err := p.DefineDataProperty("x", vm.ToValue(1), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		return nil
	}
	impl := l.impl(p)
	if impl == nil {
		return nil
	}
	v := (*(*map[unistring.String]goja.Value)(unsafe.Add(impl, l.valuesOff)))["x"]
	if v == nil {
		return nil
	}
	l.propType = reflect.TypeOf(v)
	if l.propType.Kind() != reflect.Pointer {
		return nil
	}
	prop := l.propType.Elem()
	var okPV, okPE, okPA bool
	l.propValueOff, okPV = field(prop, "value", valueType)
	l.propEnumOff, okPE = field(prop, "enumerable", boolType)
	l.propAccessorOff, okPA = field(prop, "accessor", boolType)
	if !okPV || !okPE || !okPA {
		return nil
	}
	if !l.discoverPlain(vm) {
		return nil
	}
	return l
}

// discoverPlain fills the allow-list with the types of probe values, and
// checks that they are distinct and that none is the property record.
func (l *layout) discoverPlain(vm *goja.Runtime) bool {
	probes := [len(l.plain)]goja.Value{
		vm.ToValue("a"),                     // asciiString
		vm.ToValue(int64(1)),                // valueInt
		vm.ToValue(1.5),                     // valueFloat
		vm.ToValue(true),                    // valueBool
		goja.Null(),                         // valueNull
		vm.NewObject(),                      // *Object
		vm.ToValue(strings.Repeat("a", 17)), // *importedString: ToValue of a string over 16 bytes
		nil,                                 // unicodeString, below
	}
	u, err := vm.RunString(`"\u00e9"`)
	if err != nil {
		return false
	}
	probes[len(probes)-1] = u
	for i, p := range probes {
		t := reflect.TypeOf(p)
		if t == nil || t == l.propType {
			return false
		}
		for _, seen := range l.plain[:i] {
			if t == seen {
				return false
			}
		}
		l.plain[i] = t
	}
	return true
}

// isPlain reports whether a value of type t may be taken as data.
func (l *layout) isPlain(t reflect.Type) bool {
	for _, p := range l.plain {
		if t == p {
			return true
		}
	}
	return false
}

// implType is the dynamic type of o's implementation.
func (l *layout) implType(o *goja.Object) reflect.Type {
	self := reflect.NewAt(l.selfType, unsafe.Add(unsafe.Pointer(o), l.selfOff)).Elem()
	if self.IsNil() {
		return nil
	}
	return self.Elem().Type()
}

// impl is the pointer to o's implementation when it is an ordinary object or
// a dense array (its type is then implType(o)), or nil.
func (l *layout) impl(o *goja.Object) unsafe.Pointer {
	self := reflect.NewAt(l.selfType, unsafe.Add(unsafe.Pointer(o), l.selfOff)).Elem()
	if self.IsNil() {
		return nil
	}
	e := self.Elem()
	if t := e.Type(); t != l.baseType && t != l.arrayType {
		return nil
	}
	return e.UnsafePointer()
}

// dataValue returns the value of an own property as stored in the table, and
// whether it is an enumerable data property holding a value of an
// allow-listed type.
func (l *layout) dataValue(v goja.Value) (goja.Value, bool) {
	if v == nil {
		return nil, false
	}
	t := reflect.TypeOf(v)
	if t == l.propType {
		p := reflect.ValueOf(v).UnsafePointer()
		if *(*bool)(unsafe.Add(p, l.propAccessorOff)) || !*(*bool)(unsafe.Add(p, l.propEnumOff)) {
			return nil, false
		}
		v = *(*goja.Value)(unsafe.Add(p, l.propValueOff))
		if v == nil {
			return nil, false
		}
		t = reflect.TypeOf(v)
	}
	return v, l.isPlain(t)
}

// fastResult is what the fast path made of a container.
type fastResult uint8

const (
	fastNo      fastResult = iota // not a shape it knows: take the built-in path
	fastOK                        // read
	fastTooMany                   // an object with more than maxKeys own properties
	fastTooBig                    // an object whose keys take more than maxKeyBytes
)

// object reads a plain object's own properties, in own-key order, appending
// keys and values to the buffers given. It returns fastNo when o is not a
// shape the fast path knows or one of its properties is not plain data: the
// caller then takes the built-in path. Before converting any key it refuses
// an object with more than maxKeys keys (fastTooMany) or whose keys, with
// dsl.ValueBytes for each property, take more than maxSize bytes (fastTooBig,
// from a lower bound: a key of n UTF-16 units has at least n bytes in
// UTF-8); the caller checks the exact size.
func (l *layout) object(o *goja.Object, objectProto *goja.Object, keys []string, vals []goja.Value, maxKeys, maxSize int) ([]string, []goja.Value, fastResult) {
	p := l.impl(o)
	if p == nil || l.implType(o) != l.baseType || o.ClassName() != "Object" {
		return keys, vals, fastNo
	}
	if proto := o.Prototype(); proto != nil && proto != objectProto {
		return keys, vals, fastNo
	}
	if *(*unsafe.Pointer)(unsafe.Add(p, l.symOff)) != nil {
		return keys, vals, fastNo
	}
	names := *(*[]unistring.String)(unsafe.Add(p, l.namesOff))
	table := *(*map[unistring.String]goja.Value)(unsafe.Add(p, l.valuesOff))
	if len(names) > maxKeys {
		return keys, vals, fastTooMany
	}
	size := dsl.ValueBytes * len(names)
	for _, n := range names {
		if u := n.AsUtf16(); u != nil {
			size += len(u) - 1 // the first unit marks the representation
		} else {
			size += len(n)
		}
	}
	if size > maxSize {
		return keys, vals, fastTooBig
	}
	k0 := len(keys)
	for _, n := range names {
		if u := n.AsUtf16(); u != nil && hasLoneSurrogate(u) {
			return keys[:k0], vals[:k0], fastNo
		}
		v, ok := l.dataValue(table[n])
		if !ok {
			return keys[:k0], vals[:k0], fastNo
		}
		keys = append(keys, n.String())
		vals = append(vals, v)
	}
	ownKeysOrder(keys[k0:], vals[k0:])
	return keys, vals, fastOK
}

// array reads a dense array's elements, appending them to vals.
func (l *layout) array(o *goja.Object, arrayProto *goja.Object, vals []goja.Value) ([]goja.Value, bool) {
	p := l.impl(o)
	if p == nil || l.implType(o) != l.arrayType || o.Prototype() != arrayProto {
		return vals, false
	}
	if *(*unsafe.Pointer)(unsafe.Add(p, l.symOff)) != nil {
		return vals, false
	}
	// Its own string-keyed properties besides the indices: length only.
	if names := *(*[]unistring.String)(unsafe.Add(p, l.namesOff)); len(names) != 1 || names[0] != "length" {
		return vals, false
	}
	list := *(*[]goja.Value)(unsafe.Add(p, l.arrayValuesOff))
	if int(*(*uint32)(unsafe.Add(p, l.arrayLengthOff))) != len(list) {
		return vals, false
	}
	v0 := len(vals)
	for _, e := range list {
		v, ok := l.dataValue(e)
		if !ok {
			return vals[:v0], false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// ownKeysOrder puts integer-like keys first, ascending, keeping the order of
// the others, moving vals with keys: goja's table keeps insertion order and
// sorts lazily.
func ownKeysOrder(keys []string, vals []goja.Value) {
	other, last, sorted := false, int64(-1), true
	for _, k := range keys {
		i, ok := arrayIndex(k)
		if !ok {
			other = true
			continue
		}
		if other || i <= last {
			sorted = false
			break
		}
		last = i
	}
	if sorted {
		return
	}
	// Rare (an object with integer-like keys added out of order): a stable
	// insertion sort on both slices.
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && compareOwnKeys(keys[j-1], keys[j]) > 0; j-- {
			keys[j-1], keys[j] = keys[j], keys[j-1]
			vals[j-1], vals[j] = vals[j], vals[j-1]
		}
	}
}

// verify runs the fast path on probe values and checks it agrees with what
// the built-ins report of them.
func (l *layout) verify() bool {
	vm := goja.New()
	objectProto, arrayProto := vm.NewObject().Prototype(), vm.NewArray().Prototype()
	probes := []struct {
		src    string
		object bool
		ok     bool
		keys   []string
	}{
		{`({b: 1, a: "x"})`, true, true, []string{"b", "a"}},
		{`({b: 1, 2: 0, 1: 0})`, true, true, []string{"1", "2", "b"}},
		{`Object.freeze({a: 1})`, true, true, []string{"a"}},
		{`Object.create(null)`, true, true, nil},
		{`Object.defineProperty({}, "g", {get() { return 1 }, enumerable: true})`, true, false, nil},
		{`Object.defineProperty({}, "h", {value: 1, enumerable: false})`, true, false, nil},
		{`({[Symbol("s")]: 1})`, true, false, nil},
		{`new (class A {})()`, true, false, nil},
		{`new Date()`, true, false, nil},
		{`new Proxy({}, {})`, true, false, nil},
		{`(function () { return arguments })(1)`, true, false, nil},
		{`[1, "x"]`, false, true, nil},
		{`Object.freeze([1])`, false, true, nil},
		{`[1, , 3]`, false, false, nil},
		{`Object.assign([1], {x: 1})`, false, false, nil},
		{`Object.defineProperty([1], 0, {get() { return 1 }, enumerable: true})`, false, false, nil},
		{`(() => { const a = [1]; a[Symbol.iterator] = 1; return a })()`, false, false, nil},
		{`new (class B extends Array {})(1, 2)`, false, false, nil},
		// The allow-list: every JSON value is read, anything else is not.
		{`({i: 1, f: 1.5, b: true, n: null, s: "a", u: "\u00e9", o: {}, a: []})`, true, true, []string{"i", "f", "b", "n", "s", "u", "o", "a"}},
		{`Object.freeze({i: 1, s: "\u00e9", o: {}})`, true, true, []string{"i", "s", "o"}},
		{`({a: undefined})`, true, false, nil},
		{`({a: Symbol("s")})`, true, false, nil},
		{`({a: 1n})`, true, false, nil},
		{`Object.freeze({a: 1n})`, true, false, nil},
		{`[1, undefined]`, false, false, nil},
		{`[Symbol("s")]`, false, false, nil},
		{`[1n]`, false, false, nil},
		{`Object.freeze([undefined])`, false, false, nil},
	}
	for _, p := range probes {
		v, err := vm.RunString(p.src)
		if err != nil {
			return false
		}
		o, _ := v.(*goja.Object)
		if o == nil {
			return false
		}
		if p.object {
			keys, vals, res := l.object(o, objectProto, nil, nil, math.MaxInt, math.MaxInt)
			ok := res == fastOK
			if ok != p.ok || res != fastOK && res != fastNo || len(keys) != len(vals) {
				return false
			}
			if ok {
				if len(keys) != len(p.keys) {
					return false
				}
				for i, k := range p.keys {
					if keys[i] != k || !vals[i].StrictEquals(o.Get(k)) {
						return false
					}
				}
			}
			continue
		}
		vals, ok := l.array(o, arrayProto, nil)
		if ok != p.ok {
			return false
		}
		if ok {
			if int64(len(vals)) != o.Get("length").ToInteger() {
				return false
			}
			for i := range vals {
				if !vals[i].StrictEquals(o.Get(strconv.Itoa(i))) {
					return false
				}
			}
		}
	}
	// A string put in from Go, and the refusals before reading any key.
	o := vm.NewObject()
	if o.Set("s", strings.Repeat("\u00e9", 20)) != nil || o.Set("t", 1) != nil {
		return false
	}
	if _, vals, res := l.object(o, objectProto, nil, nil, 2, 2+2*dsl.ValueBytes); res != fastOK || vals[0].String() != strings.Repeat("\u00e9", 20) {
		return false
	}
	if _, _, res := l.object(o, objectProto, nil, nil, 1, math.MaxInt); res != fastTooMany {
		return false
	}
	if _, _, res := l.object(o, objectProto, nil, nil, 2, 1+2*dsl.ValueBytes); res != fastTooBig {
		return false
	}
	return true
}
