package jsguard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dop251/goja"
	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

// regexp2's match-timeout clock outlives a match by about a second; it is
// not a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// guarded returns a fresh runtime with jsguard installed, as the event loop
// makes them (same call depth limit).
func guarded(t testing.TB, opts jsguard.Options) *goja.Runtime {
	t.Helper()
	vm := goja.New()
	vm.SetMaxCallStackSize(eventloop.DefaultMaxCallStackSize)
	if err := jsguard.Install(vm, opts); err != nil {
		t.Fatal(err)
	}
	return vm
}

// thrown runs src and returns "Name: message" of what it threw, or "" if
// it did not throw.
func thrown(t *testing.T, vm *goja.Runtime, src string) string {
	t.Helper()
	_, err := vm.RunString(src)
	if err == nil {
		return ""
	}
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		t.Fatalf("not a script exception: %v", err)
	}
	o, ok := ex.Value().(*goja.Object)
	if !ok {
		return ex.Value().String()
	}
	return o.Get("name").String() + ": " + o.Get("message").String()
}

// Each source builds, in the real runtime, a structure that goja walks by
// Go recursion (or a cycle of builtins that call each other in Go), deep
// enough to overflow the Go stack without jsguard at goja's default
// stack limits (these use a limit of 1000 levels and 3000-deep
// structures to stay fast; TestDefaultLimitStopsAFiveMillionDeepParse
// shows the default on the input).
func TestHostileNestingEndsInARangeError(t *testing.T) {
	const deepArray = `var a = []; for (var i = 0; i < 3000; i++) a = [a];`
	const deepProxy = `var p = {x: 1}; for (var i = 0; i < 3000; i++) p = new Proxy(p, {});`
	tests := []struct {
		name, src, want string
	}{
		{"JSON.parse of deeply nested arrays", `JSON.parse("[".repeat(5e5) + "]".repeat(5e5))`,
			"RangeError: JSON.parse: nesting deeper than 1000 levels"},
		{"JSON.parse of deeply nested objects", `JSON.parse('{"a":'.repeat(3000) + '1' + '}'.repeat(3000))`,
			"RangeError: JSON.parse: nesting deeper than 1000 levels"},
		{"a JSON.parse reviver that grafts a deep value onto a part not yet walked",
			deepArray + `JSON.parse('[1, 2]', function (k, v) { if (k === "0") this[1] = a; return v })`,
			"RangeError: JSON.parse: nesting deeper than 1000 levels"},
		{"JSON.stringify of a deep object", `var o = {}; for (var i = 0; i < 3000; i++) o = {o: o}; JSON.stringify(o)`,
			"RangeError: JSON.stringify: nesting deeper than 1000 levels"},
		{"JSON.stringify of a deep array with a replacer list", deepArray + `JSON.stringify(a, ["x"])`,
			"RangeError: JSON.stringify: nesting deeper than 1000 levels"},
		{"String of a deep array", deepArray + `String(a)`,
			"RangeError: Array.prototype.join: nesting deeper than 1000 levels"},
		{"join of a deep array", deepArray + `a.join("-")`,
			"RangeError: Array.prototype.join: nesting deeper than 1000 levels"},
		{"a template literal of a deep array", deepArray + "`${a}`",
			"RangeError: Array.prototype.toString: nesting deeper than 1000 levels"},
		{"toLocaleString of a deep array", deepArray + `a.toLocaleString()`,
			"RangeError: Array.prototype.toLocaleString: nesting deeper than 1000 levels"},
		{"flat(Infinity) of a deep array", deepArray + `a.flat(Infinity)`,
			"RangeError: Array.prototype.flat: nesting deeper than 1000 levels"},
		{"a TypedArray join whose separator converts through a chain",
			`var s = {}; for (var i = 0; i < 3000; i++) { var t = {}; t.toString = Uint8Array.prototype.join.bind(new Uint8Array(2), s); s = t } String(s)`,
			"RangeError: %TypedArray%.prototype.join: nesting deeper than 1000 levels"},
		{"Array.prototype.join standing in for toString", `Array.prototype.join = Array.prototype.toString; String([1])`,
			"RangeError: Array.prototype.toString: nesting deeper than 1000 levels"},
		{"an Error whose name is itself", `var e = new Error("x"); e.name = e; String(e)`,
			"RangeError: Error.prototype.toString: nesting deeper than 1000 levels"},
		{"a chain of Errors named by the next one", `var e = new Error("x"); for (var i = 0; i < 3000; i++) { var n = new Error("y"); n.name = e; e = n } String(e)`,
			"RangeError: Error.prototype.toString: nesting deeper than 1000 levels"},
		{"a string method as its own toString", `var o = {}; o.toString = String.prototype.trim; String(o)`,
			"RangeError: String.prototype.trim: nesting deeper than 1000 levels"},
		{"an array method converting its own length", `var o = {}; o.valueOf = Array.prototype.pop; o.length = o; Array.prototype.pop.call(o)`,
			"RangeError: Array.prototype.pop: nesting deeper than 1000 levels"},
		{"the String constructor as a get trap of a proxy in its target's prototype chain",
			`var t = {}; Object.setPrototypeOf(t, new Proxy(t, {get: String})); String(t)`,
			"RangeError: String: nesting deeper than 1000 levels"},
		{"a bound String constructor as toString", `var o = {}; o.toString = String.bind(null, o); String(o)`,
			"RangeError: String: nesting deeper than 1000 levels"},
		{"a chain of Function.prototype.call bound to the next link",
			`var f = function () { return 1 }; for (var i = 0; i < 3000; i++) f = Function.prototype.call.bind(f, null); f()`,
			"RangeError: Function.prototype.bind: chain deeper than 1000 levels"},
		{"a chain of bound functions", `var f = function () {}; for (var i = 0; i < 3000; i++) { f = f.bind(null); Object.defineProperty(f, "name", {value: ""}) } f()`,
			"RangeError: Function.prototype.bind: chain deeper than 1000 levels"},
		{"a chain of getters bound to Reflect.get on the next object",
			`var o = {x: 1}; for (var i = 0; i < 3000; i++) { var n = {}; Object.defineProperty(n, "x", {get: Reflect.get.bind(null, o, "x")}); o = n } o.x`,
			"RangeError: Reflect.get: nesting deeper than 1000 levels"},
		{"getters calling Reflect.get on the next object through a shared helper",
			`var o = {x: 1}; var get = Reflect.get; for (var i = 0; i < 3000; i++) { var n = {next: o}; Object.defineProperty(n, "x", {get: Function.prototype.call.bind(get, null, o, "x")}); o = n } o.x`,
			"RangeError: Function.prototype.call: nesting deeper than 1000 levels"},
		{"RegExp.prototype.exec bound to a regexp and its own argument as toString",
			`var re = /x/, o = {}; o.toString = re.exec.bind(re, o); re.exec(o)`,
			"RangeError: RegExp.prototype.exec: nesting deeper than 1000 levels"},
		{"RegExp.prototype.exec behind a proxy as toString",
			`var re = /x/, o = {}; o.toString = Function.prototype.call.bind(new Proxy(re.exec, {}), re, o); re.exec(o)`,
			"RangeError: Function.prototype.call: nesting deeper than 1000 levels"},
		{"RegExp.prototype.exec behind a revocable proxy, bound",
			`var re = /x/, o = {}; var p = Proxy.revocable(RegExp.prototype.exec, {}).proxy; o.toString = Reflect.apply.bind(null, p, re, [o]); String(o)`,
			"RangeError: RegExp.prototype.exec: nesting deeper than 1000 levels"},
		{"a chain of proxies without traps", deepProxy + `p.x`,
			"RangeError: Proxy: chain deeper than 1000 levels"},
		{"a chain of revocable proxies", `var p = {}; for (var i = 0; i < 3000; i++) p = Proxy.revocable(p, {}).proxy; "x" in p`,
			"RangeError: Proxy.revocable: chain deeper than 1000 levels"},
		{"a chain of proxies used as handlers", `var h = {}; for (var i = 0; i < 3000; i++) h = new Proxy({}, h); h.x`,
			"RangeError: Proxy: chain deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxDepth: 1000})
			if got := thrown(t, vm, tt.src); got != tt.want {
				t.Errorf("threw %q, want %q", got, tt.want)
			}
			// The runtime is still usable and its depth counter is back to 0.
			if got := thrown(t, vm, `JSON.stringify({a: [[1]]}) === '{"a":[[1]]}' || (() => { throw new Error("broken") })()`); got != "" {
				t.Errorf("after the error: %s", got)
			}
		})
	}
}

