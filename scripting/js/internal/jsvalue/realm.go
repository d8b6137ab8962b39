package jsvalue

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// nativeFunc is what goja's Export returns for a function object: for a
// built-in, the Go function that implements it.
type nativeFunc = func(goja.FunctionCall) goja.Value

// The built-ins a Realm captures, as properties of the Object constructor.
// ToGo reads through getOwnPropertyDescriptor, getOwnPropertySymbols, hasOwn
// and getOwnPropertyNames; ToJS and Freeze use freeze and preventExtensions.
// getOwnPropertyDescriptors is no longer called, but is still checked: like
// the others, finding it replaced means a script ran before NewRealm.
const (
	builtinDescriptors       = iota // Object.getOwnPropertyDescriptors
	builtinOwnNames                 // Object.getOwnPropertyNames
	builtinFreeze                   // Object.freeze
	builtinPreventExtensions        // Object.preventExtensions
	builtinDescriptor               // Object.getOwnPropertyDescriptor
	builtinSymbols                  // Object.getOwnPropertySymbols
	builtinHasOwn                   // Object.hasOwn
	builtinCount
)

var builtinProps = [builtinCount]string{
	builtinDescriptors:       "getOwnPropertyDescriptors",
	builtinOwnNames:          "getOwnPropertyNames",
	builtinFreeze:            "freeze",
	builtinPreventExtensions: "preventExtensions",
	builtinDescriptor:        "getOwnPropertyDescriptor",
	builtinSymbols:           "getOwnPropertySymbols",
	builtinHasOwn:            "hasOwn",
}

// builtinCode holds the code pointers of goja's Go implementations of the
// captured built-ins, read from a runtime in which no script ever ran. A
// built-in exports a method value bound to its runtime; the code pointer of
// a method value is the same for every receiver, so it identifies the
// implementation in any runtime, while a script function that replaced the
// built-in exports a different one.
var builtinCode = sync.OnceValues(func() ([builtinCount]uintptr, error) {
	var code [builtinCount]uintptr
	fns, err := lookupBuiltins(goja.New())
	if err != nil {
		return code, err
	}
	for i, f := range fns {
		code[i] = reflect.ValueOf(f).Pointer()
	}
	return code, nil
})

// lookupBuiltins reads the built-ins off vm's global Object constructor.
func lookupBuiltins(vm *goja.Runtime) (fns [builtinCount]nativeFunc, err error) {
	ex := vm.Try(func() {
		ctor, ok := vm.Get("Object").(*goja.Object)
		if !ok {
			err = errors.New("jsvalue: the global Object is not an object")
			return
		}
		for i, name := range builtinProps {
			fn, _ := ctor.Get(name).(*goja.Object)
			if fn == nil {
				err = fmt.Errorf("jsvalue: Object.%s is missing", name)
				return
			}
			f, ok := fn.Export().(nativeFunc)
			if !ok || f == nil {
				err = fmt.Errorf("jsvalue: Object.%s is not a built-in function", name)
				return
			}
			fns[i] = f
		}
	})
	if ex != nil {
		return fns, fmt.Errorf("jsvalue: reading the built-ins threw: %w", ex)
	}
	return fns, err
}

