package jsvalue

import (
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// Scripts below bump the global flag whenever code of theirs runs; every test
// checks that ToGo and ToJS left it at 0.

func TestToGoNeverInvokesAGetter(t *testing.T) {
	tests := []struct{ name, src, path string }{
		{"a getter that would throw", `({get a() { flag++; throw new Error("boom") }})`, "value.a"},
		{"a getter that would mutate its object", `(() => { const o = {x: 1, get a() { flag++; delete this.x; return 1 }}; return o })()`, "value.a"},
		{"a nested getter", `({list: [{get deep() { flag++; return 1 }}]})`, "value.list[0].deep"},
		{"a getter on an array index", `Object.defineProperty([0], 0, {get() { flag++; return 1 }, enumerable: true})`, "value[0]"},
		{"a non-enumerable getter is still an accessor", `Object.defineProperty({}, "a", {get() { flag++; return 1 }})`, "value.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.run(`var flag = 0`)
			_, err := e.toGo(tt.src)
			wantSnapshotError(t, err, tt.path, "an accessor property is not lossless JSON")
			if e.flag() != 0 {
				t.Fatal("the getter ran")
			}
		})
	}
}

// proxyHandler traps every operation and bumps flag.
const proxyHandler = `(() => {
	const h = {};
	for (const trap of ["get", "set", "has", "deleteProperty", "ownKeys", "getOwnPropertyDescriptor",
		"defineProperty", "getPrototypeOf", "setPrototypeOf", "isExtensible", "preventExtensions", "apply", "construct"]) {
		h[trap] = function (...args) { flag++; return Reflect[trap](...args) };
	}
	return h;
})()`

func TestToGoNeverRunsAProxyTrap(t *testing.T) {
	const proxy = "a Proxy is not lossless JSON"
	tests := []struct{ name, src, path, reason string }{
		{"a Proxy of an object", `new Proxy({a: 1}, handler)`, "value", proxy},
		{"a Proxy of an array", `new Proxy([1], handler)`, "value", proxy},
		{"a Proxy of a function", `new Proxy(function () {}, handler)`, "value", proxy},
		{"a Proxy inside an object", `({p: new Proxy({}, handler)})`, "value.p", proxy},
		{"a Proxy inside an array", `[1, new Proxy([], handler)]`, "value[1]", proxy},
		{"a Proxy used as a prototype", `Object.create(new Proxy({}, handler))`, "value",
			"an object whose prototype is not Object.prototype is not lossless JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.run(`var flag = 0; var handler = ` + proxyHandler)
			_, err := e.toGo(tt.src)
			wantSnapshotError(t, err, tt.path, tt.reason)
			if e.flag() != 0 {
				t.Fatalf("a trap ran %d times", e.flag())
			}
		})
	}
	t.Run("freezing a Proxy is refused without a trap", func(t *testing.T) {
		e := newEnv(t)
		e.run(`var flag = 0; var handler = ` + proxyHandler)
		if err := e.r.Freeze(e.run(`new Proxy({}, handler)`).(*goja.Object)); err == nil {
			t.Fatal("Freeze of a Proxy succeeded")
		}
		if e.flag() != 0 {
			t.Fatal("a trap ran")
		}
	})
}

func TestToGoIgnoresPrototypePollution(t *testing.T) {
	e := newEnv(t)
	e.run(`
		var flag = 0;
		Object.prototype.polluted = 1;
		Object.prototype[0] = "zero";
		Array.prototype[1] = "one";
		Object.defineProperty(Object.prototype, "trap", {get() { flag++; return 1 }, set(v) { flag++ }});
		Object.prototype.toJSON = function () { flag++; return "json" };
		Object.prototype.valueOf = function () { flag++; return 1 };
		Object.prototype.toString = function () { flag++; return "s" };
		Object.prototype[Symbol.toPrimitive] = function () { flag++; return 1 };
		Array.prototype[Symbol.iterator] = function () { flag++; return [][Symbol.iterator]() };
	`)
	got, err := e.toGo(`({a: 1, list: [1, 2], nested: {b: [true]}})`)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `{"a":1,"list":[1,2],"nested":{"b":[true]}}` {
		t.Fatalf("got %s", s)
	}
	_, err = e.toGo(`[0, , 2]`)
	wantSnapshotError(t, err, "value", "a sparse array is not lossless JSON")
	if e.flag() != 0 {
		t.Fatalf("script code ran %d times", e.flag())
	}
}

