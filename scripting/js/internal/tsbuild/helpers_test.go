package tsbuild

import (
	"fmt"
	"testing"

	"github.com/dop251/goja"
)

// wrapperHeader is the CommonJS function header the tests compile Code
// inside, on Code's first line, as a host would.
const wrapperHeader = "(function (exports, require, module) {"

// mustTransform transforms src under name and fails the test on an error.
func mustTransform(t *testing.T, name, src string) *Output {
	t.Helper()
	out, err := Transform(name, []byte(src))
	if err != nil {
		t.Fatalf("Transform(%q): %v", name, err)
	}
	return out
}

// runModule runs out.Code as a CommonJS module in vm and returns its
// module.exports; require serves the values of modules and throws for any
// other name. The error is the goja error of compiling or running it.
func runModule(vm *goja.Runtime, out *Output, modules map[string]any) (*goja.Object, error) {
	prg, err := goja.Compile(out.Path, wrapperHeader+string(out.Code)+"\n})", false)
	if err != nil {
		return nil, err
	}
	fnv, err := vm.RunProgram(prg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		return nil, fmt.Errorf("the wrapper is not a function")
	}
	exports := vm.NewObject()
	module := vm.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return nil, err
	}
	require := func(name string) goja.Value {
		v, ok := modules[name]
		if !ok {
			panic(vm.NewTypeError("no module %q", name))
		}
		return vm.ToValue(v)
	}
	if _, err := fn(goja.Undefined(), exports, vm.ToValue(require), module); err != nil {
		return nil, err
	}
	return module.Get("exports").ToObject(vm), nil
}

// mustRun runs out as a module in a fresh runtime and fails on an error.
func mustRun(t *testing.T, out *Output, modules map[string]any) (*goja.Runtime, *goja.Object) {
	t.Helper()
	vm := goja.New()
	exports, err := runModule(vm, out, modules)
	if err != nil {
		t.Fatalf("running %s: %v\n--- code:\n%s", out.Path, err, out.Code)
	}
	return vm, exports
}

// call calls exports[name]() and, when it returns a promise, that promise's
// settlement (goja runs the job queue before a call from Go returns).
func call(t *testing.T, vm *goja.Runtime, exports *goja.Object, name string) (any, error) {
	t.Helper()
	fn, ok := goja.AssertFunction(exports.Get(name))
	if !ok {
		t.Fatalf("exports.%s is not a function", name)
	}
	v, err := fn(goja.Undefined())
	if err != nil {
		return nil, err
	}
	if p, ok := v.Export().(*goja.Promise); ok {
		switch p.State() {
		case goja.PromiseStateFulfilled:
			return p.Result().Export(), nil
		case goja.PromiseStateRejected:
			return nil, fmt.Errorf("rejected: %v", p.Result())
		default:
			t.Fatalf("exports.%s(): the promise is still pending", name)
		}
	}
	return v.Export(), nil
}
