package jsvalue

import (
	"errors"
	"sync"
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// fuzzRealms recycles prepared runtimes: each is used by one goroutine at a time.
var fuzzRealms = sync.Pool{New: func() any {
	r, err := Prepare(goja.New())
	if err != nil {
		panic(err)
	}
	return r
}}

// FuzzRoundTrip checks that a JSON document dsl accepts survives ToJS then
// ToGo unchanged, and that the engine's own JSON.parse of it reads back as
// the same value.
func FuzzRoundTrip(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `-0.5`, `1e300`, `"a\u00e9\ud83d\ude00"`, `[]`, `{}`, `[[[]]]`,
		`{"b":1,"a":[1,2,{"c":"d"}],"":null,"__proto__":{"x":1}}`,
		`{"10":1,"9":2,"a":3,"-1":4,"01":5,"4294967295":6}`,
		`[9007199254740991,-9007199254740992,5e-324,0.1]`,
		`{"a b":{"c\"d":["\u0000\u001f\u2028"]}}`,
		`"\ufffd"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		r := fuzzRealms.Get().(*Realm)
		defer fuzzRealms.Put(r)
		js, err := r.ToJS(want)
		if err != nil {
			t.Fatalf("ToJS: %v", err)
		}
		back, err := r.ToGo(js, "value", Limits{})
		if err != nil {
			t.Fatalf("ToGo(ToJS(x)): %v", err)
		}
		if !dsl.Equal(back, want) {
			t.Fatalf("ToGo(ToJS(x)) differs from x")
		}
		parse, ok := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("parse"))
		if !ok {
			t.Fatal("no JSON.parse")
		}
		parsed, err := parse(goja.Undefined(), r.vm.ToValue(string(data)))
		if err != nil {
			t.Fatalf("JSON.parse refused what dsl accepted: %v", err)
		}
		got, err := r.ToGo(parsed, "value", Limits{})
		if err != nil {
			t.Fatalf("ToGo(JSON.parse(x)): %v", err)
		}
		if !dsl.Equal(got, want) {
			t.Fatalf("ToGo(JSON.parse(x)) differs from dsl.Unmarshal(x)")
		}
		fast := r.fast
		r.fast = nil
		slow, err := r.ToGo(parsed, "value", Limits{})
		r.fast = fast
		if err != nil || !dsl.Equal(slow, got) {
			t.Fatalf("the built-in path read %v (%v) where the fast path read the same value", slow, err)
		}
	})
}

// FuzzLimits checks the limits on JSON documents: ToGo on the fast path and
// on the built-in path refuse exactly the same values with the same errors,
// and ToJS of the document accepts it under the same limits exactly when
// ToGo does, since both count depth, values and bytes alike.
func FuzzLimits(f *testing.F) {
	for _, seed := range []string{`[]`, `[[[1]]]`, `{"a":"xxxxxxxx","b":[1,2,3]}`, `"long string"`, `{"k":{"k":{"k":{}}}}`} {
		f.Add([]byte(seed), uint8(3), uint8(5), uint16(100))
	}
	f.Fuzz(func(t *testing.T, data []byte, depth, nodes uint8, size uint16) {
		want, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		lim := Limits{MaxDepth: int(depth%8) + 1, MaxNodes: int(nodes%64) + 1, MaxBytes: int(size%2048) + 1}
		r := fuzzRealms.Get().(*Realm)
		defer fuzzRealms.Put(r)
		defer r.SetLimits(Limits{})
		defer r.SetFastPath(true)
		r.SetLimits(Limits{})
		js, err := r.ToJS(want)
		if err != nil {
			t.Fatalf("ToJS: %v", err)
		}
		r.SetFastPath(true)
		fast, fastErr := r.ToGo(js, "value", lim)
		r.SetFastPath(false)
		slow, slowErr := r.ToGo(js, "value", lim)
		if (fastErr == nil) != (slowErr == nil) || fastErr != nil && fastErr.Error() != slowErr.Error() {
			t.Fatalf("the fast path said %v, the built-in path %v", fastErr, slowErr)
		}
		if fastErr == nil && (!dsl.Equal(fast, want) || !dsl.Equal(slow, want)) {
			t.Fatal("a value within the limits changed")
		}
		if fastErr != nil && !errors.Is(fastErr, dsl.ErrLimit) {
			t.Fatalf("ToGo refused a JSON document for another reason: %v", fastErr)
		}
		r.SetLimits(lim)
		_, jsErr := r.ToJS(want)
		if (jsErr == nil) != (fastErr == nil) {
			t.Fatalf("ToJS said %v where ToGo said %v", jsErr, fastErr)
		}
		if jsErr != nil && !errors.Is(jsErr, dsl.ErrLimit) {
			t.Fatalf("ToJS refused a JSON document for another reason: %v", jsErr)
		}
	})
}