func TestDefaultLimitStopsAFiveMillionDeepParse(t *testing.T) {
	vm := guarded(t, jsguard.Options{})
	got := thrown(t, vm, `JSON.parse("[".repeat(5e6) + "]".repeat(5e6))`)
	if want := "RangeError: JSON.parse: nesting deeper than 10000 levels"; got != want {
		t.Errorf("threw %q, want %q", got, want)
	}
	// At the limit itself the document is accepted.
	if got := thrown(t, vm, `JSON.parse("[".repeat(10000) + "]".repeat(10000))`); got != "" {
		t.Errorf("10000 levels: %s", got)
	}
}

func TestAllocationCapsRefuseBeforeAllocating(t *testing.T) {
	const capBytes = 1 << 20
	tests := []struct {
		name, src, want string
	}{
		{"repeat", `"ab".repeat(300000)`, "RangeError: String.prototype.repeat: result larger than 1048576 bytes"},
		{"padStart", `"x".padStart(600000, "ab")`, "RangeError: String.prototype.padStart: result larger than 1048576 bytes"},
		{"padEnd", `"x".padEnd(600000)`, "RangeError: String.prototype.padEnd: result larger than 1048576 bytes"},
		{"concat", `var s = "x".repeat(300000); s.concat(s)`, "RangeError: String.prototype.concat: result larger than 1048576 bytes"},
		{"join of many elements", `var a = []; for (var i = 0; i < 40; i++) a.push("x".repeat(20000)); a.join("")`, "RangeError: Array.prototype.join: result larger than 1048576 bytes"},
		{"join of a huge sparse array", `new Array(1e9).join("")`, "RangeError: Array.prototype.join: result larger than 1048576 bytes"},
		{"fill of a huge array", `new Array(1e8).fill(0)`, "RangeError: Array.prototype.fill: array larger than 1048576 bytes"},
		{"ArrayBuffer", `new ArrayBuffer(2 * 1048576)`, "RangeError: ArrayBuffer: buffer larger than 1048576 bytes"},
		{"Uint8Array of a length", `new Uint8Array(2 * 1048576)`, "RangeError: Uint8Array: buffer larger than 1048576 bytes"},
		{"Float64Array of an array", `new Float64Array(new Array(200000))`, "RangeError: Float64Array: buffer larger than 1048576 bytes"},
		{"a TypedArray join", `new Float64Array(50000).join("--")`, "RangeError: %TypedArray%.prototype.join: result larger than 1048576 bytes"},
		{"apply of a huge array-like", `String.fromCharCode.apply(null, {length: 1e9})`, "RangeError: CreateListFromArrayLike: argument list larger than 1048576 bytes"},
		{"Reflect.apply of a huge array-like", `Reflect.apply(Math.max, null, {length: 2 ** 32 - 1})`, "RangeError: CreateListFromArrayLike: argument list larger than 1048576 bytes"},
		{"JSON.stringify of a long result", `var s = "x".repeat(100000); JSON.stringify([s, s, s, s, s, s])`, "RangeError: JSON.stringify: result larger than 1048576 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxAllocBytes: capBytes})
			if got := thrown(t, vm, tt.src); got != tt.want {
				t.Errorf("threw %q, want %q", got, tt.want)
			}
		})
	}
	t.Run("a 1 GiB string is refused at the default cap", func(t *testing.T) {
		vm := guarded(t, jsguard.Options{})
		got := thrown(t, vm, `"x".repeat(2 ** 30)`)
		if want := "RangeError: String.prototype.repeat: result larger than 268435456 bytes"; got != want {
			t.Errorf("threw %q, want %q", got, want)
		}
	})
	t.Run("sizes under the cap are served", func(t *testing.T) {
		vm := guarded(t, jsguard.Options{MaxAllocBytes: capBytes})
		v, err := vm.RunString(`["ab".repeat(1000).length, "x".padEnd(1000, "").length, new Uint8Array(1000).length, new Array(1000).fill(1).length, Math.max.apply(null, [1, 3, 2])].join()`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := v.String(), "2000,1,1000,1000,3"; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
}

// A backtracking regexp stops at the match timeout; the Run's deadline then
// interrupts the script that keeps calling it.
func TestACatastrophicRegexpEndsWithItsCall(t *testing.T) {
	l, err := eventloop.New(eventloop.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err = l.Run(ctx, func(vm *goja.Runtime) (goja.Value, error) {
		return vm.RunString(`for (;;) /^(a+)+\1$/.test("a".repeat(40) + "b")`)
	}, nil, nil)
	took := time.Since(start)
	if !errors.Is(err, eventloop.ErrInterrupted) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the interrupt", err)
	}
	if limit := deadline + eventloop.DefaultGrace + jsguard.RegexpMatchTimeout + 500*time.Millisecond; took > limit {
		t.Errorf("took %v, want at most %v", took, limit)
	}
}