// A Realm is one goja runtime's view of the value boundary: the intrinsics it
// needs, captured once before any script ran. Like the runtime, a Realm must
// only be used on the goroutine that owns the runtime; it holds no other
// state (but its settings, see SetLimits and SetFastPath, and ToGo's
// buffers, kept for the next call and holding no value between calls) and
// needs no closing.
type Realm struct {
	vm          *goja.Runtime
	objectProto *goja.Object // the intrinsic Object.prototype
	arrayProto  *goja.Object // the intrinsic Array.prototype

	builtins [builtinCount]nativeFunc

	// descriptorKeys as JavaScript strings, made once for the check of
	// Object.prototype that reading a property starts with.
	descriptorKeyValues [len(descriptorKeys)]goja.Value

	spare   *toGo // the state of the last ToGo, kept for the next
	spareJS *toJS // and of the last ToJS

	// arg is the argument list call passes a built-in, kept between calls
	// (the built-ins called keep no reference to it); target and the two
	// functions below are Freeze's and PreventExtensions' object and work,
	// made once so that a call makes no closure.
	arg                       [1]goja.Value
	target                    *goja.Object
	freezeFn, preventExtendFn func()

	fast *layout // goja's verified layout for ToGo's fast path, or nil

	limits Limits // see SetLimits

	// The types of goja's string representations whose String method
	// returns the Go string they hold, without a copy: ASCII, and imported
	// from Go.
	noCopyStrings [2]reflect.Type

	// The type of goja's UTF-16 representation, whose code units
	// utf16Units reads in place (a BOM, then the string), or nil when a
	// probe did not find it so.
	utf16Type reflect.Type
}

// NewRealm captures vm's intrinsics. Call it before any script runs in vm
// (for example in the event loop's Setup): it reads Object.freeze and the
// other built-ins it needs off the global Object constructor, which a script
// could replace, or turn into accessors that would run when read. It checks
// that each one is goja's own implementation and fails otherwise, so a Realm
// never calls script code through them.
//
// Object.prototype and Array.prototype are taken from a fresh object and a
// fresh array made from Go; a script cannot change those.
func NewRealm(vm *goja.Runtime) (*Realm, error) {
	want, err := builtinCode()
	if err != nil {
		return nil, err
	}
	fns, err := lookupBuiltins(vm)
	if err != nil {
		return nil, err
	}
	for i, f := range fns {
		if reflect.ValueOf(f).Pointer() != want[i] {
			return nil, fmt.Errorf("jsvalue: Object.%s has been replaced; NewRealm must run before any script", builtinProps[i])
		}
	}
	r := &Realm{
		vm:          vm,
		objectProto: vm.NewObject().Prototype(),
		arrayProto:  vm.NewArray().Prototype(),
		builtins:    fns,
		fast:        fastLayout(),
	}
	for i, k := range descriptorKeys {
		r.descriptorKeyValues[i] = vm.ToValue(k)
	}
	r.noCopyStrings = [2]reflect.Type{reflect.TypeOf(vm.ToValue("a")), reflect.TypeOf(vm.ToValue(strings.Repeat("a", 17)))}
	r.utf16Type = findUTF16Type()
	r.freezeFn = func() { r.call(builtinFreeze, r.target) }
	r.preventExtendFn = func() { r.call(builtinPreventExtensions, r.target) }
	return r, nil
}

var uint16sType = reflect.TypeFor[[]uint16]()

// findUTF16Type returns the type of goja's UTF-16 string representation if
// it is, as this package expects, a slice of code units that starts with a
// BOM; else nil.
func findUTF16Type() reflect.Type {
	probe := []uint16{0xe9, 0xd83d, 0xde00}
	s := goja.StringFromUTF16(probe)
	t := reflect.TypeOf(s)
	if t.Kind() != reflect.Slice || !t.ConvertibleTo(uint16sType) {
		return nil
	}
	units := reflect.ValueOf(s).Convert(uint16sType).Interface().([]uint16)
	if len(units) != len(probe)+1 || units[0] != 0xfeff || !slices.Equal(units[1:], probe) || s.Length() != len(probe) {
		return nil
	}
	return t
}

// utf16Units returns the code units of s without copying them, when s is in
// goja's UTF-16 representation.
func (r *Realm) utf16Units(s goja.String) ([]uint16, bool) {
	if r.utf16Type == nil || reflect.TypeOf(s) != r.utf16Type {
		return nil, false
	}
	return reflect.ValueOf(s).Convert(uint16sType).Interface().([]uint16)[1:], true
}

