package jsvalue

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

func TestPrepareTwiceReturnsTheSameRealm(t *testing.T) {
	vm := goja.New()
	r1, err := Prepare(vm)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Prepare(vm)
	if err != nil {
		t.Fatal(err)
	}
	if r1 != r2 {
		t.Fatal("a second Prepare made another Realm")
	}
	if r, ok := RealmOf(vm); !ok || r != r1 || r.Runtime() != vm {
		t.Fatal("RealmOf does not find the prepared Realm")
	}
}

func TestPackageFunctionsUseThePreparedRealm(t *testing.T) {
	vm := goja.New()
	if _, err := Prepare(vm); err != nil {
		t.Fatal(err)
	}
	v, err := ToJS(vm, dsl.NewObject(dsl.Member{Key: "a", Value: []any{1.0}}))
	if err != nil {
		t.Fatal(err)
	}
	back, err := ToGo(vm, v, "value", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, back); s != `{"a":[1]}` {
		t.Fatalf("got %s", s)
	}
	obj := vm.NewObject()
	if err := Freeze(vm, obj); err != nil {
		t.Fatal(err)
	}
	vm.Set("obj", obj)
	if frozen, _ := vm.RunString(`Object.isFrozen(obj)`); !frozen.ToBoolean() {
		t.Fatal("Freeze did not freeze")
	}
}

func TestAnUnpreparedRuntimeIsRefused(t *testing.T) {
	vm := goja.New()
	if _, ok := RealmOf(vm); ok {
		t.Fatal("RealmOf found a Realm for a fresh runtime")
	}
	if _, err := ToGo(vm, goja.Null(), "value", Limits{}); !errors.Is(err, errNotPrepared) {
		t.Fatalf("ToGo: %v", err)
	}
	if _, err := ToJS(vm, nil); !errors.Is(err, errNotPrepared) {
		t.Fatalf("ToJS: %v", err)
	}
	if err := Freeze(vm, vm.NewObject()); !errors.Is(err, errNotPrepared) {
		t.Fatalf("Freeze: %v", err)
	}
}

func TestNewRealmRefusesReplacedBuiltins(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"a script function in place of getOwnPropertyDescriptors", `Object.getOwnPropertyDescriptors = function (o) { return {} }`,
			"jsvalue: Object.getOwnPropertyDescriptors has been replaced; NewRealm must run before any script"},
		{"another built-in in place of freeze", `Object.freeze = Object.seal`,
			"jsvalue: Object.freeze has been replaced; NewRealm must run before any script"},
		{"a Proxy in place of preventExtensions", `Object.preventExtensions = new Proxy(Object.preventExtensions, {})`,
			"jsvalue: Object.preventExtensions is not a built-in function"},
		{"a missing getOwnPropertyNames", `delete Object.getOwnPropertyNames`,
			"jsvalue: Object.getOwnPropertyNames is missing"},
		{"no global Object", `globalThis.Object = 1`,
			"jsvalue: the global Object is not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := goja.New()
			if _, err := vm.RunString(tt.src); err != nil {
				t.Fatal(err)
			}
			_, err := Prepare(vm)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v, want %s", err, tt.want)
			}
		})
	}
}

func TestTheRealmHolderIsInertToScripts(t *testing.T) {
	e := newEnv(t)
	got := e.run(`(() => {
		"use strict";
		const syms = Object.getOwnPropertySymbols(globalThis).filter(s => s !== Symbol.toStringTag);
		if (syms.length !== 1) return "symbols: " + syms.length;
		const k = syms[0], d = Object.getOwnPropertyDescriptor(globalThis, k);
		if (d.writable || d.enumerable || d.configurable) return "descriptor " + JSON.stringify(d);
		if (Object.keys(globalThis[k]).length !== 0) return "the holder has keys";
		try { globalThis[k] = 1; return "assignable" } catch (e) {}
		try { delete globalThis[k]; return "deletable" } catch (e) {}
		return String(k);
	})()`).String()
	if got != "Symbol(dsh.jsvalue.realm)" {
		t.Fatal(got)
	}
}

func TestADroppedRuntimeLeavesTheRegistry(t *testing.T) {
	key := func() weak.Pointer[goja.Runtime] {
		vm := goja.New()
		if _, err := Prepare(vm); err != nil {
			t.Fatal(err)
		}
		return weak.Make(vm)
	}()
	for range 50 {
		runtime.GC()
		if _, ok := realms.Load(key); !ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the registry still holds a dropped runtime")
}

func TestFreezeFreezesWithTheCapturedBuiltin(t *testing.T) {
	e := newEnv(t)
	e.run(`var flag = 0; Object.freeze = function () { flag++ }`)
	obj := e.run(`({a: {b: 1}, get g() { flag++; return 1 }})`).(*goja.Object)
	if err := e.r.Freeze(obj); err != nil {
		t.Fatal(err)
	}
	e.vm.Set("obj", obj)
	got := e.run(`[Object.isFrozen(obj), Object.isFrozen(obj.a)].join()`).String()
	if got != "true,false" || e.flag() != 0 {
		t.Fatalf("frozen: %s, flag %d (freezing is shallow and runs no script)", got, e.flag())
	}
	if err := e.r.Freeze(nil); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Fatalf("Freeze(nil): %v", err)
	}
}
