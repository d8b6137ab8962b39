package js_test

import (
	"testing"

	"github.com/dop251/goja"
)

// greetFloorJS is greet's definition as BenchmarkJSGreet loads it, minus the
// host: the body and the renderer.
const greetFloorJS = `({
  render: (args, value) => [{ type: "text", text: value.greeting }],
  execute(args) { return { greeting: "Hello, " + args.name + "!" }; },
})`

// BenchmarkJSGreetGojaFloor is the least a JS greet call costs in goja
// (issue 29's floor for the side-by-side greet): from Go, a frozen arguments
// object and a frozen execution object with fresh values (as
// BenchmarkJSPolicyNone's fresh inputs), the body called, its value read back
// into Go, a frozen copy of it handed to the renderer, and the content read
// back; in a plain runtime, without dsh's engine, event loop, guard, schema
// checks or contexts.
func BenchmarkJSGreetGojaFloor(b *testing.B) {
	vm := goja.New()
	def, err := vm.RunString(greetFloorJS)
	if err != nil {
		b.Fatal(err)
	}
	o := def.ToObject(vm)
	execute, _ := goja.AssertFunction(o.Get("execute"))
	render, _ := goja.AssertFunction(o.Get("render"))
	preventExtensions, _ := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("preventExtensions"))
	frozen := func(kv ...string) *goja.Object {
		obj := vm.NewObject()
		for i := 0; i < len(kv); i += 2 {
			_ = obj.DefineDataProperty(kv[i], vm.ToValue(kv[i+1]), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		}
		_, _ = preventExtensions(nil, obj)
		return obj
	}
	b.ReportAllocs()
	for b.Loop() {
		args := frozen("name", "Ada")
		exec := frozen("callId", "c1", "rootCallId", "c1", "name", "greet")
		_ = exec.DefineDataProperty("arguments", args, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		v, err := execute(o, args, exec)
		if err != nil {
			b.Fatal(err)
		}
		greeting := v.ToObject(vm).Get("greeting").String()
		content, err := render(o, args, frozen("greeting", greeting))
		if err != nil {
			b.Fatal(err)
		}
		block := content.ToObject(vm).Get("0").ToObject(vm)
		if block.Get("type").String() != "text" || block.Get("text").String() != "Hello, Ada!" {
			b.Fatalf("rendered %v", content)
		}
	}
}
