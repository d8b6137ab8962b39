package jsvalue

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// TestToJSFreezesAsObjectFreeze checks that what ToJS builds reads, through
// every reflective built-in, like the same literal passed to Object.freeze:
// keys, descriptors, extensibility, prototype, and that writes fail.
func TestToJSFreezesAsObjectFreeze(t *testing.T) {
	cases := map[string]any{
		"[]":                           []any{},
		"[1]":                          []any{1.0},
		`[1,"a",[true,null]]`:          []any{1.0, "a", []any{true, nil}},
		`{"a":[{"b":[]}],"c":"d"}`:     dsl.NewObject(dsl.Member{Key: "a", Value: []any{dsl.NewObject(dsl.Member{Key: "b", Value: []any{}})}}, dsl.Member{Key: "c", Value: "d"}),
		`[[[[1]]],{"x":[2,3]},[],[4]]`: []any{[]any{[]any{[]any{1.0}}}, dsl.NewObject(dsl.Member{Key: "x", Value: []any{2.0, 3.0}}), []any{}, []any{4.0}},
	}
	for literal, v := range cases {
		e := newEnv(t)
		got, err := e.r.ToJS(v)
		if err != nil {
			t.Fatalf("%s: %v", literal, err)
		}
		e.vm.Set("got", got)
		e.run(`function deepFreeze(v) { if (v && typeof v === "object") { Object.values(v).forEach(deepFreeze); Object.freeze(v); } return v; }
function shape(v) {
  if (!v || typeof v !== "object") return v;
  // Per key: goja's getOwnPropertyDescriptors leaves the value out of a
  // frozen array's length (getOwnPropertyDescriptor has it).
  const ds = {};
  for (const k of Reflect.ownKeys(v)) ds[k] = Object.getOwnPropertyDescriptor(v, k);
  const out = { keys: Reflect.ownKeys(v), frozen: Object.isFrozen(v), extensible: Object.isExtensible(v),
    array: Array.isArray(v), proto: Object.getPrototypeOf(v) === (Array.isArray(v) ? Array.prototype : Object.prototype), d: {} };
  for (const k of Reflect.ownKeys(ds)) {
    const d = ds[k];
    out.d[k] = { w: d.writable, e: d.enumerable, c: d.configurable, v: shape(d.value) };
  }
  return out;
}
function writes(v) {
  "use strict";
  const fails = [];
  for (const f of [() => { v[0] = 9; }, () => { v.length = 0; }, () => { v.z = 1; }, () => { Array.prototype.push.call(v, 1); }]) {
    try { f(); fails.push(false); } catch (e) { fails.push(e instanceof TypeError); }
  }
  return fails;
}`)
		want := e.run(`JSON.stringify([shape(deepFreeze(` + literal + `)), writes(deepFreeze(` + literal + `))])`).String()
		have := e.run(`JSON.stringify([shape(got), writes(got)])`).String()
		if have != want {
			t.Errorf("%s:\n ToJS gives   %s\n freeze gives %s", literal, have, want)
		}
	}
}