// replaceBuiltins replaces every global a naive converter would use.
const replaceBuiltins = `
	var flag = 0;
	const bump = () => { flag++; throw new Error("replaced") };
	Object.keys = Object.values = Object.entries = bump;
	Object.getOwnPropertyNames = Object.getOwnPropertySymbols = bump;
	Object.getOwnPropertyDescriptor = Object.getOwnPropertyDescriptors = bump;
	Object.getPrototypeOf = Object.freeze = Object.isFrozen = Object.preventExtensions = bump;
	Object.defineProperty = Object.create = Object.assign = bump;
	Reflect.ownKeys = Reflect.getOwnPropertyDescriptor = Reflect.getPrototypeOf = bump;
	Array.isArray = Array.from = bump;
	Array.prototype.map = Array.prototype.forEach = Array.prototype.slice = Array.prototype.push = bump;
	JSON.stringify = JSON.parse = bump;
	globalThis.Object = globalThis.Array = globalThis.JSON = globalThis.Reflect = null;
`

func TestReplacedBuiltinsChangeNothing(t *testing.T) {
	e := newEnv(t)
	// Made before the built-ins go, to check the results after.
	e.run(`
		var value = {b: [1, "two", {c: null}], a: true, 3: 3};
		var orig = {keys: Object.keys, isFrozen: Object.isFrozen, getPrototypeOf: Object.getPrototypeOf,
			isArray: Array.isArray, stringify: JSON.stringify, values: Object.values,
			objectProto: Object.prototype, arrayProto: Array.prototype};
		function deepCheck(v) {
			if (v === null || typeof v !== "object") return true;
			const p = orig.getPrototypeOf(v);
			if (!orig.isFrozen(v) || p !== (orig.isArray(v) ? orig.arrayProto : orig.objectProto)) return false;
			return orig.values(v).every(deepCheck);
		}
	`)
	e.run(replaceBuiltins)
	got, err := e.r.ToGo(e.vm.Get("value"), "value", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `{"3":3,"b":[1,"two",{"c":null}],"a":true}` {
		t.Fatalf("ToGo got %s", s)
	}
	js, err := e.r.ToJS(got)
	if err != nil {
		t.Fatal(err)
	}
	e.vm.Set("js", js)
	if v := e.run(`deepCheck(js) && orig.stringify(js)`); v.String() != `{"3":3,"b":[1,"two",{"c":null}],"a":true}` {
		t.Fatalf("ToJS gave %v", v)
	}
	if err := e.r.Freeze(e.run(`({x: 1})`).(*goja.Object)); err != nil {
		t.Fatal(err)
	}
	if e.flag() != 0 {
		t.Fatalf("a replaced built-in ran %d times", e.flag())
	}
}

func TestToGoRefusesWhenDescriptorsWouldRunScript(t *testing.T) {
	for _, key := range descriptorKeys {
		t.Run("a setter named "+key+" on Object.prototype", func(t *testing.T) {
			e := newEnv(t).builtinOnly()
			e.run(`var flag = 0; Object.defineProperty(Object.prototype, "` + key + `", {set(v) { flag++ }, get() { flag++ }, configurable: true})`)
			_, err := e.toGo(`({a: 1})`)
			wantSnapshotError(t, err, "value", `Object.prototype has a property named "`+key+`", so the value cannot be read without running script code`)
			_, err = e.toGo(`[{a: 1}]`)
			wantSnapshotError(t, err, "value", `Object.prototype has a property named "`+key+`", so the value cannot be read without running script code`)
			if got, err := e.toGo(`"scalars need no descriptors"`); err != nil || got != "scalars need no descriptors" {
				t.Fatalf("a scalar: %v, %v", got, err)
			}
			if _, err := e.r.ToJS([]any{1.0}); err != nil {
				t.Fatalf("ToJS: %v", err)
			}
			if e.flag() != 0 {
				t.Fatal("the setter ran")
			}
		})
	}
	t.Run("a read-only value on Object.prototype", func(t *testing.T) {
		e := newEnv(t).builtinOnly()
		e.run(`Object.defineProperty(Object.prototype, "value", {value: "forged"})`)
		_, err := e.toGo(`({a: 1})`)
		wantSnapshotError(t, err, "value", `Object.prototype has a property named "value", so the value cannot be read without running script code`)
	})
}

func TestToGoFastPathReadsThroughAPollutedPrototype(t *testing.T) {
	for _, key := range descriptorKeys {
		t.Run("a setter named "+key+" on Object.prototype", func(t *testing.T) {
			e := newEnv(t)
			e.run(`var flag = 0; Object.defineProperty(Object.prototype, "` + key + `", {set(v) { flag++ }, get() { flag++ }, configurable: true})`)
			if got, err := e.toGo(`[{a: 1}, Object.freeze({b: [2]})]`); err != nil || mustJSON(t, got) != `[{"a":1},{"b":[2]}]` {
				t.Fatalf("got %v, %v", got, err)
			}
			// An object the fast path does not know (it once had a symbol
			// key) takes the built-in path, which still refuses.
			_, err := e.toGo(`(() => { const s = Symbol(); const o = {a: 1, [s]: 1}; delete o[s]; return o })()`)
			wantSnapshotError(t, err, "value", `Object.prototype has a property named "`+key+`", so the value cannot be read without running script code`)
			if e.flag() != 0 {
				t.Fatal("the setter ran")
			}
		})
	}
}

// TestToGoFastPathAgreesWithTheBuiltins reads each value through both paths:
// the same result, or the same error.
func TestToGoFastPathAgreesWithTheBuiltins(t *testing.T) {
	for _, src := range []string{
		`({b: 1, a: "x", c: [1, 2, {d: null}]})`,
		`({b: 1, 2: 0, 1: 0, "01": 3, 4294967295: 4, 4294967294: 5})`,
		`Object.freeze({a: Object.freeze([1, Object.freeze({})])})`,
		`Object.create(null)`, `[]`, `({})`, `[[[[]]]]`,
		`({__proto__: null, x: 1})`, `JSON.parse('{"__proto__": {"x": 1}}')`,
		`Object.defineProperty({a: 1}, "g", {get() { return 1 }, enumerable: true})`,
		`Object.defineProperty({a: 1}, "h", {value: 1, enumerable: false})`,
		`Object.defineProperty({a: 1}, "w", {value: 1, enumerable: true, writable: false})`,
		`({a: 1, [Symbol("s")]: 1})`, `({a: undefined})`, `({a: NaN})`, `({a: -0})`, `[1, , 3]`, `[1, undefined]`,
		`Object.assign([1], {x: 1})`, `Object.defineProperty([1, 2], 1, {get() { return 1 }, enumerable: true})`,
		`new (class A {})()`, `new Date(0)`, `new Map()`, `new Proxy({}, {})`, `(function () { return arguments })(1)`,
		`new (class B extends Array {})(1, 2)`, `(() => { const o = {a: {}}; o.a.b = o; return o })()`,
		`(() => { const a = [1]; a.push(a); return a })()`, `({"\ud800": 1})`, `({a: "\udc00"})`, `({"é": "ü", "😀": 1})`,
		`(() => { const o = {x: 1}; delete o.x; o.y = 2; return o })()`,
		`(() => { const a = [1, 2, 3]; a.length = 2; return a })()`,
		`(() => { const shared = {s: 1}; return [shared, shared] })()`,
		`Object.setPrototypeOf(new Error("e"), Object.prototype)`,
		`({f() {}})`, `({n: 10n})`,
	} {
		t.Run(src, func(t *testing.T) {
			fast := newEnv(t)
			slow := newEnv(t).builtinOnly()
			fv, ferr := fast.toGo(src)
			sv, serr := slow.toGo(src)
			if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
				t.Fatalf("fast path: %v\nbuilt-ins: %v", ferr, serr)
			}
			if ferr == nil && !dsl.Equal(fv, sv) {
				t.Fatalf("fast path read %s, the built-ins %s", mustJSON(t, fv), mustJSON(t, sv))
			}
		})
	}
}

func TestConversionInsideAHostCallRunsNoQueuedJob(t *testing.T) {
	e := newEnv(t)
	var flagDuring int64 = -1
	var convErr error
	e.vm.Set("host", func(v goja.Value) {
		if _, err := e.r.ToGo(v, "value", Limits{}); err != nil {
			convErr = err
		}
		if _, err := e.r.ToJS([]any{1.0}); err != nil {
			convErr = err
		}
		flagDuring = e.flag()
	})
	e.run(`var flag = 0; Promise.resolve().then(() => { flag++ }); host({a: [1]})`)
	if convErr != nil {
		t.Fatal(convErr)
	}
	if flagDuring != 0 {
		t.Fatal("a queued promise job ran during conversion")
	}
	if e.flag() != 1 {
		t.Fatal("the job was not queued")
	}
}
