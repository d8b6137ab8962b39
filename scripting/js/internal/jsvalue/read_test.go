package jsvalue

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func TestToGoPutsAGoMapsIntegerKeysFirst(t *testing.T) {
	e := newEnv(t)
	m := map[string]any{"b": 1, "10": 2, "a": 3, "2": 4, "x": 5, "01": 6}
	for range 10 { // Go's map order differs from one iteration to the next
		got, err := e.r.ToGo(e.vm.ToValue(m), "value", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		s := mustJSON(t, got)
		if !strings.HasPrefix(s, `{"2":4,"10":2,`) || len(s) != len(`{"2":4,"10":2,"b":1,"a":3,"x":5,"01":6}`) {
			t.Fatalf("got %s", s)
		}
	}
}

// hostArray is a DynamicArray whose elements come from a Go function.
type hostArray struct {
	n   int
	get func(i int) goja.Value
}

func (a *hostArray) Len() int                     { return a.n }
func (a *hostArray) Get(i int) goja.Value         { return a.get(i) }
func (a *hostArray) Set(i int, v goja.Value) bool { return false }
func (a *hostArray) SetLen(n int) bool            { return false }

func TestToGoKeepsNoStateBetweenCalls(t *testing.T) {
	e := newEnv(t)
	bad := e.run(`({a: [1, {b: {c: [NaN]}}], d: 1})`)
	good := e.run(`({a: [1, {b: {c: [2]}}], d: {e: "f"}})`)
	for range 3 {
		_, err := e.r.ToGo(bad, "value", Limits{})
		wantSnapshotError(t, err, "value.a[1].b.c[0]", "NaN is not lossless JSON")
		got, err := e.r.ToGo(good, "value", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if s := mustJSON(t, got); s != `{"a":[1,{"b":{"c":[2]}}],"d":{"e":"f"}}` {
			t.Fatalf("got %s", s)
		}
		_, err = e.r.ToGo(good, "value", Limits{MaxDepth: 2})
		wantSnapshotError(t, err, "value.a[1]", "nesting deeper than 2 levels")
	}

	t.Run("a ToGo that host code runs during another", func(t *testing.T) {
		inner := e.run(`({x: [true, {y: null}]})`)
		var innerGot string
		arr := e.vm.NewDynamicArray(&hostArray{n: 2, get: func(i int) goja.Value {
			if i == 1 {
				v, err := e.r.ToGo(inner, "inner", Limits{})
				if err != nil {
					t.Error(err)
				}
				innerGot = mustJSON(t, v)
			}
			return e.vm.ToValue(i)
		}})
		e.vm.Set("arr", arr)
		got, err := e.r.ToGo(e.run(`({list: arr, after: {z: [3]}})`), "value", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if s := mustJSON(t, got); s != `{"list":[0,1],"after":{"z":[3]}}` {
			t.Fatalf("outer got %s", s)
		}
		if innerGot != `{"x":[true,{"y":null}]}` {
			t.Fatalf("inner got %s", innerGot)
		}
	})
}

func TestToGoDeeperThanTheStackScan(t *testing.T) {
	e := newEnv(t)
	_, err := e.toGo(`(() => { const root = {}; let x = root; for (let i = 0; i < 40; i++) { x.n = {}; x = x.n } x.n = root; return root })()`)
	wantSnapshotError(t, err, "value"+strings.Repeat(".n", 41), "the value contains itself (cycle)")
	_, err = e.toGo(`(() => { const root = []; let x = root; for (let i = 0; i < 40; i++) { const y = [0]; x.push(y); x = y } x.push(x); return root })()`)
	wantSnapshotError(t, err, "value[0]"+strings.Repeat("[1]", 40), "the value contains itself (cycle)")
	got, err := e.toGo(`(() => { const s = {v: [1]}; const root = {s}; let x = root; for (let i = 0; i < 40; i++) { x.n = {s}; x = x.n } return root })()`)
	if err != nil {
		t.Fatalf("a shared, acyclic reference deep down: %v", err)
	}
	if s := mustJSON(t, got); strings.Count(s, `"s":{"v":[1]}`) != 41 {
		t.Fatalf("got %s", s)
	}
}

func TestToGoLongArrays(t *testing.T) {
	e := newEnv(t)
	e.run(`var flag = 0`)
	got, err := e.toGo(`Array.from({length: 300}, (_, i) => i % 2 ? i : {i})`)
	if err != nil {
		t.Fatal(err)
	}
	if list := got.([]any); len(list) != 300 || list[299] != 299.0 || mustJSON(t, list[298]) != `{"i":298}` {
		t.Fatalf("got %s", mustJSON(t, got))
	}
	_, err = e.toGo(`Object.defineProperty(Array.from({length: 300}, (_, i) => i), 299, {get() { flag++; return 1 }, enumerable: true})`)
	wantSnapshotError(t, err, "value[299]", "an accessor property is not lossless JSON")
	_, err = e.toGo(`Object.defineProperty(Array.from({length: 300}, (_, i) => i), 256, {value: 1, enumerable: false})`)
	wantSnapshotError(t, err, "value[256]", "a non-enumerable property is not lossless JSON")
	if e.flag() != 0 {
		t.Fatal("the getter ran")
	}
}

func TestToGoNamesThePrototypesFirstDescriptorKey(t *testing.T) {
	e := newEnv(t).builtinOnly()
	e.run(`var flag = 0;
		for (const k of ["enumerable", "value"]) {
			Object.defineProperty(Object.prototype, k, {set(v) { flag++ }, get() { flag++ }, configurable: true});
		}
		flag = 0;`)
	_, err := e.toGo(`({a: 1})`)
	wantSnapshotError(t, err, "value", `Object.prototype has a property named "enumerable", so the value cannot be read without running script code`)
	e.run(`delete Object.prototype.enumerable; delete Object.prototype.value`)
	if got, err := e.toGo(`({a: [1]})`); err != nil || mustJSON(t, got) != `{"a":[1]}` {
		t.Fatalf("once the prototype is clean again: %v, %v", got, err)
	}
	if e.flag() != 0 {
		t.Fatal("a setter ran")
	}
}

func TestNewRealmRefusesReplacedReadingBuiltins(t *testing.T) {
	for _, name := range []string{"getOwnPropertyDescriptor", "getOwnPropertySymbols", "hasOwn"} {
		t.Run(name, func(t *testing.T) {
			vm := goja.New()
			if _, err := vm.RunString(`Object.` + name + ` = Object.is`); err != nil {
				t.Fatal(err)
			}
			_, err := Prepare(vm)
			if want := "jsvalue: Object." + name + " has been replaced; NewRealm must run before any script"; err == nil || err.Error() != want {
				t.Fatalf("error %v, want %s", err, want)
			}
		})
	}
}
