package jsguard_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
)

// runRewritten compiles src as program.go and host.go do (parse, rewrite
// the operators, CompileAST) and runs it; it returns the value's
// description (see describe) or "Name: message" of what it threw.
func runRewritten(t *testing.T, vm *goja.Runtime, src string) string {
	t.Helper()
	prog, err := parser.ParseFile(nil, "t.js", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jsrewrite.Operators(prog); err != nil {
		t.Fatal(err)
	}
	p, err := goja.CompileAST(prog, false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := vm.RunProgram(p)
	return outcome(t, v, err)
}

// runPlain runs src on goja as it is, without jsguard.
func runPlain(t *testing.T, src string) string {
	t.Helper()
	v, err := goja.New().RunString(src)
	return outcome(t, v, err)
}

func outcome(t *testing.T, v goja.Value, err error) string {
	t.Helper()
	if err != nil {
		var ex *goja.Exception
		if !errors.As(err, &ex) {
			t.Fatalf("not a script exception: %v", err)
		}
		if o, ok := ex.Value().(*goja.Object); ok {
			return o.Get("name").String() + ": " + o.Get("message").String()
		}
		return "throw " + ex.Value().String()
	}
	return describe(v)
}

// describe tells values apart that String would not: -0, a BigInt, an
// integer from a float.
func describe(v goja.Value) string {
	switch {
	case goja.IsBigInt(v):
		return v.String() + "n"
	case goja.IsNumber(v):
		f := v.ToFloat()
		if f == 0 && 1/f < 0 {
			return "-0"
		}
		return fmt.Sprintf("%v", v.Export())
	}
	return v.String()
}

// The rewritten operators compute what goja's do, for numbers and for
// BigInts under the cap, with the same conversions in the same order and
// the same errors.
func TestRewrittenOperatorsKeepGojasResults(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"a power of numbers", "var a = 2, b = 10; a ** b", "1024"},
		{"a negative power is a fraction", "var a = 2, b = -1; a ** b", "0.5"},
		{"a cube root of a negative number is NaN", "var a = -8, b = 1/3; a ** b", "NaN"},
		{"one to an infinite power is NaN", "var a = 1, b = Infinity; a ** b", "NaN"},
		{"a power past 2**53 is rounded as goja rounds it", "var a = 3, b = 39; a ** b", ""},
		{"a power that overflows an int64 is a float", "var a = 10, b = 20; a ** b", "1e+20"},
		{"a BigInt power", "var a = 2n, b = 64n; a ** b", "18446744073709551616n"},
		{"a negative BigInt power", "var a = -3n, b = 3n; a ** b", "-27n"},
		{"zero to the zero is one", "var a = 0n, b = 0n; a ** b", "1n"},
		{"a left shift of numbers wraps at 32 bits", "var a = 1, b = 31; a << b", "-2147483648"},
		{"a shift count of 32 or more is taken modulo 32", "var a = 5, b = 33; a << b", "10"},
		{"a negative shift count is taken modulo 32", "var a = 1, b = -1; a << b", "-2147483648"},
		{"a right shift keeps the sign", "var a = -16, b = 2; a >> b", "-4"},
		{"a right shift of a float truncates it", "var a = 1e10 + 0.5, b = 0; a >> b", "1410065408"},
		{"a BigInt left shift", "var a = 1n, b = 100n; a << b", "1267650600228229401496703205376n"},
		{"a BigInt right shift floors", "var a = -5n, b = 1n; a >> b", "-3n"},
		{"a negative BigInt left shift shifts right", "var a = 256n, b = -4n; a << b", "16n"},
		{"a negative BigInt right shift shifts left", "var a = 1n, b = -4n; a >> b", "16n"},
		{"a BigInt shifted right past its bits is zero", "var a = 12345n, b = 1000n; a >> b", "0n"},
		{"a product of numbers", "var a = 6, b = 7; a * b", "42"},
		{"a product with zero and minus one is -0", "var a = 0, b = -1; a * b", "-0"},
		{"a product of floats", "var a = 0.1, b = 3; a * b", "0.30000000000000004"},
		{"a product that overflows an int64 is a float", "var a = 2 ** 40, b = 2 ** 40; a * b", "1.2089258196146292e+24"},
		{"a BigInt product", "var a = 12345678901234567890n, b = -3n; a * b", "-37037036703703703670n"},
		{"strings convert to numbers", `var a = "3", b = "4"; a * b`, "12"},
		{"undefined converts to NaN", "var a, b = 2; a ** b", "NaN"},
		{"objects convert through valueOf", "var a = {valueOf() { return 5n }}, b = 2n; a ** b", "25n"},
		{"Symbol.toPrimitive is asked for a number", `var h; var a = {[Symbol.toPrimitive](x) { h = x; return 3 }}, b = 2; [a ** b, h].join()`, "9,number"},
		{"the left operand converts before the right", `var log = []; var a = {valueOf() { log.push("a"); return 2 }}, b = {valueOf() { log.push("b"); return 3 }}; a ** b; log.join()`, "a,b"},
		{"both operands are evaluated before either converts", `var log = []; function f(n) { log.push("e" + n); return {valueOf() { log.push("c" + n); return n }} }; f(1) << f(2); log.join()`, "e1,e2,c1,c2"},
		{"a BigInt and a number do not mix", "var a = 1n, b = 2; a ** b", "TypeError: Cannot mix BigInt and other types, use explicit conversions"},
		{"a number and a BigInt do not mix", "var a = 1, b = 2n; a * b", "TypeError: Cannot mix BigInt and other types, use explicit conversions"},
		{"a negative BigInt exponent is a RangeError", "var a = 2n, b = -1n; a ** b", "RangeError: exponent must be positive"},
		{"a symbol does not convert", "var a = Symbol(), b = 1; a << b", "TypeError: Cannot convert a Symbol value to a number"},
		{"a compound power", "var a = 3n; a **= 2n; a", "9n"},
		{"a compound shift on a property", "var o = {p: 1}; var k = 4; o.p <<= k; o.p", "16"},
		{"a compound product on an element", "var o = [5]; var i = 0, m = 3; o[i] *= m; o[0]", "15"},
		{"a compound target is evaluated once", "var calls = 0, o = {a: {p: 2}}; function k() { calls++; return 'p' } var e = 3; o.a[k()] **= e; [o.a.p, calls].join()", "8,1"},
		{"a compound target object is evaluated once", "var calls = 0, x = {p: 2}; function o() { calls++; return x } var e = 2n; x.p = 3n; o().p **= e; [x.p, calls].join()", "9,1"},
		{"a literal operand is left to goja", "var a = 3; [a ** 2, 2 ** a, a << 1, 1 << a, a >> 1, a * 2].join()", "9,8,6,8,1,6"},
		{"a literal BigInt power is not folded and is right", "2n ** 64n", "18446744073709551616n"},
		{"a compound in a generator with a yield keeps working", "function* g() { var o = {p: 2}; o[(yield 1)] **= (yield 2); return o.p } var it = g(); it.next(); it.next('p'); it.next(10).value", "1024"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			want := c.want
			if want == "" {
				want = runPlain(t, c.src)
			}
			if got := runRewritten(t, vm, c.src); got != want {
				t.Errorf("%s\n got %s\nwant %s", c.src, got, want)
			}
		})
	}
}

