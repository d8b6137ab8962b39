package jsvalue

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// checkFrozen is a script function that reports, for a converted value, the
// first container that is not frozen or not plain, or "" when all are.
const checkFrozen = `function checkFrozen(v, path = "value") {
	if (v === null || typeof v !== "object") return "";
	const isArray = Array.isArray(v);
	if (!Object.isFrozen(v)) return path + " is not frozen";
	if (Object.getPrototypeOf(v) !== (isArray ? Array.prototype : Object.prototype)) return path + " has another prototype";
	for (const k of Object.keys(v)) {
		const bad = checkFrozen(v[k], path + "[" + JSON.stringify(k) + "]");
		if (bad) return bad;
	}
	return "";
}`

func TestToJSBuildsFrozenPlainValues(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string // JSON.stringify of the result
	}{
		{"null", nil, `null`},
		{"booleans", []any{true, false}, `[true,false]`},
		{"numbers", []any{0.0, 1.5, -2.0, 1e300, 5e-324}, `[0,1.5,-2,1e+300,5e-324]`},
		{"strings", []any{"", "héllo", "😀", "\u2028"}, "[\"\",\"héllo\",\"😀\",\"\u2028\"]"},
		{"an empty array and object", []any{[]any{}, dsl.NewObject()}, `[[],{}]`},
		{"nested containers", dsl.NewObject(dsl.Member{Key: "a", Value: []any{1.0, dsl.NewObject(dsl.Member{Key: "b", Value: nil})}}), `{"a":[1,{"b":null}]}`},
		{"member order is kept", dsl.NewObject(dsl.Member{Key: "z", Value: 1.0}, dsl.Member{Key: "a", Value: 2.0}, dsl.Member{Key: "m", Value: 3.0}), `{"z":1,"a":2,"m":3}`},
		{"integer-like keys come first, as JavaScript orders them", dsl.NewObject(dsl.Member{Key: "b", Value: 1.0}, dsl.Member{Key: "2", Value: 2.0}, dsl.Member{Key: "a", Value: 3.0}, dsl.Member{Key: "1", Value: 4.0}), `{"1":4,"2":2,"b":1,"a":3}`},
		{"shared Go references become separate objects", func() any { s := dsl.NewObject(dsl.Member{Key: "x", Value: 1.0}); return []any{s, s} }(), `[{"x":1},{"x":1}]`},
		{"a map is normalised with sorted keys", map[string]any{"b": 1, "a": []int{1, 2}}, `{"a":[1,2],"b":1}`},
		{"integers and json.Number are numbers", []any{int64(7), uint8(8), json.Number("1.25")}, `[7,8,1.25]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.run(checkFrozen)
			v, err := e.r.ToJS(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			e.vm.Set("v", v)
			if got := e.run(`JSON.stringify(v)`).String(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if bad := e.run(`checkFrozen(v)`).String(); bad != "" {
				t.Fatal(bad)
			}
		})
	}
}

func TestToJSOutputRefusesChange(t *testing.T) {
	e := newEnv(t)
	v, err := e.r.ToJS(dsl.NewObject(
		dsl.Member{Key: "a", Value: 1.0},
		dsl.Member{Key: "list", Value: []any{1.0, 2.0}},
	))
	if err != nil {
		t.Fatal(err)
	}
	e.vm.Set("v", v)
	tests := []struct{ name, src string }{
		{"assigning a member throws in strict mode", `v.a = 2`},
		{"adding a member throws in strict mode", `v.b = 1`},
		{"deleting a member throws in strict mode", `delete v.a`},
		{"assigning an element throws in strict mode", `v.list[0] = 9`},
		{"pushing onto an array throws", `v.list.push(3)`},
		{"changing an array's length throws in strict mode", `v.list.length = 0`},
		{"redefining a member throws", `Object.defineProperty(v, "a", {value: 3})`},
		{"changing the prototype throws", `Object.setPrototypeOf(v, null)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.run(`(() => { "use strict"; try { ` + tt.src + `; return "no error" } catch (e) { return e instanceof TypeError ? "TypeError" : String(e) } })()`)
			if got.String() != "TypeError" {
				t.Fatalf("got %v", got)
			}
		})
	}
	if got := e.run(`JSON.stringify(v)`).String(); got != `{"a":1,"list":[1,2]}` {
		t.Fatalf("the value changed: %s", got)
	}
}

