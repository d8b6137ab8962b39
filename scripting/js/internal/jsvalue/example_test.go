package jsvalue_test

import (
	"fmt"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
)

func Example() {
	vm := goja.New()
	// First, before any script runs.
	if _, err := jsvalue.Prepare(vm); err != nil {
		panic(err)
	}

	args, _ := jsvalue.ToJS(vm, dsl.NewObject(dsl.Member{Key: "path", Value: "a.txt"}))
	vm.Set("args", args)
	v, _ := vm.RunString(`"use strict";
		let changed = true;
		try { args.path = "b.txt" } catch (e) { changed = false }
		({changed, size: 12, at: new Date(0)})`)

	_, err := jsvalue.ToGo(vm, v, "result", jsvalue.Limits{})
	fmt.Println(err)
	v, _ = vm.RunString(`({b: 1, 2: [true, null], a: "x"})`)
	got, _ := jsvalue.ToGo(vm, v, "result", jsvalue.Limits{})
	text, _ := dsl.Marshal(got)
	fmt.Println(string(text))
	// Output:
	// result.at: a Date is not lossless JSON
	// {"2":[true,null],"b":1,"a":"x"}
}
