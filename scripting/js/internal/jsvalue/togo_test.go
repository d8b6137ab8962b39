package jsvalue

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

func TestToGoAccepts(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"null is nil", `null`, `null`},
		{"booleans are kept", `[true, false]`, `[true,false]`},
		{"zero is zero", `0`, `0`},
		{"integers and fractions are float64", `[1, -2, 1.5, 0.1]`, `[1,-2,1.5,0.1]`},
		{"huge finite numbers are fine", `[1e300, -1e300, 5e-324]`, `[1e+300,-1e+300,5e-324]`},
		{"the safe integer range is exact", `[2**53, -(2**53), 2**53 - 1]`, `[9007199254740992,-9007199254740992,9007199254740991]`},
		{"strings are UTF-8", `["", "héllo", "😀", "\u2028"]`, "[\"\",\"héllo\",\"😀\",\"\u2028\"]"},
		{"a surrogate pair becomes one code point", `"a\ud83d\ude00b"`, `"a😀b"`},
		{"a real U+FFFD is kept", `["\ufffd", {"\ufffd": 1}]`, `["�",{"�":1}]`},
		{"an empty array and object", `[[], {}]`, `[[],{}]`},
		{"nested values keep their shape", `({a: [1, {b: null}], c: "x"})`, `{"a":[1,{"b":null}],"c":"x"}`},
		{"integer-like keys come first ascending, then insertion order", `({b: 1, 2: 2, a: 3, 1: 4, "01": 5, "-1": 6})`, `{"1":4,"2":2,"b":1,"a":3,"01":5,"-1":6}`},
		{"an object with a null prototype is fine", `(() => { const o = Object.create(null); o.x = 1; return o })()`, `{"x":1}`},
		{"__proto__ as an own data key is kept as data", `JSON.parse('{"__proto__": {"x": 1}, "a": 2}')`, `{"__proto__":{"x":1},"a":2}`},
		{"a computed __proto__ key is kept as data", `({["__proto__"]: 1})`, `{"__proto__":1}`},
		{"frozen and non-writable properties are fine", `Object.freeze({a: Object.freeze([1])})`, `{"a":[1]}`},
		{"a non-configurable enumerable data property is fine", `Object.defineProperty({}, "k", {value: 1, enumerable: true})`, `{"k":1}`},
		{"an array whose length was cut is dense", `(() => { const a = [1, 2, 3]; a.length = 2; return a })()`, `[1,2]`},
		{"an array filled in reverse is dense", `(() => { const a = []; a[2] = 3; a[1] = 2; a[0] = 1; return a })()`, `[1,2,3]`},
		{"shared references are copied", `(() => { const s = {x: [1]}; return {a: s, b: s, c: [s, s]} })()`, `{"a":{"x":[1]},"b":{"x":[1]},"c":[{"x":[1]},{"x":[1]}]}`},
		{"a class instance moved to Object.prototype is plain", `(() => { class A { constructor() { this.x = 1 } } return Object.setPrototypeOf(new A(), Object.prototype) })()`, `{"x":1}`},
		{"JSON.parse output converts", `JSON.parse('{"a":[1,"two",{"three":3}],"b":true}')`, `{"a":[1,"two",{"three":3}],"b":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			got, err := e.toGo(tt.src)
			if err != nil {
				t.Fatalf("ToGo: %v", err)
			}
			if s := mustJSON(t, got); s != tt.want {
				t.Fatalf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestToGoGoTypes(t *testing.T) {
	e := newEnv(t)
	got, err := e.toGo(`({n: null, b: true, i: 3, f: 0.5, s: "x", a: [], o: {}})`)
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := got.(*dsl.Object)
	if !ok {
		t.Fatalf("got %T, want *dsl.Object", got)
	}
	for key, want := range map[string]string{"n": "<nil>", "b": "bool", "i": "float64", "f": "float64", "s": "string", "a": "[]interface {}", "o": "*dsl.Object"} {
		v, _ := obj.Get(key)
		if typ := typeName(v); typ != want {
			t.Errorf("%s is %s, want %s", key, typ, want)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "<nil>"
	case bool:
		return "bool"
	case float64:
		return "float64"
	case string:
		return "string"
	case []any:
		return "[]interface {}"
	case *dsl.Object:
		return "*dsl.Object"
	}
	return "other"
}

func TestToGoRejects(t *testing.T) {
	const proto = "an object whose prototype is not Object.prototype is not lossless JSON"
	tests := []struct {
		name, src, path, reason string
	}{
		{"undefined at the root", `undefined`, "value", "undefined is not lossless JSON"},
		{"undefined as a property", `({a: undefined})`, "value.a", "undefined is not lossless JSON"},
		{"undefined as an element", `[1, undefined]`, "value[1]", "undefined is not lossless JSON"},
		{"NaN", `NaN`, "value", "NaN is not lossless JSON"},
		{"negative zero", `({n: -0})`, "value.n", "-0 is not lossless JSON"},
		{"negative zero from arithmetic", `[0 * -1]`, "value[0]", "-0 is not lossless JSON"},
		{"Infinity", `[Infinity]`, "value[0]", "Infinity is not lossless JSON"},
		{"minus Infinity", `-Infinity`, "value", "-Infinity is not lossless JSON"},
		{"a BigInt", `({b: 10n})`, "value.b", "a BigInt is not lossless JSON"},
		{"a function", `({f() {}})`, "value.f", "a function is not lossless JSON"},
		{"an arrow function", `[() => 1]`, "value[0]", "a function is not lossless JSON"},
		{"a class", `(class {})`, "value", "a function is not lossless JSON"},
		{"an async function", `(async function () {})`, "value", "a function is not lossless JSON"},
		{"a generator function", `(function* () {})`, "value", "a function is not lossless JSON"},
		{"a bound function", `(function () {}).bind(null)`, "value", "a function is not lossless JSON"},
		{"an own toJSON method is a function, not a hook", `({a: 1, toJSON() { return 2 }})`, "value.toJSON", "a function is not lossless JSON"},
		{"a symbol value", `({s: Symbol("x")})`, "value.s", "a symbol is not lossless JSON"},
		{"an object that contains itself", `(() => { const a = {}; a.self = a; return a })()`, "value.self", "the value contains itself (cycle)"},
		{"a cycle through an array", `(() => { const a = [1]; const o = {list: a}; a.push(o); return o })()`, "value.list[1]", "the value contains itself (cycle)"},
		{"an array that contains itself", `(() => { const a = []; a.push(a); return a })()`, "value[0]", "the value contains itself (cycle)"},
		{"a sparse array", `({xs: [1, , 3]})`, "value.xs", "a sparse array is not lossless JSON"},
		{"an array made with a length", `new Array(3)`, "value", "a sparse array is not lossless JSON"},
		{"a huge sparse array", `(() => { const a = []; a[4294967294] = 1; return a })()`, "value", "a sparse array is not lossless JSON"},
		{"an array with an extra property", `(() => { const a = [1]; a.x = 1; return a })()`, "value", "an array with extra properties is not lossless JSON"},
		{"an array with a key beyond the index range", `(() => { const a = [1]; a[4294967295] = 1; return a })()`, "value", "an array with extra properties is not lossless JSON"},
		{"an array subclass", `(() => { class A extends Array {} return {a: A.from([1])} })()`, "value.a", "an array subclass is not lossless JSON"},
		{"an array with a null prototype", `Object.setPrototypeOf([1], null)`, "value", "an array subclass is not lossless JSON"},
		{"a Date", `({d: new Date(0)})`, "value.d", "a Date is not lossless JSON"},
		{"a Date moved to Object.prototype", `Object.setPrototypeOf(new Date(0), Object.prototype)`, "value", "a Date is not lossless JSON"},
		{"a Map", `new Map([[1, 2]])`, "value", proto},
		{"a Set", `[new Set([1])]`, "value[0]", proto},
		{"a RegExp", `/x/`, "value", proto},
		{"a class instance", `(() => { class A { constructor() { this.x = 1 } } return new A() })()`, "value", proto},
		{"an object with a forged prototype", `Object.create({})`, "value", proto},
		{"an Error", `new Error("x")`, "value", proto},
		{"a boxed number", `new Number(1)`, "value", proto},
		{"a typed array", `new Uint8Array(2)`, "value", proto},
		{"a Promise", `Promise.resolve(1)`, "value", proto},
		{"an arguments object", `(function () { return arguments })(1)`, "value", "an Arguments object is not lossless JSON"},
		{"a boxed number moved to Object.prototype", `Object.setPrototypeOf(new Number(1), Object.prototype)`, "value", "a Number object is not lossless JSON"},
		{"a Map moved to Object.prototype", `Object.setPrototypeOf(new Map(), Object.prototype)`, "value", "an exotic object is not lossless JSON"},
		{"a getter", `({get a() { return 1 }})`, "value.a", "an accessor property is not lossless JSON"},
		{"a setter alone", `({set a(v) {}})`, "value.a", "an accessor property is not lossless JSON"},
		{"an accessor without functions", `Object.defineProperty({}, "a", {get: undefined, enumerable: true})`, "value.a", "an accessor property is not lossless JSON"},
		{"a getter on an array element", `Object.defineProperty([1, 2], 1, {get() { return 2 }, enumerable: true})`, "value[1]", "an accessor property is not lossless JSON"},
		{"a Proxy", `new Proxy({}, {})`, "value", "a Proxy is not lossless JSON"},
		{"a Proxy of an array", `({p: new Proxy([], {})})`, "value.p", "a Proxy is not lossless JSON"},
		{"a Proxy of a function", `[new Proxy(function () {}, {})]`, "value[0]", "a Proxy is not lossless JSON"},
		{"a revoked Proxy", `(() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy })()`, "value", "a Proxy is not lossless JSON"},
		{"a symbol-keyed property", `({a: {[Symbol("k")]: 1}})`, "value.a", "a symbol-keyed property is not lossless JSON"},
		{"a non-enumerable symbol-keyed property", `Object.defineProperty({}, Symbol("k"), {value: 1})`, "value", "a symbol-keyed property is not lossless JSON"},
		{"a symbol-keyed property on an array", `(() => { const a = [1]; a[Symbol("k")] = 1; return a })()`, "value", "a symbol-keyed property is not lossless JSON"},
		{"Math, which has a symbol key", `Math`, "value", "a symbol-keyed property is not lossless JSON"},
		{"a non-enumerable property", `({o: Object.defineProperty({x: 1}, "h", {value: 1})})`, "value.o.h", "a non-enumerable property is not lossless JSON"},
		{"a non-enumerable array element", `Object.defineProperty([1, 2], 0, {enumerable: false})`, "value[0]", "a non-enumerable property is not lossless JSON"},
		{"a lone high surrogate", `({s: "a\ud800"})`, "value.s", "a string with a lone surrogate is not lossless JSON"},
		{"a lone low surrogate", `["\udc00x"]`, "value[0]", "a string with a lone surrogate is not lossless JSON"},
		{"swapped surrogates", `"\ude00\ud83d"`, "value", "a string with a lone surrogate is not lossless JSON"},
		{"a key with a lone surrogate", `({ok: 1, "a\ud800": 1})`, `value["a\ud800"]`, "a key with a lone surrogate is not lossless JSON"},
		{"a lone-surrogate key next to a real U+FFFD key", `({"\ufffd": 1, "\udfff": 2})`, `value["\udfff"]`, "a key with a lone surrogate is not lossless JSON"},
		{"a key with a space is quoted", `({"a b": {c: undefined}})`, `value["a b"].c`, "undefined is not lossless JSON"},
		{"a key with a quote is escaped", `({'q"k': [NaN]})`, `value["q\"k"][0]`, "NaN is not lossless JSON"},
		{"a key starting with a digit is quoted", `({"1x": NaN})`, `value["1x"]`, "NaN is not lossless JSON"},
		{"an integer key is quoted", `({1: NaN})`, `value["1"]`, "NaN is not lossless JSON"},
		{"the empty key is quoted", `({"": NaN})`, `value[""]`, "NaN is not lossless JSON"},
		{"a non-ASCII key is quoted", `({"é": NaN})`, `value["é"]`, "NaN is not lossless JSON"},
		{"identifier keys with $ and _ use dots", `({$a_1: {_: NaN}})`, "value.$a_1._", "NaN is not lossless JSON"},
		{"a deep path names every step", `({a: {b: [0, {c: [1, NaN]}]}})`, "value.a.b[1].c[1]", "NaN is not lossless JSON"},
		{"the first offence in key order wins", `({z: 1, 2: NaN, a: undefined})`, `value["2"]`, "NaN is not lossless JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			got, err := e.toGo(tt.src)
			if err == nil {
				t.Fatalf("ToGo = %v, want an error", got)
			}
			wantSnapshotError(t, err, tt.path, tt.reason)
		})
	}
}

func TestToGoUsesTheRootName(t *testing.T) {
	e := newEnv(t)
	_, err := e.r.ToGo(e.run(`({a: [undefined]})`), "arguments", Limits{})
	wantSnapshotError(t, err, "arguments.a[0]", "undefined is not lossless JSON")
}

func TestToGoHostValues(t *testing.T) {
	e := newEnv(t)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"a Go slice of any reads as an array", []any{1, "x", nil}, `[1,"x",null]`},
		{"a Go map with one key reads as an object", map[string]any{"a": true}, `{"a":true}`},
		{"an int64 in the safe range is a number", int64(1) << 53, `9007199254740992`},
		{"a typed Go slice reads as an array", []int{1, 2}, `[1,2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.r.ToGo(e.vm.ToValue(tt.v), "value", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if s := mustJSON(t, got); s != tt.want {
				t.Fatalf("got %s, want %s", s, tt.want)
			}
		})
	}
	t.Run("a Go struct is an exotic object", func(t *testing.T) {
		_, err := e.r.ToGo(e.vm.ToValue(struct{ A int }{1}), "value", Limits{})
		wantSnapshotError(t, err, "value", "an exotic object is not lossless JSON")
	})
	t.Run("a typed Go map is an exotic object", func(t *testing.T) {
		_, err := e.r.ToGo(e.vm.ToValue(map[string]int{"a": 1}), "value", Limits{})
		wantSnapshotError(t, err, "value", "an exotic object is not lossless JSON")
	})
	t.Run("a Go function is a function", func(t *testing.T) {
		_, err := e.r.ToGo(e.vm.ToValue(func() {}), "value", Limits{})
		wantSnapshotError(t, err, "value", "a function is not lossless JSON")
	})
	t.Run("a nil Value is undefined", func(t *testing.T) {
		_, err := e.r.ToGo(nil, "value", Limits{})
		wantSnapshotError(t, err, "value", "undefined is not lossless JSON")
	})
}