func TestToJSKeepsProtoAsData(t *testing.T) {
	e := newEnv(t)
	v, err := e.r.ToJS(dsl.NewObject(dsl.Member{Key: "__proto__", Value: dsl.NewObject(dsl.Member{Key: "x", Value: 1.0})}))
	if err != nil {
		t.Fatal(err)
	}
	e.vm.Set("v", v)
	got := e.run(`[Object.getPrototypeOf(v) === Object.prototype, Object.keys(v).join(), v.x === undefined, JSON.stringify(v)].join(" ")`)
	if got.String() != `true __proto__ true {"__proto__":{"x":1}}` {
		t.Fatalf("got %s", got)
	}
}

func TestToJSDoesNotTriggerPrototypeSetters(t *testing.T) {
	e := newEnv(t)
	// "value" goes last: once Object.prototype has it, defineProperty itself
	// reads it from every descriptor literal.
	e.run(`var flag = 0;
		for (const k of ["a", "0", "value"]) {
			Object.defineProperty(Array.prototype, k, {set(v) { flag++ }, get() { flag++ }, configurable: true});
			Object.defineProperty(Object.prototype, k, {set(v) { flag++ }, get() { flag++ }, configurable: true});
		}
		flag = 0;`)
	v, err := e.r.ToJS(dsl.NewObject(dsl.Member{Key: "a", Value: []any{1.0}}, dsl.Member{Key: "0", Value: "zero"}, dsl.Member{Key: "value", Value: true}))
	if err != nil {
		t.Fatal(err)
	}
	if e.flag() != 0 {
		t.Fatal("a setter on a prototype ran")
	}
	// The fast path reads the frozen result back without descriptors; the
	// built-ins could not, and refuse.
	back, err := e.r.ToGo(v, "value", Limits{})
	if err != nil || mustJSON(t, back) != `{"0":"zero","a":[1],"value":true}` {
		t.Fatalf("ToGo through a polluted Object.prototype: %v, %v", back, err)
	}
	e.builtinOnly()
	if back, err := e.r.ToGo(v, "value", Limits{}); err == nil {
		t.Fatalf("the built-ins read through a polluted Object.prototype: %v", back)
	}
	if e.flag() != 0 {
		t.Fatal("a setter on a prototype ran")
	}
	obj := v.(*goja.Object)
	if names := strings.Join(obj.GetOwnPropertyNames(), ","); names != "0,a,value" {
		t.Fatalf("own keys %s", names)
	}
}

func TestToJSRejects(t *testing.T) {
	cyclicObject := dsl.NewObject()
	cyclicObject.Set("self", cyclicObject)
	cyclicList := make([]any, 1)
	cyclicList[0] = cyclicList
	// Cycles found past the containers compared one by one (scanDepth):
	// back to the root from 40 levels down, and between two deep levels.
	deepToRoot := dsl.NewObject()
	var tip = deepToRoot
	for range 39 {
		next := dsl.NewObject()
		tip.Set("n", next)
		tip = next
	}
	tip.Set("n", deepToRoot)
	deepInside := dsl.NewObject()
	tip = deepInside
	var loopTo *dsl.Object
	for k := range 50 {
		next := dsl.NewObject()
		tip.Set("n", next)
		tip = next
		if k == 35 {
			loopTo = next
		}
	}
	tip.Set("n", []any{loopTo})
	tests := []struct {
		name         string
		v            any
		path, reason string
	}{
		{"NaN", math.NaN(), "value", "NaN is not lossless JSON"},
		{"Infinity in an array under a quoted key", dsl.NewObject(dsl.Member{Key: "a b", Value: []any{math.Inf(1)}}), `value["a b"][0]`, "Infinity is not lossless JSON"},
		{"negative zero", []any{math.Copysign(0, -1)}, "value[0]", "-0 is not lossless JSON"},
		{"invalid UTF-8 in a string", dsl.NewObject(dsl.Member{Key: "s", Value: "\xff"}), "value.s", "invalid UTF-8 in string"},
		{"invalid UTF-8 in a key", dsl.NewObject(dsl.Member{Key: "\xff", Value: 1.0}), `value["\xff"]`, "invalid UTF-8 in object key"},
		{"undefined", dsl.NewObject(dsl.Member{Key: "u", Value: dsl.Undefined{}}), "value.u", "undefined is not lossless JSON"},
		{"a Go function", []any{func() {}}, "value[0]", "func() is not lossless JSON"},
		{"an integer beyond 2^53", []any{int64(1)<<53 + 1}, "value[0]", "integer 9007199254740993 is outside ±2^53"},
		{"a nil object", (*dsl.Object)(nil), "value", "nil *dsl.Object is not lossless JSON"},
		{"an object that contains itself", cyclicObject, "value.self", "the value contains itself (cycle)"},
		{"a slice that contains itself", []any{1.0, cyclicList}, "value[1][0]", "the value contains itself (cycle)"},
		{"an object 40 levels down that contains the root", deepToRoot, "value" + strings.Repeat(".n", 40), "the value contains itself (cycle)"},
		{"a cycle between levels 37 and 52", deepInside, "value" + strings.Repeat(".n", 51) + "[0]", "the value contains itself (cycle)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			v, err := e.r.ToJS(tt.v)
			if err == nil {
				t.Fatalf("ToJS = %v, want an error", v)
			}
			wantSnapshotError(t, err, tt.path, tt.reason)
		})
	}
}

