package eventloop

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func TestThrownValuesBecomeJSErrors(t *testing.T) {
	l := newLoop(t, Options{})
	for _, tc := range []struct {
		src         string
		name, msg   string
		value       any
		stackPrefix string
	}{
		{src: "throw new Error('plain')", name: "Error", msg: "plain", stackPrefix: "Error: plain\n\tat "},
		{src: "throw new TypeError('typed')", name: "TypeError", msg: "typed"},
		{src: "null.x", name: "TypeError", msg: "Cannot read property 'x' of undefined"}, // goja's wording
		{src: "undefinedVariable", name: "ReferenceError", msg: "undefinedVariable is not defined"},
		{src: "throw new Error()", name: "Error", msg: ""},
		{src: "class MyError extends Error { constructor(m) { super(m); this.name = 'MyError' } }; throw new MyError('mine')", name: "MyError", msg: "mine"},
		{src: "throw 'a string'", msg: "a string", value: "a string", stackPrefix: "a string\n\tat "},
		{src: "throw 42", msg: "42", value: 42.0},
		{src: "throw 1.5", msg: "1.5", value: 1.5},
		{src: "throw true", msg: "true", value: true},
		{src: "throw null", msg: "null"},
		{src: "throw undefined", msg: "undefined"},
		{src: "throw NaN", msg: "NaN"},
		{src: "throw 12n", msg: "12"},
		{src: "throw Symbol('sym')", msg: "Symbol(sym)"},
		{src: "throw {}", msg: "[object Object]"},
		{src: "throw []", msg: "[object Array]"},
		{src: "throw { name: 'ToolError', code: 'E_DISK', message: 'disk full' }", name: "ToolError", msg: "disk full"},
		{src: "throw { message: 'only a message' }", msg: "only a message"},
		{src: "throw { message: 42 }", msg: "[object Object]"},
		{src: "throw Object.create(null)", msg: "[object Object]"},
		{src: "throw { message: 'm', stack: 'custom stack' }", msg: "m", stackPrefix: "custom stack"},
		{src: "throw new Proxy({}, {})", msg: "<unprintable thrown value>"},
		{src: "throw new Proxy(new Error('x'), {})", msg: "<unprintable thrown value>"},
	} {
		_, err := runJS(l, context.Background(), tc.src)
		var je *JSError
		if !errors.As(err, &je) {
			t.Errorf("%s: got %T %v", tc.src, err, err)
			continue
		}
		if je.Name != tc.name || je.Message != tc.msg || je.Value != tc.value {
			t.Errorf("%s: got name %q message %q value %#v", tc.src, je.Name, je.Message, je.Value)
		}
		if tc.stackPrefix != "" && !strings.HasPrefix(je.Stack, tc.stackPrefix) {
			t.Errorf("%s: stack %q", tc.src, je.Stack)
		}
	}
}

const spySetup = `
	globalThis.calls = [];
	globalThis.spy = (what, v) => function () { calls.push(what); return v };
	globalThis.acc = get => ({ __proto__: null, get, configurable: true });
`

func TestReadingAThrownValueNeverCallsScriptCode(t *testing.T) {
	l := newLoop(t, Options{Setup: func(vm *goja.Runtime) error {
		_, err := vm.RunString(spySetup)
		return err
	}})
	for _, src := range []string{
		"const e1 = new Error('x'); Object.defineProperty(e1, 'message', acc(spy('message getter', 'm'))); throw e1",
		"class E extends Error {}; Object.defineProperty(E.prototype, 'name', acc(spy('name getter', 'N'))); throw new E('x')",
		"throw { toString: spy('toString', 's'), valueOf: spy('valueOf', 1) }",
		"throw { get message() { calls.push('object message getter'); return 'm' } }",
		"throw new Proxy({}, { get: spy('proxy get'), getOwnPropertyDescriptor: spy('proxy gopd'), ownKeys: spy('proxy ownKeys', []), getPrototypeOf: spy('proxy getPrototypeOf', null) })",
		"(async () => { await null; const e = new Error('x'); Object.defineProperty(e, 'message', acc(spy('async message getter'))); throw e })()",
	} {
		if _, err := runJS(l, context.Background(), src); err == nil {
			t.Fatalf("%s: no error", src)
		}
	}
	if got := mustRun(t, l, "calls.join()"); got != "" {
		t.Fatalf("script code ran: %v", got)
	}
	// An accessor message is ignored, and the lookup stops there.
	_, err := runJS(l, context.Background(), "const e2 = new TypeError('x'); Object.defineProperty(e2, 'message', acc(() => 'm')); throw e2")
	var je *JSError
	if !errors.As(err, &je) || je.Name != "TypeError" || je.Message != "" {
		t.Fatalf("got %#v", err)
	}
}

func TestAPollutedObjectPrototypeMakesThrownObjectsUnprintableNotRunnable(t *testing.T) {
	l := newLoop(t, Options{Setup: func(vm *goja.Runtime) error {
		_, err := vm.RunString(spySetup + `
			// No for-of: goja's iterator results would hit the traps themselves.
			Object.defineProperty(Object.prototype, 'value', { __proto__: null, get: spy('value getter'), set: spy('value setter'), configurable: true });
			Object.defineProperty(Object.prototype, 'writable', { __proto__: null, get: spy('writable getter'), set: spy('writable setter'), configurable: true });
			calls.length = 0;`)
		return err
	}})
	_, err := runJS(l, context.Background(), "throw new TypeError('x')")
	var je *JSError
	if !errors.As(err, &je) || je.Name != "Error" || je.Message != "<unprintable thrown value>" {
		t.Fatalf("got %#v", err)
	}
	if _, err := runJS(l, context.Background(), "throw 'still a string'"); err == nil || err.Error() != "still a string" {
		t.Fatalf("got %v", err)
	}
	if got := mustRun(t, l, "calls.join()"); got != "" {
		t.Fatalf("script code ran: %v", got)
	}
}

func TestTheThrownValueHookConvertsThrownObjects(t *testing.T) {
	l := newLoop(t, Options{ThrownValue: func(vm *goja.Runtime, v goja.Value) (any, bool) {
		obj := v.(*goja.Object)
		if obj.ClassName() != "Object" {
			return nil, false
		}
		return map[string]any{"code": obj.Get("code").String()}, true
	}})
	_, err := runJS(l, context.Background(), "throw { name: 'ToolError', code: 'E_X', message: 'm' }")
	var je *JSError
	if !errors.As(err, &je) || je.Value.(map[string]any)["code"] != "E_X" {
		t.Fatalf("got %#v", err)
	}
	_, err = runJS(l, context.Background(), "throw new Error('e')")
	if !errors.As(err, &je) || je.Value != nil {
		t.Fatalf("got %#v", err)
	}
}

func TestScriptErrorPassesOtherErrorsThrough(t *testing.T) {
	l := newLoop(t, Options{})
	plain := errors.New("plain Go error")
	_, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
		if l.ScriptError(vm, nil) != nil {
			t.Error("nil converted")
		}
		return nil, plain
	}, nil, nil)
	if err != plain {
		t.Fatalf("got %v", err)
	}
	// done's own goja errors are converted before they leave the loop.
	_, err = l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
		return vm.ToValue(1), nil
	}, nil, func(vm *goja.Runtime, v goja.Value, _ error) (any, error) {
		_, err := vm.RunString("throw new Error('from done')")
		return nil, err
	})
	var je *JSError
	if !errors.As(err, &je) || je.Message != "from done" {
		t.Fatalf("got %T %v", err, err)
	}
}
