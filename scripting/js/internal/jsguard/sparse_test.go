package jsguard_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

const sparse = `var a = []; a.length = 2**32 - 1; a[5] = 1;`

// Each method walks every index of a sparse array of length 2^32-1 in Go
// (hours without jsguard) or allocates by its length (sort: 64 GiB).
func TestNativeWalksOverHolesAreRefusedBeforeTheyStart(t *testing.T) {
	calls := map[string]string{
		"indexOf": "1, 6", "includes": "2", "lastIndexOf": "2", "reverse": "", "copyWithin": "0, 10",
		"every": "function () { return true }", "some": "function () { return false }", "forEach": "function () {}",
		"map": "function (x) { return x }", "filter": "function () { return true }", "reduce": "function (x) { return x }, 0",
		"reduceRight": "function (x) { return x }, 0", "find": "Boolean", "findIndex": "Boolean", "findLast": "Boolean",
		"findLastIndex": "Boolean", "flat": "", "flatMap": "function (x) { return x }", "join": `""`, "toLocaleString": "",
		"shift": "", "unshift": "0", "sort": "", "toSorted": "", "toReversed": "",
		"with": "0, 1", "toSpliced": "0, 1", "slice": "", "splice": "0, 1", "concat": "[]",
	}
	for m, args := range calls {
		t.Run("Array.prototype."+m+" on a sparse array of length 2^32-1", func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			want := fmt.Sprintf("RangeError: Array.prototype.%s: length 4294967295 has more than 1048576 holes", m)
			if m == "join" {
				want = "RangeError: Array.prototype.join: result larger than 268435456 bytes"
			}
			if m == "concat" {
				want = "RangeError: Array.prototype.concat: length 4294967295 has more than 1048576 holes"
			}
			began := time.Now()
			if got := thrown(t, vm, sparse+"a."+m+"("+args+")"); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

func TestNativeWalkCapsApplyToArrayLikesAndStrings(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"includes on an array-like of length 2^53-1", `Array.prototype.includes.call({length: 2**53 - 1}, 1)`,
			"RangeError: Array.prototype.includes: length 9007199254740991 has more than 1048576 holes"},
		{"indexOf on a typed array through Array.prototype", `Array.prototype.indexOf.call(new Uint8Array(2**21), 1)`,
			"RangeError: Array.prototype.indexOf: length 2097152 has more than 1048576 holes"},
		{"Array.from of a sparse array", sparse + `Array.from(a)`,
			"RangeError: Array.from: array larger than 268435456 bytes"},
		{"Array.from of a huge array-like", `Array.from({length: 2**32})`,
			"RangeError: Array.from: array larger than 268435456 bytes"},
		{"fill of a huge array-like", `Array.prototype.fill.call({length: 2**32}, 0)`,
			"RangeError: Array.prototype.fill: array larger than 268435456 bytes"},
		{"join of a sparse array whose result fits", `var b = []; b.length = 2**26; b.join("")`,
			"RangeError: Array.prototype.join: length 67108864 has more than 1048576 holes"},
		{"Array.from of a long string", `Array.from("x".repeat(2**24))`,
			"RangeError: Array.from: array larger than 268435456 bytes"},
		{"sort of a dense array is in place", `var d = new Array(2**20 + 10).fill(1); d.sort(); d.length`, ""},
		{"map of a dense array over the cap", `var d = []; d.length = 2**24 + 1; d.fill(0, 0, 2**20); d.map(Number)`,
			"RangeError: Array.prototype.map: length 16777217 has more than 1048576 holes"},
		{"Object.keys of a large typed array", `Object.keys(new Uint8Array(2**23))`,
			"RangeError: Object.keys: result larger than 268435456 bytes"},
		{"Reflect.ownKeys of a large typed array", `Reflect.ownKeys(new Uint8Array(2**23))`,
			"RangeError: Reflect.ownKeys: result larger than 268435456 bytes"},
		{"Object.entries of a long String object", `Object.entries(new String("x".repeat(2**21)))`,
			"RangeError: Object.entries: result larger than 268435456 bytes"},
		{"Object.assign from a large typed array", `Object.assign({}, new Uint8Array(2**22))`,
			"RangeError: Object.assign: result larger than 268435456 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			if got := thrown(t, vm, c.src); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// Walks over the elements an array holds, or over few holes, run as before.
func TestNativeWalksWithinTheCapKeepTheirResults(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"indexOf near the end of a sparse array", sparse + `a[2**32 - 3] = 7; a.indexOf(7, -10)`, "4294967293"},
		{"lastIndexOf from a low index", sparse + `a.lastIndexOf(1, 10)`, "5"},
		{"includes on a sparse array at the limit", `var b = []; b.length = 2**20; b[3] = 1; b.includes(1)`, "true"},
		{"slice of a few elements of a sparse array", sparse + `a.slice(0, 10).length`, "10"},
		{"splice that moves nothing", sparse + `a.splice(5, 1, 9).length`, "1"},
		{"indexOf on a large dense array", `var d = new Array(2**20 + 10).fill(0); d[2**20 + 9] = 1; d.indexOf(1)`, "1048585"},
		{"at on a sparse array", sparse + `a.at(5)`, "1"},
		{"fill of a new array past the hole limit", `new Array(2**20 + 10).fill(0).length`, "1048586"},
		{"Array.from of an array-like past the hole limit", `Array.from({length: 2**20 + 10}).length`, "1048586"},
		{"Object.keys of a small typed array", `Object.keys(new Uint8Array(3)).join()`, "0,1,2"},
		{"concat of small arrays", `[1].concat([2], 3).join()`, "1,2,3"},
		{"Array.from of a Set", `Array.from(new Set([1, 2])).join()`, "1,2"},
		{"fill's argument converted once", `var k = 0; [1, 2, 3].fill(0, {valueOf() { k++; return 1 }}); k`, "1"},
		{"indexOf's fromIndex converted once", `var k = 0; [1, 2, 3].indexOf(3, {valueOf() { k++; return 1 }}) + "," + k`, "2,1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			v, err := vm.RunString(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestStringResultsAreChargedBeforeTheyAreMade(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ name, src, want string }{
		{"split into characters", `"x".repeat(40000).split("")`,
			"RangeError: String.prototype.split: result larger than 1048576 bytes"},
		{"split by a frequent separator", `",".repeat(40000).split(",")`,
			"RangeError: String.prototype.split: result larger than 1048576 bytes"},
		{"replaceAll that doubles a string", `"x".repeat(300000).replaceAll("x", "yy")`,
			"RangeError: String.prototype.replaceAll: result larger than 1048576 bytes"},
		{"replaceAll with the match", `"x".repeat(300000).replaceAll("x", "$&$&")`,
			"RangeError: String.prototype.replaceAll: result larger than 1048576 bytes"},
		{"replaceAll with the text before each match", "\"x\".repeat(2000).replaceAll(\"x\", \"$`\")",
			"RangeError: String.prototype.replaceAll: result larger than 1048576 bytes"},
		{"replace with the text after the match, twice", `("x".repeat(200000)).replace("x", "$'$'$'")`,
			"RangeError: String.prototype.replace: result larger than 1048576 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxAllocBytes: mib})
			if got := thrown(t, vm, c.src); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, src, want string }{
		{"split of a long string into few pieces", `"x".repeat(400000).split("q").length`, "1"},
		{"split with a limit", `"x".repeat(400000).split("", 3).join()`, "x,x,x"},
		{"replaceAll that shrinks a long string", `"xy".repeat(200000).replaceAll("y", "").length`, "200000"},
		{"replaceAll with $$ and unknown escapes", `"abc".replaceAll("b", "$$-$1-$")`, "a$-$1-$c"},
		{"replace with the text before and after", "\"abc\".replace(\"b\", \"[$`|$']\")", "a[a|c]c"},
		{"replaceAll with an empty pattern", `"ab".replaceAll("", "-")`, "-a-b-"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxAllocBytes: mib})
			v, err := vm.RunString(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// A spread or Array.from of an iterator steps it from Go: without the
// probe, [...a] of a sparse array of length 2^25 ran 2 min 39 s past an
// interrupt.
func TestAnInterruptEndsIteratorLoopsRunFromGo(t *testing.T) {
	for _, src := range []string{
		`var a = []; a.length = 2**25; [...a].length`,
		`var a = []; a.length = 2**25; Array.from(a.values()).length`,
		`var a = []; a.length = 2**25; new Set(a.keys()).size`,
	} {
		t.Run(src, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			const deadline = 200 * time.Millisecond
			timer := time.AfterFunc(deadline, func() { vm.Interrupt("deadline") })
			defer timer.Stop()
			began := time.Now()
			_, err := vm.RunString(src)
			elapsed := time.Since(began)
			var ie *goja.InterruptedError
			if !errors.As(err, &ie) {
				t.Fatalf("got %v, want the interrupt", err)
			}
			if elapsed > deadline+2*time.Second {
				t.Errorf("ended after %v, want within %v", elapsed, deadline+2*time.Second)
			}
		})
	}
}

// Typed arrays made or set from a sparse array read it index by index in
// Go (new Uint8Array(a) of length 2^24 took 78 s), and so does
// JSON.stringify of one (9 s).
func TestTypedArraysAndJSONFromSparseArraysAreRefused(t *testing.T) {
	const big = `var a = []; a.length = 2**24; a[3] = 1;`
	for _, c := range []struct{ name, src, want string }{
		{"a typed array made from a sparse array", big + `new Uint8Array(a)`,
			"RangeError: Uint8Array: length 16777216 has more than 1048576 holes"},
		{"a typed array from a sparse array", big + `Uint8Array.from(a)`,
			"RangeError: %TypedArray%.from: length 16777216 has more than 1048576 holes"},
		{"a typed array set from a sparse array", big + `new Uint8Array(2**24).set(a)`,
			"RangeError: %TypedArray%.prototype.set: length 16777216 has more than 1048576 holes"},
		{"a typed array made from a huge array-like", `new Float64Array({length: 2**26})`,
			"RangeError: Float64Array: buffer larger than 268435456 bytes"},
		{"JSON.stringify of a sparse array", big + `JSON.stringify(a)`,
			"RangeError: JSON.stringify: length 16777216 has more than 1048576 holes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			if got := thrown(t, vm, c.src); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, src, want string }{
		{"a typed array from a dense array", `new Uint8Array([1, 2, 3]).join()`, "1,2,3"},
		{"a typed array from a typed array", `new Uint8Array(new Uint8Array(2**21)).length`, "2097152"},
		{"a typed array from a Set", `Uint8Array.from(new Set([4, 5])).join()`, "4,5"},
		{"a typed array set from a typed array", `var u = new Uint8Array(2**21); u.set(new Uint8Array(2**21)); u.length`, "2097152"},
		{"a typed array from an array-like", `new Uint8Array({length: 2, 0: 7, 1: 8}).join()`, "7,8"},
		{"JSON.stringify of a short sparse array", `var b = [1]; b[3] = 2; JSON.stringify(b)`, "[1,null,null,2]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{})
			v, err := vm.RunString(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
