package jsguard

// What jsguard costs a script: a loop of builtin calls (push, Math.max,
// join), and a loop that calls none, each with and without jsguard.

import (
	"testing"

	"github.com/dop251/goja"
)

func benchScript(b *testing.B, guarded bool, src string) {
	vm := goja.New()
	if guarded {
		if err := Install(vm, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	prog := goja.MustCompile("x", src, false)
	b.ResetTimer()
	for range b.N {
		if _, err := vm.RunProgram(prog); err != nil {
			b.Fatal(err)
		}
	}
}

const builtinHeavy = `(function(){ var a = []; for (var i = 0; i < 10000; i++) { a.push(i); } var s = 0; for (var i = 0; i < a.length; i++) { s += Math.max(a[i], 1); } return a.join(",").length + String(s).length; })()`
const plainLoop = `(function(){ var s = 0; for (var i = 0; i < 10000; i++) { s += i * 2; } return s; })()`

func BenchmarkCostBuiltinHeavy(b *testing.B) {
	b.Run("goja", func(b *testing.B) { benchScript(b, false, builtinHeavy) })
	b.Run("jsguard", func(b *testing.B) { benchScript(b, true, builtinHeavy) })
}

func BenchmarkCostPlainLoop(b *testing.B) {
	b.Run("goja", func(b *testing.B) { benchScript(b, false, plainLoop) })
	b.Run("jsguard", func(b *testing.B) { benchScript(b, true, plainLoop) })
}