// SetFastPath turns ToGo's fast path (see the package documentation) on or
// off for r. It is on by default, unless goja's structures failed their
// verification, in which case turning it on changes nothing. Off, every
// object and array is read through the captured built-ins: slower, and
// independent of goja's private layout.
func (r *Realm) SetFastPath(on bool) {
	r.fast = nil
	if on {
		r.fast = fastLayout()
	}
}

// FastPath reports whether ToGo's fast path is on.
func (r *Realm) FastPath() bool { return r.fast != nil }

// SetLimits sets the limits of r's conversions: those of ToJS, and those of
// ToGo wherever the Limits it is given leave a field zero. A zero field here
// takes dsl's default.
func (r *Realm) SetLimits(lim Limits) { r.limits = lim }

// limitsFor is the limits of one ToGo: lim, then r's, then the defaults.
func (r *Realm) limitsFor(lim Limits) Limits {
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = r.limits.MaxDepth
	}
	if lim.MaxNodes <= 0 {
		lim.MaxNodes = r.limits.MaxNodes
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = r.limits.MaxBytes
	}
	return lim.WithDefaults()
}

// sizeBound returns a lower bound on the UTF-8 size of s, computed without
// copying s: the exact size for the representations that hold a Go string,
// and the length in UTF-16 units (each at least one byte) for the others.
func (r *Realm) sizeBound(s goja.String) int {
	if t := reflect.TypeOf(s); t == r.noCopyStrings[0] || t == r.noCopyStrings[1] {
		return len(s.String())
	}
	return s.Length()
}

// Runtime returns the runtime r belongs to.
func (r *Realm) Runtime() *goja.Runtime { return r.vm }

// call runs a captured built-in on o as a plain Go call. It must run inside
// vm.Try, which turns a thrown exception into an error. Calling it through
// goja.AssertFunction instead would enter and leave the runtime, and leaving
// at the top level runs the queued promise jobs: script code.
func (r *Realm) call(fn int, o *goja.Object) goja.Value {
	r.arg[0] = o
	v := r.builtins[fn](goja.FunctionCall{This: goja.Undefined(), Arguments: r.arg[:]})
	r.arg[0] = nil
	return v
}

// with runs f (freezeFn or preventExtendFn) on obj in vm.Try.
func (r *Realm) with(obj *goja.Object, f func()) *goja.Exception {
	prev := r.target // nil unless a caller is in the middle of one
	r.target = obj
	ex := r.vm.Try(f)
	r.target = prev
	return ex
}

// Freeze freezes obj as Object.freeze would, using the built-in captured by
// NewRealm, so a script that replaced Object.freeze changes nothing. It
// refuses a Proxy, whose traps freezing would run.
func (r *Realm) Freeze(obj *goja.Object) error {
	if obj == nil {
		return errors.New("jsvalue: Freeze of a nil object")
	}
	if isProxy(obj) {
		return errors.New("jsvalue: a Proxy cannot be frozen without running its traps")
	}
	if ex := r.with(obj, r.freezeFn); ex != nil {
		return fmt.Errorf("jsvalue: freezing threw: %w", ex)
	}
	return nil
}

// PreventExtensions makes obj non-extensible as Object.preventExtensions
// would, with the built-in captured by NewRealm, as a plain Go call (no
// entry into the runtime). It refuses a Proxy, whose trap would run.
func (r *Realm) PreventExtensions(obj *goja.Object) error {
	if obj == nil || isProxy(obj) {
		return errors.New("jsvalue: PreventExtensions needs an ordinary object")
	}
	if ex := r.with(obj, r.preventExtendFn); ex != nil {
		return fmt.Errorf("jsvalue: preventing extensions threw: %w", ex)
	}
	return nil
}

var proxyType = reflect.TypeFor[goja.Proxy]()

// isProxy reports whether o is a Proxy. A Proxy's ExportType is a constant
// and calls no trap; most other Go-side queries (Prototype, Keys, Get, and
// ClassName once revoked) do run traps or throw.
func isProxy(o *goja.Object) bool { return o.ExportType() == proxyType }