// Every BigInt result over the cap is refused before it is computed, by
// the operators (rewritten) and by the builtins, with the cap in the
// message.
func TestBigIntResultsOverTheCapAreRangeErrors(t *testing.T) {
	capErr := fmt.Sprintf("RangeError: BigInt: result larger than %d bits", jsguard.MaxBigIntBits)
	cases := []struct{ name, src, want string }{
		{"a shift by 2^40", "1n << (1n << 40n)", capErr},
		{"a shift by 2^64 (goja cuts it to 0)", "1n << (1n << 64n)", capErr},
		{"a right shift by a negative count", "-1n >> -(1n << 40n)", capErr},
		{"a power of 3 to 10^8", "3n ** BigInt(1e8)", capErr},
		{"the literal 3n ** 100000000n", "3n ** 100000000n", capErr},
		{"a power just over the cap", fmt.Sprintf("2n ** %dn", jsguard.MaxBigIntBits), capErr},
		{"a shift just over the cap", fmt.Sprintf("1n << %dn", jsguard.MaxBigIntBits), capErr},
		{"a product over the cap", fmt.Sprintf("var x = 1n << %dn; x * x", jsguard.MaxBigIntBits/2+1), capErr},
		{"squaring in a loop stops at the cap", "var x = 3n; for (;;) x *= x", capErr},
		{"a compound shift", "var x = 1n; x <<= 1n << 30n", capErr},
		{"an eval'd shift", "eval('1n << (1n << 40n)')", capErr},
		{"a Function's power", "Function('return 3n ** 100000000n')()", capErr},
		{"a power in a Function's default parameter", "Function('a = 3n ** 100000000n', 'return a')()", capErr},
		{"asUintN of 2^53-1 bits of -1n", "BigInt.asUintN(2 ** 53 - 1, -1n)", capErr},
		{"asIntN of a huge string", "BigInt.asIntN(2 ** 53 - 1, '-1' + '0'.repeat(400000))", capErr},
		{"BigInt of a 10^7-digit string", "BigInt('9'.repeat(1e7))", capErr},
		{"BigInt of a long hex string", "BigInt('0x' + 'f'.repeat(262145))", capErr},
		{"BigInt of an object giving a long string", "BigInt({valueOf() { return '9'.repeat(1e6) }})", capErr},
		{"a product with a huge literal", "eval('0x' + 'f'.repeat(300000) + 'n') * 1n", capErr},
		{"toString of a huge literal", "eval('0x' + 'f'.repeat(300000) + 'n').toString()",
			fmt.Sprintf("RangeError: BigInt.prototype.toString: BigInt larger than %d bits", jsguard.MaxBigIntBits)},
	}
	vm := guarded(t, jsguard.Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runRewritten(t, vm, c.src); got != c.want {
				t.Errorf("%s\n got %s\nwant %s", c.src, got, c.want)
			}
		})
	}
}