func TestToJSDeepValues(t *testing.T) {
	const depth = 10000
	var arr any = 1.0
	var obj any = 1.0
	for range depth {
		arr = []any{arr}
		obj = dsl.NewObject(dsl.Member{Key: "a", Value: obj})
	}
	for _, tt := range []struct {
		name string
		v    any
		walk string
	}{
		{"10,000 nested arrays", arr, `(() => { let d = 0; for (let x = v; Array.isArray(x); x = x[0]) { if (!Object.isFrozen(x)) return -1; d++ } return d })()`},
		{"10,000 nested objects", obj, `(() => { let d = 0; for (let x = v; typeof x === "object"; x = x.a) { if (!Object.isFrozen(x)) return -1; d++ } return d })()`},
	} {
		t.Run(tt.name+" build and read back", func(t *testing.T) {
			e := newEnv(t)
			v, err := e.r.ToJS(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			e.vm.Set("v", v)
			if d := e.run(tt.walk).ToInteger(); d != depth {
				t.Fatalf("depth %d, want %d", d, depth)
			}
			back, err := e.r.ToGo(v, "value", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !dsl.Equal(back, tt.v) {
				t.Fatal("the value did not come back equal")
			}
		})
	}
}

func TestRoundTrips(t *testing.T) {
	docs := []string{
		`null`, `true`, `0`, `-1.5e-7`, `"x"`, `[]`, `{}`,
		`{"b":1,"a":[1,2,{"c":"d"}],"":null,"__proto__":{"x":1}}`,
		`[1e21,1e-7,0.1,9007199254740991,-9007199254740992]`,
		`{"emoji":"😀","ctl":"\u0001\n","ls":"\u2028","fffd":"\ufffd"}`,
		`{"10":1,"9":2,"a":3,"-1":4,"1.5":5,"4294967295":6,"4294967294":7}`,
	}
	for _, doc := range docs {
		t.Run("the document "+doc+" survives both ways", func(t *testing.T) {
			e := newEnv(t)
			want, err := dsl.Unmarshal([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			js, err := e.r.ToJS(want)
			if err != nil {
				t.Fatal(err)
			}
			back, err := e.r.ToGo(js, "value", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !dsl.Equal(back, want) {
				t.Fatalf("ToGo(ToJS(x)) = %s", mustJSON(t, back))
			}
			e.vm.Set("doc", doc)
			parsed, err := e.r.ToGo(e.run(`JSON.parse(doc)`), "value", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !dsl.Equal(parsed, want) {
				t.Fatalf("ToGo(JSON.parse(doc)) = %s", mustJSON(t, parsed))
			}
			e.vm.Set("js", js)
			if s := e.run(`JSON.stringify(js)`).String(); s != mustJSON(t, back) {
				t.Fatalf("JSON.stringify(ToJS(x)) = %s, Marshal(ToGo) = %s", s, mustJSON(t, back))
			}
		})
	}
}

func TestToJSTakesAValueSharedBetweenBranches(t *testing.T) {
	// The same containers again and again, side by side, down to 40 levels:
	// shared, not a cycle, whether compared one by one (shallow) or in the
	// open map (deep).
	shared := dsl.NewObject(dsl.Member{Key: "x", Value: []any{1.0}})
	var v any = dsl.NewObject(dsl.Member{Key: "a", Value: shared}, dsl.Member{Key: "b", Value: shared})
	for range 40 {
		v = dsl.NewObject(dsl.Member{Key: "a", Value: v}, dsl.Member{Key: "s", Value: shared})
	}
	e := newEnv(t)
	got, err := e.r.ToJS(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := e.r.ToGo(got, "value", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !dsl.Equal(back, v) {
		t.Fatalf("ToGo(ToJS(x)) = %s", mustJSON(t, back))
	}
}
