package jsguard

import (
	"testing"

	"github.com/dop251/goja"
)

// TestAMatchGojaCutShortIsRunAgain covers what follows when goja reports no
// match from regexp2 but the rerun finds one: regexp2 ended goja's run
// early (its clock, stopped after an idle second, jumps at its first tick
// and ends a match that has barely started, well before the time limit).
// The call is run once more, and throws only if it reports no match again.
// The early end itself depends on regexp2's clock, so this drives the step
// directly with the answer goja gave.
func TestAMatchGojaCutShortIsRunAgain(t *testing.T) {
	vm := goja.New()
	g, err := install(vm, Options{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunString(`new RegExp("a(?=b)", "g")`)
	if err != nil {
		t.Fatal(err)
	}
	re, info := g.regexpOf(v)
	s := vm.ToValue("xx ab").(goja.String)

	t.Run("a second run that finds the match returns it, from the same lastIndex", func(t *testing.T) {
		if err := re.Set("lastIndex", 99); err != nil { // what goja's run would leave
			t.Fatal(err)
		}
		got := g.confirmNoMatch(re, info, s, 1, 0, func() goja.Value {
			return g.re.nativeExec(goja.FunctionCall{This: re, Arguments: []goja.Value{s}})
		}, goja.Null())
		m, ok := got.(*goja.Object)
		if !ok || m.Get("index").ToInteger() != 3 || re.Get("lastIndex").ToInteger() != 4 {
			t.Errorf("got %v (lastIndex %v), want the match at 3 and lastIndex 4", got, re.Get("lastIndex"))
		}
	})
	t.Run("a second run that reports no match again throws the RangeError", func(t *testing.T) {
		var thrown any
		func() {
			defer func() { thrown = recover() }()
			g.confirmNoMatch(re, info, s, 1, 0, func() goja.Value { return goja.Null() }, goja.Null())
		}()
		o, ok := thrown.(*goja.Object)
		const want = "RangeError: regular expression /a(?=b)/g exceeded its match time limit (1s)"
		if !ok || o.String() != want {
			t.Errorf("threw %v, want %s", thrown, want)
		}
	})
	t.Run("no match where the rerun finds none is no match", func(t *testing.T) {
		got := g.confirmNoMatch(re, info, vm.ToValue("xx ac").(goja.String), 1, 0, func() goja.Value {
			t.Fatal("ran again")
			return nil
		}, goja.Null())
		if !goja.IsNull(got) {
			t.Errorf("got %v, want null", got)
		}
	})
}