// Right at the cap, and for large values the cap lets through, the
// builtins and operators answer as goja does.
func TestBigIntsUnderTheCapAreComputed(t *testing.T) {
	bits := jsguard.MaxBigIntBits
	cases := []struct{ name, src, want string }{
		{"a shift to the cap", fmt.Sprintf("(1n << %dn).toString(16).length", bits-1), fmt.Sprint(bits / 4)},
		{"a power to the cap", fmt.Sprintf("(2n ** %dn).toString(2).length", bits-1), fmt.Sprint(bits)},
		{"a product to the cap", fmt.Sprintf("var x = (1n << %dn) - 1n; (x * x).toString(2).length", bits/2), fmt.Sprint(bits)},
		{"asUintN with many bits keeps a small value", "BigInt.asUintN(2 ** 53 - 1, 5n)", "5n"},
		{"asIntN with many bits keeps a negative value", "BigInt.asIntN(2 ** 53 - 1, -5n)", "-5n"},
		{"asIntN with many bits converts a string", "BigInt.asIntN(2 ** 40, '12')", "12n"},
		{"asIntN with many bits refuses a number as goja does", "BigInt.asIntN(2 ** 40, 12)", "TypeError: Cannot convert 12 to a BigInt"},
		{"asUintN with few bits wraps", "BigInt.asUintN(8, 257n)", "1n"},
		{"BigInt of a long string under the cap", "BigInt('1' + '0'.repeat(1000)).toString().length", "1001"},
		{"BigInt of a string with leading zeros", "BigInt('0'.repeat(400000) + '7')", "7n"},
		{"BigInt of a bad string", "BigInt('12x')", runPlain(t, "BigInt('12x')")},
	}
	vm := guarded(t, jsguard.Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := runRewritten(t, vm, c.src); got != c.want {
				t.Errorf("%s\n got %s\nwant %s", c.src, got, c.want)
			}
		})
	}
}

// The helpers are out of scripts' reach: no script text names them, and
// the global properties cannot be replaced or deleted.
func TestOperatorHelpersCannotBeReplaced(t *testing.T) {
	vm := guarded(t, jsguard.Options{})
	src := fmt.Sprintf(`"use strict";
var name = %q;
var errs = [];
try { globalThis[name] = () => 0 } catch (e) { errs.push(e.name) }
try { delete globalThis[name] } catch (e) { errs.push(e.name) }
try { Object.defineProperty(globalThis, name, {value: 1}) } catch (e) { errs.push(e.name) }
var x = 2n, y = 10n;
errs.join() + " " + (x ** y) + " " + Object.keys(globalThis).includes(name)`, jsrewrite.PowName)
	if got, want := runRewritten(t, vm, src), "TypeError,TypeError,TypeError 1024 false"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// eval keeps its own lexical declarations when its source is rewritten,
// and returns its completion value.
func TestRewrittenEvalKeepsEvalScoping(t *testing.T) {
	vm := guarded(t, jsguard.Options{})
	src := `var k = 3;
var a = eval("let z = 2n; z ** 3n");
var b = eval("let z = 1; z << k");
var c = eval("var shared = 2; shared * k");
[a, b, c, typeof z, shared].join()`
	if got, want := runRewritten(t, vm, src), "8,8,6,undefined,2"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got := runRewritten(t, vm, `Function("a) {}, 1n << (1n << 40n), function (", "")`)
	if want := "SyntaxError: Function: the parameters or body close the function"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got = runRewritten(t, vm, `class F extends Function {}; var f = new F("a", "b", "return a ** b"); [f(2, 5), f instanceof F].join()`)
	if want := "32,true"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