func TestToGoLimits(t *testing.T) {
	tests := []struct {
		name, src    string
		lim          Limits
		path, reason string
	}{
		{"nesting one level deeper than allowed", `[[[[1]]]]`, Limits{MaxDepth: 3}, "value[0][0][0]", "nesting deeper than 3 levels"},
		{"nesting objects deeper than allowed", `({a: {b: {}}})`, Limits{MaxDepth: 2}, "value.a.b", "nesting deeper than 2 levels"},
		{"more values than allowed in an array", `[1, 2, 3]`, Limits{MaxNodes: 3}, "value", "more than 3 values"},
		{"more values than allowed in a nested object", `({a: {x: 1, y: 2}})`, Limits{MaxNodes: 3}, "value.a", "more than 3 values"},
		{"shared references count each time", `(() => { const s = [1, 2]; return [s, s] })()`, Limits{MaxNodes: 6}, "value[1]", "more than 6 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			_, err := e.r.ToGo(e.run(tt.src), "value", tt.lim)
			wantSnapshotError(t, err, tt.path, tt.reason)
		})
	}
	t.Run("exactly at the limits converts", func(t *testing.T) {
		e := newEnv(t)
		if _, err := e.r.ToGo(e.run(`[[[1, 2]]]`), "value", Limits{MaxDepth: 3, MaxNodes: 5}); err != nil {
			t.Fatal(err)
		}
	})
}

