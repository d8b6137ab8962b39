package js

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/ptc"
)

func TestProgramConsoleFormats(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	tests := []struct {
		name, code string
		want       []string
	}{
		{"a point after a label reads as node's", `console.log('point', {x: 1, y: 2})`, []string{"point { x: 1, y: 2 }"}},
		{"a Set lists its values", `console.log(new Set([1, 'a', {c: 1}]), new Set())`, []string{"Set(3) { 1, 'a', { c: 1 } } Set(0) {}"}},
		{"a Set of many values breaks the line", `console.log(new Set(Array.from({length: 8}, (_, i) => 'value' + i)))`, []string{"Set(8) {\n  'value0',\n  'value1',\n  'value2',\n  'value3',\n  'value4',\n  'value5',\n  'value6',\n  'value7'\n}"}},
		{"a circular Set is marked", `const s = new Set(); s.add(s); console.log(s)`, []string{"<ref *1> Set(1) { [Circular *1] }"}},
		{"a Map lists its entries", `console.log(new Map([['a', 1], [{a: 1}, [1]]]), new Map())`, []string{"Map(2) { 'a' => 1, { a: 1 } => [ 1 ] } Map(0) {}"}},
		{"a Map of more than 100 entries is cut", `console.log(new Map(Array.from({length: 101}, (_, i) => [i, i])))`, []string{"Map(101) {\n" + mapLines(100) + "  ... 1 more item\n}"}},
		{"a circular Map is marked", `const m = new Map(); m.set('me', m); console.log(m)`, []string{"<ref *1> Map(1) { 'me' => [Circular *1] }"}},
		{"a Map subclass names both", `class M extends Map {}; console.log(new M([[1, 2]]))`, []string{"M(1) [Map] { 1 => 2 }"}},
		// goja escapes a slash in a source as \u002f where V8 writes \/.
		{"a RegExp is its literal", `console.log(/ab+c/gi, new RegExp('a/b', 'y'), /x/gimsuy)`, []string{"/ab+c/gi /a\\u002fb/y /x/gimsuy"}},
		{"a RegExp's own properties follow it", `console.log(Object.assign(/x/g, {a: 1}))`, []string{"/x/g { a: 1 }"}},
		{"a RegExp subclass is named", `class R extends RegExp {}; console.log(new R('x'))`, []string{"R /x/"}},
		{"weak collections do not list their items", `console.log(new WeakMap(), new WeakSet())`, []string{"WeakMap { <items unknown> } WeakSet { <items unknown> }"}},
		{"past depth 4 a Map is named", `console.log([[[[[new Map([[1, 2]])]]]]])`, []string{"[\n  [\n    [ [ [ [Map] ] ] ]\n  ]\n]"}},
		{"a Date is ISO time", `console.log(new Date(0), new Date(NaN))`, []string{"1970-01-01T00:00:00.000Z Invalid Date"}},
		{"boxed primitives show their value", `console.log(new Number(1), new Number(-0), new String("ab"), new Boolean(false), Object(Symbol('s')), Object(10n))`, []string{"[Number: 1] [Number: -0] [String: 'ab'] [Boolean: false] [Symbol: Symbol(s)] [BigInt: 10n]"}},
		{"a boxed primitive's own properties follow it", `console.log(Object.assign(new Number(3), {a: 1}), Object.assign(new String('x'), {b: 2}))`, []string{"[Number: 3] { a: 1 } [String: 'x'] { b: 2 }"}},
		{"an error's own properties follow its stack", `const e = new RangeError('x'); e.code = 5; console.log(e); console.log({e})`, []string{"RangeError: x\n\tat __dsh_main__ (program.ts:1:11(3)) {\n  code: 5\n}", "{\n  e: RangeError: x\n  \tat __dsh_main__ (program.ts:1:11(3)) {\n    code: 5\n  }\n}"}},
		{"typed arrays list their elements", `console.log(new Uint8Array([1, 2, 3]), new Float64Array(2), new BigInt64Array(1), new Int8Array([-1]), new Float32Array([0.1]))`, []string{"Uint8Array(3) [ 1, 2, 3 ] Float64Array(2) [ 0, 0 ] BigInt64Array(1) [ 0n ] Int8Array(1) [ -1 ] Float32Array(1) [ 0.10000000149011612 ]"}},
		{"a long typed array is grouped and cut at 100", `console.log(new Uint8Array(200))`, []string{"Uint8Array(200) [\n" + strings.Repeat("  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,\n", 8) + "  0, 0, 0, 0,\n  ... 100 more items\n]"}},
		{"an ArrayBuffer shows its bytes", `console.log(new ArrayBuffer(3))`, []string{"ArrayBuffer { [Uint8Contents]: <00 00 00>, byteLength: 3 }"}},
		{"a Promise shows its state", `console.log(Promise.resolve(4), new Promise(() => {}))`, []string{"Promise { 4 } Promise { <pending> }"}},
		{"class instances are named", `class A { constructor() { this.x = 1 } }; class B {}; console.log(new A(), new B(), Object.create(A.prototype))`, []string{"A { x: 1 } B {} A {}"}},
		{"null-prototype objects and arrays say so", `console.log(Object.assign(Object.create(null), {a: 1}), Object.setPrototypeOf([1], null))`, []string{"[Object: null prototype] { a: 1 } [Array(1): null prototype] [ 1 ]"}},
		{"symbol keys follow string keys", `console.log({[Symbol('k')]: 1, a: 2, [Symbol.iterator]: 3, [Symbol()]: 4})`, []string{"{ a: 2, [Symbol(k)]: 1, [Symbol(Symbol.iterator)]: 3, [Symbol()]: 4 }"}},
		{"non-enumerable symbol keys are hidden", `const o = {a: 1}; Object.defineProperty(o, Symbol('h'), {value: 1}); console.log(o)`, []string{"{ a: 1 }"}},
		{"functions by kind", `console.log(function f() {}, (() => () => {})(), async function af() {}, function* g() {}, async () => 1)`, []string{"[Function: f] [Function (anonymous)] [AsyncFunction: af] [GeneratorFunction: g] [AsyncFunction (anonymous)]"}},
		{"classes by name and parent", `class A {}; class C extends A {}; console.log(A, C, class {})`, []string{"[class A] [class C extends A] [class (anonymous)]"}},
		{"a function's own properties follow it", `console.log(Object.assign(function g() {}, {x: 1}))`, []string{"[Function: g] { x: 1 }"}},
		{"accessors are named, not called", `console.log({get a() { throw 1 }, get b() { throw 1 }, set b(v) {}, set c(v) {}})`, []string{"{ a: [Getter], b: [Getter/Setter], c: [Setter] }"}},
		{"circular references are numbered", `const c = {n: 'x'}; c.self = c; console.log(c)`, []string{"<ref *1> { n: 'x', self: [Circular *1] }"}},
		{"sparse arrays count their holes", `console.log([1, , , 4], [, 1])`, []string{"[ 1, <2 empty items>, 4 ] [ <1 empty item>, 1 ]"}},
		{"negative zero keeps its sign", `console.log(-0, [-0], {z: -0})`, []string{"-0 [ -0 ] { z: -0 }"}},
		{"past depth 4 values are named", `console.log({a: {b: {c: {d: {e: {f: 1}}}}}, arr: [[[[[[1]]]]]]})`, []string{"{\n  a: {\n    b: { c: { d: { e: [Object] } } }\n  },\n  arr: [\n    [ [ [ [Array] ] ] ]\n  ]\n}"}},
		{"past depth 4 collections are named", `console.log([[[[[new Set([1]), new Uint8Array(1), function f() {}, new Number(2)]]]]])`, []string{"[\n  [\n    [ [ [ [Set], [Uint8Array], [Function: f], [Number: 2] ] ] ]\n  ]\n]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, rt, context.Background(), nil, tt.code)
			if res.Err != nil {
				t.Fatalf("failed: %v", res.Err)
			}
			if !slices.Equal(res.Logs, tt.want) {
				t.Errorf("logs =\n%q\nwant\n%q", res.Logs, tt.want)
			}
		})
	}
}

