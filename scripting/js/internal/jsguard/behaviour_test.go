package jsguard_test

import (
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

// behaviourSrc exercises the builtins jsguard replaces or wraps; its output
// must be the same with and without jsguard.
const behaviourSrc = `var out = [];
function t(name, f) { try { out.push(name + ': ' + JSON.stringify(f())); } catch (e) { out.push(name + ': THROW ' + e.name + ': ' + e.message); } }
t('join', () => [1,[2,[3,null,undefined]],'x'].join('-'));
t('tostr', () => String([1,[2,3]]) + ` + "`" + `${[4,5]}` + "`" + `);
t('cycle', () => { var a = [1]; a.push(a); return String(a) });
t('typed', () => new Uint8Array([1,2,3]).join() + new Float64Array([1.5,-0]).toString());
t('err', () => String(new TypeError('boom')) + (new RangeError('x') instanceof RangeError) + (new RangeError('x') instanceof Error));
t('errclass', () => { class E extends Error { constructor(m){ super(m); this.name='E' } } var e = new E('m'); return [e instanceof E, e instanceof Error, String(e), Object.getPrototypeOf(TypeError) === Error, TypeError.prototype.constructor === TypeError, e.constructor === E] });
t('string', () => [String(5), String(Symbol('s')), new String('ab').length, 'ab'.constructor === String, typeof String, String.name, String.length, String.fromCharCode(65, 66)]);
t('number', () => [Number('12'), new Number(3) + 1, Number.isInteger(5), Number.MAX_SAFE_INTEGER, (5).constructor === Number]);
t('regexp', () => [RegExp('a+').test('aa'), /x/.constructor === RegExp, 'abc'.replace(/b/, 'X'), 'a-b-c'.split('-'), 'aXbX'.replaceAll('X', '_'), [...'a1b2'.matchAll(/\d/g)].map(m => m[0])]);
t('function', () => [new Function('a', 'return a*2')(4), Function('return 7')(), (function(){}).constructor === Function]);
t('bind', () => { function F(a, b) { this.s = a + b } var B = F.bind(null, 1); var o = new B(2); return [o.s, o instanceof F, o instanceof B, B.name, B.length, Math.max.bind(null, 3)(4)] });
t('proxy', () => { var p = new Proxy({a: 1}, { get: (t, k) => k === 'b' ? 2 : t[k] }); var r = Proxy.revocable({}, {}); r.revoke(); return [p.a, p.b, 'a' in p, typeof r.proxy] });
t('proxyNoNew', () => Proxy({}, {}));
t('typedarrays', () => { class U extends Uint8Array {} var u = new U(4); return [u.length, u instanceof Uint8Array, new Uint8Array(new ArrayBuffer(8)).length, new Float32Array([1, 2]).length, Uint8Array.from([1,2]).length, new Int16Array(3).BYTES_PER_ELEMENT, Object.getPrototypeOf(Uint8Array) === Object.getPrototypeOf(Int8Array)] });
t('ab', () => { class B extends ArrayBuffer {} return [new B(8).byteLength, new ArrayBuffer(4).slice(1).byteLength] });
t('json1', () => JSON.parse('{"a":[1,2,{"b":null}],"c":"\\u0041\\n","d":-0.5e2,"__proto__":1, "a":3}'));
t('json2', () => { var o = JSON.parse('{"__proto__": {"x": 1}}'); return [Object.keys(o), o.x, Object.getPrototypeOf(o) === Object.prototype] });
t('json3', () => JSON.parse('[1,2,{"a":[3]}]', function (k, v) { return typeof v === 'number' ? v * 10 : v }));
t('json4', () => JSON.stringify({a: [1, 'x', true, null, undefined, () => 1, Symbol()], b: undefined, c: new Date(0), d: {toJSON(k) { return 'k=' + k }}, e: new Number(3), f: new String('s'), g: new Boolean(false), h: NaN, i: -0, j: 1e21, k: 'é\u2028"\\\u0001\ud800'}));
t('json5', () => JSON.stringify({a: 1, b: [1, {c: 2}], d: {}}, null, 2));
t('json6', () => JSON.stringify({a: 1, b: 2, c: {a: 3, z: 4}}, ['c', 'a']));
t('json7', () => JSON.stringify({a: 1, b: 'x'}, (k, v) => typeof v === 'number' ? v + 1 : v, '--'));
t('json8', () => { var a = {}; a.a = a; return JSON.stringify(a) });
t('json9', () => JSON.stringify(10n));
t('json10', () => [JSON.stringify(undefined), JSON.stringify(function(){}), JSON.stringify('x'), JSON.stringify([]), JSON.stringify({}), JSON.stringify([[]], null, 1), JSON.stringify({a: []}, null, '\t')]);
t('json11', () => JSON.stringify(JSON.rawJSON('123')));
t('json12', () => JSON.stringify({a: 1}, null, new Number(3)));
t('flat', () => [[1, [2, [3, [4]]]].flat(), [1, [2, [3, [4]]]].flat(Infinity), [1, [2]].flatMap(x => [x, x])]);
t('fill', () => [new Array(3).fill(7), [1,2,3,4].fill(0, 1, -1), Array.prototype.fill.call({length: 2}, 1)]);
t('apply', () => [Math.max.apply(null, [1, 5, 2]), Reflect.apply(Math.min, null, {length: 2, 0: 4, 1: 3}), Reflect.construct(Date, [0]).getTime(), String.fromCharCode.apply(null, [72, 105])]);
t('strcaps', () => ['ab'.repeat(3), 'x'.padStart(4, 'ab'), 'x'.padEnd(3), 'a'.concat(1, null, [2]), 'x'.padStart(10, '')]);
t('repeatErr', () => 'x'.repeat(-1));
t('joinThis', () => Array.prototype.join.call(null));
t('symbolStr', () => String(Symbol.iterator) + Symbol('d').description);
t('misc', () => [Object.prototype.toString.call([]), Object.prototype.toString.call(null), [3,1,2].sort().join(), Array.from(new Set([1,2,2])).length, new Map([[1, 2]]).get(1), [...new Set([1])].length, typeof Array.prototype.values, Array.prototype[Symbol.iterator] === Array.prototype.values, (function(){ return arguments[Symbol.iterator] === Array.prototype.values })()]);
t('promise', () => typeof Promise.resolve(1).then);
t('generators', () => { function* g() { yield 1; yield 2 } return [...g()] });
t('fnToString', () => [String(Array.prototype.join), String(String), Function.prototype.toString.call(Math.max)]);
t('desc', () => { var d = Object.getOwnPropertyDescriptor(Array.prototype, 'join'); return [d.writable, d.enumerable, d.configurable, Array.prototype.join.name, Array.prototype.join.length] });
t('date', () => [new Date(0).toISOString(), JSON.stringify(new Date(0))]);
t('bigint', () => [BigInt(5) + 1n, typeof BigInt('7')]);
t('evalGlobal', () => { globalThis.evalX = 5; return eval('evalX + 1') }); // every eval is indirect under jsguard (doc.go)
t('regexpSame', () => { var re = /a/; return RegExp(re) === re });
t('regexpMarked', () => { var g = new RegExp('o', 'g'), y = new RegExp('o', 'y'), la = new RegExp('\\w(?=\\d)', 'g'); var r = []; for (var m; (m = g.exec('foo boo')) !== null;) r.push(m.index, g.lastIndex); y.lastIndex = 1; r.push(y.test('foo'), y.lastIndex, y.exec('foo') && y.lastIndex, y.test('foo'), y.lastIndex); r.push('a1b2c'.replace(la, '_'), la.lastIndex, 'a1b2c'.match(la).join(), 'x'.search(la), [...'a1b2'.matchAll(la)].map(m => m.index).join()); return r });
t('regexpNonASCII', () => { var t = 'héllo wörld, ça va? 😀 ok'; return [t.replace(/o/g, '0'), t.replace(/(\w)(\w)/g, '$2$1'), t.replace(/[éö]/g, c => c.toUpperCase()), t.split(/\s+/), t.split(/(,)\s*/, 3), t.match(/\w+/g), t.match(/\S+/gu), t.replace(/./gu, '.').length, t.split(/(?:)/u).length, t.search(/ö/), t.match(/ça/)] });
t('regexpSticky', () => { var re = /\w+/y; re.lastIndex = 3; var a = 'ab cd'.replace(re, 'X'); var b = re.lastIndex; re.lastIndex = 3; var c = 'ab cd'.match(re); return [a, b, c && c[0], re.lastIndex] });
t('regexpBacktracking', () => { var re = /(\w)\1/g; return ['aabbcd'.replace(re, '[$&]'), 'aabbcd'.match(re), 'aabbcd'.split(/(?=b)/), 'xaay'.search(/(a)\1/), [...'aabb'.matchAll(re)].map(m => m[1]).join(), re.test('zz'), re.lastIndex, /(?<=a)b/.exec('ab').index] });
t('regexpLone', () => { var s = 'a\ud800b\udc00c'; return [s.replace(/./gu, '.').length, s.split(/b/u).length, s.match(/[^a]/gu).length] });
t('regexpSubclass', () => { class R extends RegExp { exec(s) { this.n = (this.n || 0) + 1; return super.exec(s) } } var r = new R('o', 'g'); var out = ['foo'.replace(r, '0'), r.n, r.hasOwnProperty('exec'), r instanceof R, r instanceof RegExp]; class S extends RegExp {} var q = new S('(a)\\1', 'g'); return out.concat(['xaay'.replace(q, '-'), q.test('bb'), q instanceof S]) });
t('regexpCompile', () => { var re = /x/g; re.lastIndex = 2; re.compile('(a)\\1', 'g'); return [re.source, re.flags, re.lastIndex, re.test('baab'), re.lastIndex] });
out.join('\n')
`

func TestBuiltinsKeepTheirBehaviour(t *testing.T) {
	plain, err := goja.New().RunString(behaviourSrc)
	if err != nil {
		t.Fatal(err)
	}
	got, err := guarded(t, jsguard.Options{}).RunString(behaviourSrc)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(plain.String(), "\n")
	lines := strings.Split(got.String(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%d results, want %d", len(lines), len(want))
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("with jsguard:    %s\nwithout jsguard: %s", lines[i], want[i])
		}
	}
}

// JSON.parse gives the values goja's own parser gives, and the errors
// encoding/json's wording (which goja's own reports).
func TestJSONParse(t *testing.T) {
	valid := []string{
		`0`, `-0`, `1`, `-12.5e-3`, `-1e-400`, `123456789012345678901234567890`, `9007199254740993`, `0.1`,
		`"plain"`, `"esc \" \\ \/ \b \f \n \r \t \u0041 \u00e9 \ud83d\ude00"`, `"é and 😀 raw"`,
		`true`, `false`, `null`, ` [ 1 , [ ] , { } , "x" ] `, `{"a":1,"b":{"c":[true,null]},"a":2}`,
		`{"__proto__":{"x":1},"constructor":2}`, `{"1":1,"0":0,"b":2,"a":3}`, "\t\n\r [1]\n",
	}
	for _, src := range valid {
		t.Run("it reads "+src, func(t *testing.T) {
			check := `(function (s) { var v = JSON.parse(s); return JSON.stringify([v, typeof v, Object.is(v, -0), v && typeof v === "object" ? Object.getPrototypeOf(v) === (Array.isArray(v) ? Array.prototype : Object.prototype) : null, v && typeof v === "object" ? Object.keys(v) : null]) })`
			run := func(vm *goja.Runtime) string {
				f, err := vm.RunString(check)
				if err != nil {
					t.Fatal(err)
				}
				fn, _ := goja.AssertFunction(f)
				v, err := fn(goja.Undefined(), vm.ToValue(src))
				if err != nil {
					t.Fatal(err)
				}
				return v.String()
			}
			if got, want := run(guarded(t, jsguard.Options{})), run(goja.New()); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	t.Run("a number too large for a double is Infinity", func(t *testing.T) {
		// goja's own JSON.parse refuses it; JavaScript gives Infinity.
		if got := thrown(t, guarded(t, jsguard.Options{}), `if (JSON.parse("-1E400") !== -Infinity) throw new Error("wrong")`); got != "" {
			t.Error(got)
		}
	})
	t.Run("a lone surrogate escape is kept", func(t *testing.T) {
		got := thrown(t, guarded(t, jsguard.Options{}), `var s = JSON.parse('"\\ud800x"'); if (s.length !== 2 || s.charCodeAt(0) !== 0xd800) throw new Error(s.length)`)
		if got != "" {
			t.Error(got)
		}
	})
	t.Run("__proto__ is an own key and setters on Object.prototype are not called", func(t *testing.T) {
		got := thrown(t, guarded(t, jsguard.Options{}), `
			Object.defineProperty(Object.prototype, "trap", {set() { throw new Error("setter called") }});
			var o = JSON.parse('{"__proto__": [], "trap": 1}');
			if (!Object.prototype.hasOwnProperty.call(o, "__proto__") || Array.isArray(Object.getPrototypeOf(o)) || o.trap !== 1) throw new Error("wrong")`)
		if got != "" {
			t.Error(got)
		}
	})
	t.Run("the reviver sees every key bottom-up and can delete", func(t *testing.T) {
		vm := guarded(t, jsguard.Options{})
		v, err := vm.RunString(`var seen = []; var r = JSON.parse('{"a":[1,{"b":2}],"c":3}', function (k, v) { seen.push(k); return k === "c" ? undefined : v }); JSON.stringify([seen, r])`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := v.String(), `[["0","b","1","a","c",""],{"a":[1,{"b":2}]}]`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	invalid := []struct{ src, want string }{
		{``, "SyntaxError: Unexpected end of JSON input"},
		{`   `, "SyntaxError: Unexpected end of JSON input"},
		{`[1,`, "SyntaxError: Unexpected end of JSON input"},
		{`{"a":`, "SyntaxError: Unexpected end of JSON input"},
		{`"abc`, "SyntaxError: Unexpected end of JSON input"},
		{`tru`, "SyntaxError: Unexpected end of JSON input"},
		{`[1 2]`, "SyntaxError: invalid character '2' after array element"},
		{`{"a" 1}`, "SyntaxError: invalid character '1' after object key"},
		{`{"a":1 "b":2}`, "SyntaxError: invalid character '\"' after object key:value pair"},
		{`{"a":1,}`, "SyntaxError: invalid character '}' looking for beginning of object key string"},
		{`{1:2}`, "SyntaxError: invalid character '1' looking for beginning of object key string"},
		{`[1,]`, "SyntaxError: invalid character ']' looking for beginning of value"},
		{`x`, "SyntaxError: invalid character 'x' looking for beginning of value"},
		{`'a'`, "SyntaxError: invalid character '\\'' looking for beginning of value"},
		{`"\x"`, "SyntaxError: invalid character 'x' in string escape code"},
		{`"\u12x4"`, "SyntaxError: invalid character 'x' in \\u hexadecimal character escape"},
		{"\"a\u0001\"", "SyntaxError: invalid character '\\x01' in string literal"},
		{`01`, "SyntaxError: invalid character '1' after top-level value"},
		{`1.`, "SyntaxError: Unexpected end of JSON input"},
		{`1.e3`, "SyntaxError: invalid character 'e' after decimal point in numeric literal"},
		{`1e+`, "SyntaxError: Unexpected end of JSON input"},
		{`1ex`, "SyntaxError: invalid character 'x' in exponent of numeric literal"},
		{`-x`, "SyntaxError: invalid character 'x' in numeric literal"},
		{`trux`, "SyntaxError: invalid character 'x' in literal true (expecting 'e')"},
		{`[1] x`, "SyntaxError: invalid character 'x' after top-level value"},
		{`[1]]`, "SyntaxError: invalid character ']' after top-level value"},
		{`NaN`, "SyntaxError: invalid character 'N' looking for beginning of value"},
	}
	for _, tt := range invalid {
		t.Run("it refuses "+tt.src, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			if err := vm.Set("src", tt.src); err != nil {
				t.Fatal(err)
			}
			if got := thrown(t, vm, `JSON.parse(src)`); got != tt.want {
				t.Errorf("threw %q, want %q", got, tt.want)
			}
		})
	}
}
