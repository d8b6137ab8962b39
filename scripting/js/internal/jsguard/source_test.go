package jsguard

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func TestDeeplyNestedSourceIsRefusedBeforeParsing(t *testing.T) {
	cases := []struct{ name, code string }{
		{"eval", `eval("x = " + "[".repeat(1000000) + "]".repeat(1000000))`},
		{"indirect eval", `(0, eval)("x = " + "(".repeat(1000000) + "1" + ")".repeat(1000000))`},
		{"new Function", `new Function("return " + "a=".repeat(1000000) + "1")`},
		{"Function called", `Function("return " + "~".repeat(1000000) + "1")`},
		{"a generator function", `(function* () {}).constructor("yield " + "[".repeat(1000000))`},
		{"an async function", `(async function () {}).constructor("await " + "(".repeat(1000000))`},
	}
	for _, c := range cases {
		t.Run(c.name+" throws a SyntaxError", func(t *testing.T) {
			vm := goja.New()
			if err := Install(vm, Options{}); err != nil {
				t.Fatal(err)
			}
			_, err := vm.RunString(`try { ` + c.code + `; "no error" } catch (e) { throw String(e) }`)
			if err == nil || !strings.Contains(err.Error(), "SyntaxError") || !strings.Contains(err.Error(), "the source nests more than 10000 levels deep") {
				t.Fatalf("got %v", err)
			}
		})
	}
	t.Run("eval and Function still work", func(t *testing.T) {
		vm := goja.New()
		if err := Install(vm, Options{}); err != nil {
			t.Fatal(err)
		}
		v, err := vm.RunString(`var g = 40; eval("g + 1") + new Function("a", "return a * 2")(1) + (0, eval)("[[1]]")[0][0]`)
		if err != nil || v.ToInteger() != 44 {
			t.Fatalf("got %v, %v", v, err)
		}
	})
}

func TestEvalIsIndirect(t *testing.T) {
	vm := goja.New()
	if err := Install(vm, Options{}); err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunString(`var x = "global"; (function () { var x = "local"; return eval("x") })()`)
	if err != nil || v.String() != "global" {
		t.Fatalf("got %v, %v; want the global x (eval runs in the global scope)", v, err)
	}
}

func TestObjectIntrospectionCyclesAreBounded(t *testing.T) {
	for _, code := range []string{
		`var k = {}; k.toString = Object.getOwnPropertyDescriptor.bind(null, {}, k); Object.getOwnPropertyDescriptor({}, k)`,
		`var k = {}; k.toString = Object.hasOwn.bind(null, {}, k); Object.hasOwn({}, k)`,
	} {
		vm := goja.New()
		if err := Install(vm, Options{}); err != nil {
			t.Fatal(err)
		}
		_, err := vm.RunString(code)
		if err == nil || !strings.Contains(err.Error(), "RangeError") {
			t.Errorf("%s: got %v, want a RangeError", code, err)
		}
	}
}
