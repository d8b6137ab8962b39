package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dop251/goja"
)

// gojaFloor loads testdata/floor/example_set.js, the work of the example
// policy set in front of word_count as one plain goja script (no dsh, no
// jsguard, one runtime), and returns a function that makes one call through
// it (through BenchmarkExamplePolicyOrdinary's four policies only, if
// ordinary): its final result, or an error if its promise did not fulfil.
func gojaFloor(tb testing.TB, ordinary bool) func(id, text string) (*goja.Object, error) {
	tb.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "floor", "example_set.js"))
	if err != nil {
		tb.Fatal(err)
	}
	vm := goja.New()
	v, err := vm.RunScript("example_set.js", string(src))
	if err != nil {
		tb.Fatal(err)
	}
	call, ok := goja.AssertFunction(v)
	if !ok {
		tb.Fatal("example_set.js did not end with a function")
	}
	return func(id, text string) (*goja.Object, error) {
		v, err := call(goja.Undefined(), vm.ToValue(id), vm.ToValue(text), vm.ToValue(ordinary))
		if err != nil {
			return nil, err
		}
		// Every await in it is on a settled promise: goja has run them all
		// by the time the outermost call returns.
		p, _ := v.Export().(*goja.Promise)
		if p == nil || p.State() != goja.PromiseStateFulfilled {
			return nil, fmt.Errorf("the call did not fulfil: %v", v)
		}
		o, _ := p.Result().(*goja.Object)
		return o, nil
	}
}

func TestTheGojaFloorDoesTheExampleSetsWork(t *testing.T) {
	call := gojaFloor(t, false)
	text := "the quick brown fox jumps over the lazy dog 0"
	for n := 1; n <= 3; n++ {
		r, err := call(fmt.Sprint("c", n), text)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Get("value").ToObject(nil).Get("words").ToInteger(); got != 10 {
			t.Fatalf("call %d: %d words, want 10", n, got)
		}
		if got := r.Get("content").ToObject(nil).Get("0").ToObject(nil).Get("text").String(); got != "10 words" {
			t.Fatalf("call %d: content %q", n, got)
		}
		// repeat_reminder speaks up at the third identical call.
		if ctxs := r.Get("additionalContexts"); (n == 3) != (ctxs != nil && !goja.IsUndefined(ctxs)) {
			t.Fatalf("call %d: additionalContexts %v", n, ctxs)
		}
	}
}

// BenchmarkExamplePolicySetGojaFloor is what goja alone spends on the work
// of BenchmarkExamplePolicySet/js_policies (set) and of
// BenchmarkExamplePolicyOrdinary/js (ordinary): the same policies' and tool's
// code, called with less than the specification asks for around it (the
// execution and result objects are not even frozen), in one plain runtime,
// one entry per call, with no guard, no conversion and none of the engine.
// Issue 29's floor: no use of goja's public API by dsh makes these calls
// cheaper than this.
func BenchmarkExamplePolicySetGojaFloor(b *testing.B) {
	for _, tc := range []struct {
		name     string
		ordinary bool
	}{{"set", false}, {"ordinary", true}} {
		b.Run(tc.name, func(b *testing.B) {
			call := gojaFloor(b, tc.ordinary)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := call("c"+strconv.Itoa(i), "the quick brown fox jumps over the lazy dog "+strconv.Itoa(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