// TestProgramConsoleRunsNoProgramCode: what the program replaced (iteration
// methods, getters, toString) is never called while a value is logged.
func TestProgramConsoleRunsNoProgramCode(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	const trap = `const boom = () => { throw new Error("program code ran") };
const ks = ['forEach', 'entries', 'values', 'keys'];
for (let i = 0; i < ks.length; i++) { Map.prototype[ks[i]] = boom; Set.prototype[ks[i]] = boom; }
Map.prototype[Symbol.iterator] = boom; Set.prototype[Symbol.iterator] = boom;
Object.defineProperty(Set.prototype, 'size', {get: boom});
Object.defineProperty(RegExp.prototype, 'source', {get: boom});
Object.defineProperty(RegExp.prototype, 'flags', {get: boom});
RegExp.prototype.toString = boom; Function.prototype.toString = boom;
Number.prototype.valueOf = boom; String.prototype.valueOf = boom; Symbol.prototype.toString = boom;
`
	tests := []struct {
		name, code string
		want       []string
	}{
		{"a Set with tampered iteration", `const s = new Set([]); s.add(1); s.add({a: 1}); console.log(s)`, []string{"Set(2) { 1, { a: 1 } }"}},
		{"a Map with tampered iteration", `console.log(new Map([[1, 2]]))`, []string{"Map(1) { 1 => 2 }"}},
		{"a RegExp with tampered getters", `Object.defineProperty(RegExp.prototype, 'global', {get: boom}); console.log(/x/g)`, []string{"/x/g"}},
		{"a WeakMap with tampered has", `WeakMap.prototype.has = boom; console.log(new WeakMap())`, []string{"WeakMap { <items unknown> }"}},
		{"boxed primitives with tampered valueOf", `console.log(new Number(1), new String('s'), Object(Symbol('y')))`, []string{"[Number: 1] [String: 's'] [Symbol: Symbol(y)]"}},
		{"functions with tampered toString", `console.log(class K {}, function f() {})`, []string{"[class K] [Function: f]"}},
		{"a Set's value's getter", `const s = new Set([]); s.add({get g() { throw 1 }}); console.log(s)`, []string{"Set(1) { { g: [Getter] } }"}},
		{"an error's getter property", `const e = new Error('m'); Object.defineProperty(e, 'p', {get: boom, enumerable: true}); console.log(e)`, []string{"Error: m\n\tat __dsh_main__ (program.ts:10:11(106)) {\n  p: [Getter]\n}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runProgram(t, rt, context.Background(), nil, trap+tt.code)
			if res.Err != nil {
				t.Fatalf("failed: %v", res.Err)
			}
			if !slices.Equal(res.Logs, tt.want) {
				t.Errorf("logs =\n%q\nwant\n%q", res.Logs, tt.want)
			}
		})
	}
}