// depthOf follows the first child down and counts containers.
func depthOf(v any) int {
	d := 0
	for {
		switch x := v.(type) {
		case []any:
			d++
			if len(x) == 0 {
				return d
			}
			v = x[0]
		case *dsl.Object:
			d++
			if x.Len() == 0 {
				return d
			}
			_, v = x.At(0)
		default:
			return d
		}
	}
}

func TestToGoDeepValues(t *testing.T) {
	tests := []struct{ name, src string }{
		{"10,000 nested arrays convert", `(() => { let a = [1]; for (let i = 1; i < 10000; i++) a = [a]; return a })()`},
		{"10,000 nested objects convert", `(() => { let a = {v: 1}; for (let i = 1; i < 10000; i++) a = {a}; return a })()`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			got, err := e.toGo(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if d := depthOf(got); d != 10000 {
				t.Fatalf("depth %d, want 10000", d)
			}
		})
	}
	t.Run("a 10,001-deep array fails the 10,000 limit at its innermost array", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.r.ToGo(e.run(`(() => { let a = []; for (let i = 0; i < 10000; i++) a = [a]; return a })()`), "value", Limits{MaxDepth: 10000})
		// The path counts the levels it leaves out, so the message stays short.
		wantSnapshotError(t, err, "value"+strings.Repeat("[0]", 20)+"…(9,958 more)…"+strings.Repeat("[0]", 22), "nesting deeper than 10000 levels")
	})
}

func TestToGoCopiesSharedReferences(t *testing.T) {
	e := newEnv(t)
	got, err := e.toGo(`(() => { const s = {x: 1}; return {a: s, b: s} })()`)
	if err != nil {
		t.Fatal(err)
	}
	obj := got.(*dsl.Object)
	a, _ := obj.Get("a")
	b, _ := obj.Get("b")
	if a.(*dsl.Object) == b.(*dsl.Object) {
		t.Fatal("a shared reference came out as one Go object")
	}
}
