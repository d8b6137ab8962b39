package jsguard_test

import (
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

// A contained runtime still gives a program what a guarded one gives: the
// same values, and the same errors where jsguard has its own
// implementation or check (these are the messages of the full guard).
func TestAContainedRuntimeKeepsWhatAProgramSees(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"JSON.parse stops at its depth cap", `JSON.parse("[".repeat(20000) + "]".repeat(20000))`,
			"RangeError: JSON.parse: nesting deeper than 10000 levels"},
		{"join stops at its depth cap", `var a = []; for (var i = 0; i < 20000; i++) a = [a]; a.join(",")`,
			"RangeError: Array.prototype.join: nesting deeper than 10000 levels"},
		{"repeat keeps its allocation cap", `"x".repeat(1e9)`,
			"RangeError: String.prototype.repeat: result larger than 268435456 bytes"},
		{"a typed array keeps its allocation cap", `new Uint8Array(1e9)`,
			"RangeError: Uint8Array: buffer larger than 268435456 bytes"},
		{"RegExp refuses named groups", `new RegExp("(?<y>a)")`,
			`SyntaxError: named capture groups are not supported: /(?<y>a)/`},
		{"Function refuses a chain past its cap", `Function("f" + "()".repeat(20000))`,
			"SyntaxError: Function: 1:20002: the source chains more than 10000 calls, member accesses or tagged templates"},
		{"BigInt refuses a string past its cap", `BigInt("9".repeat(1e7))`,
			"RangeError: BigInt: result larger than 1048576 bits"},
	} {
		t.Run(c.name, func(t *testing.T) {
			full := thrown(t, guarded(t, jsguard.Options{}), c.src)
			contained := thrown(t, guarded(t, jsguard.Options{Contained: true}), c.src)
			if full != c.want || contained != c.want {
				t.Errorf("guarded threw %q, contained %q; want %q from both", full, contained, c.want)
			}
		})
	}
}

// The builtins whose wrapper would only count native re-entry are goja's
// own functions in a contained runtime; the ones jsguard implements or
// checks are replaced in both.
func TestAContainedRuntimeLeavesCountedOnlyBuiltinsToGoja(t *testing.T) {
	for _, c := range []struct {
		path     string
		replaced bool // in a contained runtime
	}{
		{"String.prototype.trim", false},
		{"Math.max", false},
		{"Object.keys", true}, // checked: it walks a sparse array's keys
		{"Array.prototype.push", false},
		{"JSON.parse", true},
		{"JSON.stringify", true},
		{"Array.prototype.join", true},
		{"String.prototype.repeat", true},
		{"RegExp.prototype.test", true},
		{"Function.prototype.bind", true},
	} {
		t.Run(c.path, func(t *testing.T) {
			for _, contained := range []bool{false, true} {
				vm := goja.New()
				get := func() goja.Value {
					v, err := vm.RunString(c.path)
					if err != nil {
						t.Fatal(err)
					}
					return v
				}
				before := get()
				if err := jsguard.Install(vm, jsguard.Options{Contained: contained}); err != nil {
					t.Fatal(err)
				}
				want := !contained || c.replaced
				if replaced := get() != before; replaced != want {
					t.Errorf("contained %v: replaced %v, want %v", contained, replaced, want)
				}
			}
		})
	}
}

// BenchmarkInstallContained is BenchmarkInstall for a contained runtime.
func BenchmarkInstallContained(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := jsguard.Install(goja.New(), jsguard.Options{Contained: true}); err != nil {
			b.Fatal(err)
		}
	}
}
