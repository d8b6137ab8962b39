package dsl_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

func obj(kv ...any) *dsl.Object {
	o := dsl.NewObject()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func TestSnapshotAcceptsLosslessValues(t *testing.T) {
	type named string
	tests := []struct {
		name string
		in   any
		want string // canonical JSON of the snapshot
	}{
		{"null stays null", nil, `null`},
		{"booleans stay booleans", true, `true`},
		{"a string is kept", "héllo", `"héllo"`},
		{"zero is fine", 0.0, `0`},
		{"a huge finite number is fine", 1e300, `1e+300`},
		{"an int becomes a float64", 42, `42`},
		{"2^53 is the largest integer accepted", int64(1 << 53), `9007199254740992`},
		{"-2^53 is the smallest", int64(-(1 << 53)), `-9007199254740992`},
		{"a uint8 is a number", uint8(7), `7`},
		{"a float32 widens exactly", float32(0.5), `0.5`},
		{"a json.Number is parsed", json.Number("1.25"), `1.25`},
		{"a named string kind is a string", named("x"), `"x"`},
		{"a map comes out in sorted key order", map[string]any{"b": 1, "a": 2, "c": []any{}}, `{"a":2,"b":1,"c":[]}`},
		{"typed slices and maps convert", map[string][]int{"z": {1, 2}, "y": nil}, ""},
		{"an object keeps its order", obj("z", 1, "a", obj("y", true, "b", nil)), `{"z":1,"a":{"y":true,"b":null}}`},
		{"an array of arrays", []any{[]any{1.0}, []any{}}, `[[1],[]]`},
		{"a key named __proto__ is data", obj("__proto__", "x"), `{"__proto__":"x"}`},
		{"an array value converts", [2]string{"a", "b"}, `["a","b"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dsl.Snapshot(tt.in)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("Snapshot(%v) = %v, want an error for the nil slice", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			text, err := dsl.Marshal(got)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(text) != tt.want {
				t.Errorf("got %s, want %s", text, tt.want)
			}
		})
	}
}

func TestSnapshotRejectsWithPath(t *testing.T) {
	cyclic := dsl.NewObject()
	cyclic.Set("self", cyclic)
	list := []any{1.0, nil}
	list[1] = list
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"NaN", obj("items", []any{1.0, 2.0, 3.0, math.NaN()}), "value.items[3]: NaN is not lossless JSON"},
		{"Infinity", math.Inf(1), "value: Infinity is not lossless JSON"},
		{"-Infinity", []any{math.Inf(-1)}, "value[0]: -Infinity is not lossless JSON"},
		{"negative zero", obj("a", math.Copysign(0, -1)), "value.a: -0 is not lossless JSON"},
		{"invalid UTF-8", obj("s", "\xff"), "value.s: invalid UTF-8 in string"},
		{"an object key that is not an identifier", obj("a b", []any{func() {}}), `value["a b"][0]: func() is not lossless JSON`},
		{"a cycle through an object", cyclic, "value.self: the value contains itself (cycle)"},
		{"a cycle through a slice", list, "value[1]: the value contains itself (cycle)"},
		{"an integer beyond 2^53", obj("n", int64(1<<53+1)), "value.n: integer 9007199254740993 is outside ±2^53"},
		{"a huge uint", uint64(math.MaxUint64), "value: integer 18446744073709551615 is outside ±2^53"},
		{"undefined", []any{dsl.Undefined{}}, "value[0]: undefined is not lossless JSON"},
		{"a struct", time.Time{}, "value: time.Time is not lossless JSON"},
		{"a pointer", new(int), "value: *int is not lossless JSON"},
		{"a channel inside a map", map[string]any{"c": make(chan int)}, "value.c: chan int is not lossless JSON"},
		{"a map with int keys", map[int]string{1: "a"}, "value: map[int]string is not lossless JSON"},
		{"bytes", []byte("x"), "value: []uint8 is not lossless JSON"},
		{"a bad json.Number", json.Number("0x10"), `value: number "0x10" is not a JSON number`},
		{"a json.Number that overflows", json.Number("1e400"), "value: number 1e400 overflows a float64"},
		{"a json.Number -0", json.Number("-0.0"), "value: -0 is not lossless JSON"},
		{"a json.Number that underflows", json.Number("1e-400"), "value: number 1e-400 underflows to 0"},
		{"a json.Number integer beyond 2^53", json.Number("9007199254740993"), "value: integer 9007199254740993 is not exactly a float64"},
		{"a nil object pointer", (*dsl.Object)(nil), "value: nil *dsl.Object is not lossless JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name+" is refused with its path", func(t *testing.T) {
			_, err := dsl.Snapshot(tt.in)
			var se *dsl.SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *SnapshotError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("err = %q, want %q", err, tt.want)
			}
			if dsl.IsLossless(tt.in) {
				t.Error("IsLossless = true")
			}
		})
	}
}

func TestSnapshotCopiesSharedReferences(t *testing.T) {
	shared := obj("x", 1.0)
	in := []any{shared, shared}
	out, err := dsl.Snapshot(in)
	if err != nil {
		t.Fatal(err)
	}
	l := out.([]any)
	a, b := l[0].(*dsl.Object), l[1].(*dsl.Object)
	if a == b || a == shared {
		t.Fatal("the snapshot shares containers with its input or with itself")
	}
	shared.Set("x", 2.0)
	if v, _ := a.Get("x"); v != 1.0 {
		t.Errorf("the snapshot changed with its input: %v", v)
	}
}

func TestSnapshotOfADeepValueDoesNotRecurse(t *testing.T) {
	var v any = "leaf"
	for range 10000 {
		v = []any{obj("k", v)}
	}
	out, err := dsl.Snapshot(v)
	if err != nil {
		t.Fatal(err)
	}
	if !dsl.Equal(v, out) {
		t.Error("deep snapshot differs from its input")
	}
	var bad any = math.NaN()
	for range 10000 {
		bad = []any{bad}
	}
	// The path names all 10,000 levels, the middle ones as a count.
	want := "value" + strings.Repeat("[0]", 20) + "…(9,958 more)…" + strings.Repeat("[0]", 22) + ": NaN is not lossless JSON"
	if _, err := dsl.Snapshot(bad); err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestSnapshotAtNamesTheRoot(t *testing.T) {
	_, err := dsl.SnapshotAt("arguments", obj("a", math.NaN()))
	if err == nil || err.Error() != "arguments.a: NaN is not lossless JSON" {
		t.Errorf("err = %v", err)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"key order does not matter", obj("a", 1.0, "b", 2.0), obj("b", 2.0, "a", 1.0), true},
		{"a map equals the same object", map[string]any{"a": []any{1}}, obj("a", []any{1.0}), true},
		{"numbers compare by value across kinds", 3, 3.0, true},
		{"array order matters", []any{1.0, 2.0}, []any{2.0, 1.0}, false},
		{"a missing key differs", obj("a", 1.0), obj("b", 1.0), false},
		{"null is not false", nil, false, false},
		{"NaN equals nothing, not even NaN", math.NaN(), math.NaN(), false},
		{"strings compare exactly", "a", "a", true},
		{"nested difference is found", obj("a", []any{obj("b", "x")}), obj("a", []any{obj("b", "y")}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := dsl.Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestObjectKeepsOrderAndIndexes(t *testing.T) {
	o := dsl.NewObject(dsl.Member{Key: "a", Value: 1.0}, dsl.Member{Key: "a", Value: 2.0})
	if o.Len() != 1 {
		t.Fatalf("Len = %d", o.Len())
	}
	if v, _ := o.Get("a"); v != 2.0 {
		t.Errorf("a repeated key should take the later value, got %v", v)
	}
	for i := range 20 {
		o.Set(string(rune('b'+i)), float64(i))
	}
	if !o.Delete("c") || o.Delete("c") || o.Has("c") {
		t.Error("Delete")
	}
	if v, ok := o.Get("u"); !ok || v != 19.0 {
		t.Errorf("Get(u) after a delete = %v, %v", v, ok)
	}
	keys := o.Keys()
	if keys[0] != "a" || keys[1] != "b" || keys[2] != "d" || len(keys) != 20 {
		t.Errorf("Keys = %v", keys)
	}
	n := 0
	for k := range o.All() {
		if k != keys[n] {
			t.Errorf("All out of order at %d", n)
		}
		n++
	}
}

func TestSnapshotFindsCyclesAtAnyDepth(t *testing.T) {
	// A shared subtree reached through two deep branches, then a cycle deep down.
	shared := []any{"x"}
	var left, right any = shared, shared
	for range 100 {
		left, right = []any{left}, obj("r", right)
	}
	root := dsl.NewObject()
	root.Set("l", left)
	root.Set("r", right)
	if _, err := dsl.Snapshot(root); err != nil {
		t.Fatalf("shared, non-cyclic references: %v", err)
	}
	deep := dsl.NewObject()
	cur := deep
	for range 200 {
		next := dsl.NewObject()
		cur.Set("a", []any{1.0})
		cur.Set("n", next)
		cur = next
	}
	cur.Set("loop", deep)
	_, err := dsl.Snapshot(obj("first", left, "second", deep))
	var se *dsl.SnapshotError
	if !errors.As(err, &se) || se.Reason != "the value contains itself (cycle)" {
		t.Fatalf("err = %v, want a cycle", err)
	}
}

func TestObjectWorksWithEncodingJSON(t *testing.T) {
	type wrapper struct {
		O *dsl.Object `json:"o"`
	}
	in := wrapper{O: obj("z", 1.0, "a", []any{"x"})}
	text, err := json.Marshal(in)
	if err != nil || string(text) != `{"o":{"z":1,"a":["x"]}}` {
		t.Fatalf("json.Marshal = %s, %v", text, err)
	}
	var out wrapper
	if err := json.Unmarshal(text, &out); err != nil || !dsl.Equal(out.O, in.O) || out.O.Keys()[0] != "z" {
		t.Fatalf("json.Unmarshal = %v, %v", out.O, err)
	}
	if err := json.Unmarshal([]byte(`{"o":[1]}`), &out); err == nil {
		t.Error("an array read into an Object should fail")
	}
}

func TestAnInvalidUTF8KeyIsNamedInItsPath(t *testing.T) {
	_, err := dsl.Snapshot(obj("\xff", 1.0))
	if err == nil || err.Error() != `value["\xff"]: invalid UTF-8 in object key` {
		t.Errorf("err = %v", err)
	}
}