// TestProgramConsoleBoundsLargeCollections: a collection of 100,000
// entries logs 100 of them.
func TestProgramConsoleBoundsLargeCollections(t *testing.T) {
	rt := newProgramRuntime(t, func(b *ptc.Budgets) { b.ComputeMs = 20_000; b.MaxWallMs = 60_000 })
	res, err := rt.Run(context.Background(), ptc.Request{Program: `const s = new Set(); for (let i = 0; i < 1e5; i++) s.add(i); console.log(s); console.log(new Map([[1, s]]))`})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err != nil {
		t.Fatalf("failed: %v", res.Err)
	}
	if len(res.Logs) != 2 {
		t.Fatalf("logs = %d entries, want 2", len(res.Logs))
	}
	if got := res.Logs[0]; !strings.HasPrefix(got, "Set(100000) {\n  0,\n  1,\n") || !strings.HasSuffix(got, "  99,\n  ... 99900 more items\n}") {
		t.Errorf("set = %.60q...%q", got, got[max(0, len(got)-40):])
	}
	if got := res.Logs[1]; !strings.HasPrefix(got, "Map(1) {\n  1 => Set(100000) {\n    0,\n") {
		t.Errorf("map = %.60q...", got)
	}
}

// mapLines are node's lines of the entries i => i, i < n.
func mapLines(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("  " + strconv.Itoa(i) + " => " + strconv.Itoa(i) + ",\n")
	}
	return b.String()
}
