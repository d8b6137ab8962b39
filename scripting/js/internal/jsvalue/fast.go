package jsvalue

import (
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/dop251/goja"
	"github.com/dop251/goja/unistring"
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
// and no property besides its indices and length. For any other object, and
// whenever a property is not an enumerable data property, ToGo falls back to
// the built-in path, which classifies the value and words the refusal.
//
// The layout (field offsets and the types of goja's unexported structures)
// is discovered by reflection once per process and then verified on probe
// values against what the built-ins report; if goja's structures are not
// the ones this file expects (a goja upgrade changed them), the fast path is
// off and ToGo works as before, only slower. TestFastPathLayout fails in that
// case, so an upgrade that disables it does not go unnoticed.

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
	return l
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
// whether it is an enumerable data property.
func (l *layout) dataValue(v goja.Value) (goja.Value, bool) {
	if v == nil {
		return nil, false
	}
	if reflect.TypeOf(v) != l.propType {
		return v, true
	}
	p := reflect.ValueOf(v).UnsafePointer()
	if *(*bool)(unsafe.Add(p, l.propAccessorOff)) || !*(*bool)(unsafe.Add(p, l.propEnumOff)) {
		return nil, false
	}
	val := *(*goja.Value)(unsafe.Add(p, l.propValueOff))
	return val, val != nil
}

// object reads a plain object's own properties, in own-key order, appending
// keys and values to the buffers given. ok is false when o is not a shape the
// fast path knows or one of its properties is not plain data: the caller then
// takes the built-in path.
func (l *layout) object(o *goja.Object, objectProto *goja.Object, keys []string, vals []goja.Value) ([]string, []goja.Value, bool) {
	p := l.impl(o)
	if p == nil || l.implType(o) != l.baseType || o.ClassName() != "Object" {
		return keys, vals, false
	}
	if proto := o.Prototype(); proto != nil && proto != objectProto {
		return keys, vals, false
	}
	if *(*unsafe.Pointer)(unsafe.Add(p, l.symOff)) != nil {
		return keys, vals, false
	}
	names := *(*[]unistring.String)(unsafe.Add(p, l.namesOff))
	table := *(*map[unistring.String]goja.Value)(unsafe.Add(p, l.valuesOff))
	k0 := len(keys)
	for _, n := range names {
		if u := n.AsUtf16(); u != nil && hasLoneSurrogate(u) {
			return keys[:k0], vals[:k0], false
		}
		v, ok := l.dataValue(table[n])
		if !ok {
			return keys[:k0], vals[:k0], false
		}
		keys = append(keys, n.String())
		vals = append(vals, v)
	}
	ownKeysOrder(keys[k0:], vals[k0:])
	return keys, vals, true
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
			keys, vals, ok := l.object(o, objectProto, nil, nil)
			if ok != p.ok || len(keys) != len(vals) {
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
	return true
}
