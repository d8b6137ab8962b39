package jsguard_test

import (
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

// TestRegularExpressionsKeepGojasFastPaths checks that jsguard leaves alone
// the RegExp.prototype properties goja watches: redefining one of them
// sends every split, replace and match of the runtime down goja's generic
// algorithms, which allocate a new regexp per call and cost several times
// more (word_count's text.split(/\s+/) took 2.5 times as long).
func TestRegularExpressionsKeepGojasFastPaths(t *testing.T) {
	const src = `var text = "the quick  brown fox\tjumps over the lazy dog";
		(function () { text.split(/\s+/); text.replace(/o/g, "0"); text.match(/\w+/g) })`
	allocs := func(vm *goja.Runtime) float64 {
		v, err := vm.RunString(src)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := goja.AssertFunction(v)
		return testing.AllocsPerRun(200, func() {
			if _, err := f(goja.Undefined()); err != nil {
				t.Fatal(err)
			}
		})
	}
	plain := allocs(goja.New())
	guardedAllocs := allocs(guarded(t, jsguard.Options{}))
	// The wrappers of split, replace and match cost a few allocations; the
	// generic algorithms cost several times the plain count.
	if guardedAllocs > plain*1.3+10 {
		t.Errorf("%v allocations per run with jsguard, %v without: regular expressions left goja's fast paths", guardedAllocs, plain)
	}
	vm := guarded(t, jsguard.Options{})
	for _, expr := range []string{
		`/x/.exec === RegExp.prototype.exec && typeof RegExp.prototype.exec === "function"`,
		`/x/g.global && /x/m.multiline && /x/i.ignoreCase && /x/u.unicode && /x/y.sticky`,
		`/x/.exec.bind(/x/, "x")()[0] === "x" && /x/.exec.bind(/x/).name === "bound exec"`,
		`new Proxy(RegExp.prototype.exec, {}).call(/y/, "y")[0] === "y"`,
	} {
		v, err := vm.RunString(expr)
		if err != nil || !v.ToBoolean() {
			t.Errorf("%s: %v %v", expr, v, err)
		}
	}
}
