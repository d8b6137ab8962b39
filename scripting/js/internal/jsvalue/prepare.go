package jsvalue

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"weak"

	"github.com/dop251/goja"
)

// realms maps each prepared runtime to its Realm, both weakly: the entry
// keeps neither alive, and is dropped when the runtime is collected.
var realms sync.Map // weak.Pointer[goja.Runtime] → weak.Pointer[Realm]

// realmHolder is what keeps a Realm alive as long as its runtime: a Go value
// with nothing exported, so a script that finds it sees an empty object.
type realmHolder struct{ r *Realm }

// Prepare makes a [Realm] for vm (see [NewRealm]) and attaches it, so that
// [ToGo], [ToJS] and [Freeze] can find it from vm. Call it on the runtime's
// goroutine before any script runs, for example first thing in the event
// loop's Setup. Preparing a runtime again returns the Realm it already has.
//
// The Realm is kept alive by the runtime itself, under a symbol-keyed
// property of the global object that is non-enumerable, non-writable and
// non-configurable (Reflect.ownKeys(globalThis) lists it; a script can
// neither change nor remove it, and reads an empty object). A registry keyed
// by the runtime would otherwise keep every runtime alive forever, since the
// Realm refers to it; this way both go when the runtime is dropped, with no
// call needed to release them.
func Prepare(vm *goja.Runtime) (*Realm, error) {
	if r, ok := RealmOf(vm); ok {
		return r, nil
	}
	r, err := NewRealm(vm)
	if err != nil {
		return nil, err
	}
	holder := vm.ToValue(&realmHolder{r: r})
	if err := vm.GlobalObject().DefineDataPropertySymbol(goja.NewSymbol("dsh.jsvalue.realm"), holder,
		goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return nil, fmt.Errorf("jsvalue: attaching the realm: %w", err)
	}
	key := weak.Make(vm)
	realms.Store(key, weak.Make(r))
	runtime.AddCleanup(vm, func(k weak.Pointer[goja.Runtime]) { realms.Delete(k) }, key)
	return r, nil
}

// RealmOf returns the Realm [Prepare] attached to vm.
func RealmOf(vm *goja.Runtime) (*Realm, bool) {
	if vm == nil {
		return nil, false
	}
	v, ok := realms.Load(weak.Make(vm))
	if !ok {
		return nil, false
	}
	r := v.(weak.Pointer[Realm]).Value()
	return r, r != nil
}

var errNotPrepared = errors.New("jsvalue: the runtime was not prepared (call jsvalue.Prepare before any script runs)")

// ToGo is [Realm.ToGo] with the Realm [Prepare] attached to vm.
func ToGo(vm *goja.Runtime, v goja.Value, root string, lim Limits) (any, error) {
	r, ok := RealmOf(vm)
	if !ok {
		return nil, errNotPrepared
	}
	return r.ToGo(v, root, lim)
}

// ToJS is [Realm.ToJS] with the Realm [Prepare] attached to vm.
func ToJS(vm *goja.Runtime, v any) (goja.Value, error) {
	r, ok := RealmOf(vm)
	if !ok {
		return nil, errNotPrepared
	}
	return r.ToJS(v)
}

// Freeze is [Realm.Freeze] with the Realm [Prepare] attached to vm.
func Freeze(vm *goja.Runtime, obj *goja.Object) error {
	r, ok := RealmOf(vm)
	if !ok {
		return errNotPrepared
	}
	return r.Freeze(obj)
}
