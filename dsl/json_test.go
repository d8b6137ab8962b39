package dsl

import (
	"bufio"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestMarshalWritesNumbersAsJavaScriptDoes(t *testing.T) {
	tenth := 0.1 // a variable, so that 0.1+0.2 is float64 arithmetic
	tests := []struct {
		x    float64
		want string
	}{
		{0, "0"},
		{1, "1"},
		{-1, "-1"},
		{0.1, "0.1"},
		{0.5, "0.5"},
		{-0.5, "-0.5"},
		{1.5, "1.5"},
		{100, "100"},
		{255, "255"},
		{-255, "-255"},
		{0.001, "0.001"},
		{1e16, "10000000000000000"},
		{1e17, "100000000000000000"},
		{1e20, "100000000000000000000"},
		{1e21, "1e+21"},
		{-1e21, "-1e+21"},
		{1e22, "1e+22"},
		{1e23, "1e+23"},
		{123e-20, "1.23e-18"},
		{1e-7, "1e-7"},
		{-1e-7, "-1e-7"},
		{1.5e-7, "1.5e-7"},
		{5e-7, "5e-7"},
		{1e-6, "0.000001"},
		{0.000001, "0.000001"},
		{0.0000012, "0.0000012"},
		{0.000001234, "0.000001234"},
		{0.0000012345, "0.0000012345"},
		{1e-5, "0.00001"},
		{5e-324, "5e-324"},
		{-5e-324, "-5e-324"},
		{1.5e-323, "1.5e-323"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1e-300, "1e-300"},
		{1 << 53, "9007199254740992"},
		{-(1 << 53), "-9007199254740992"},
		{1<<53 - 1, "9007199254740991"},
		{1<<53 + 2, "9007199254740994"},
		{1<<53 + 4, "9007199254740996"},
		{1 << 54, "18014398509481984"},
		{1 << 64, "18446744073709552000"},
		{123456789012345680000, "123456789012345680000"},
		{999999999999999900000, "999999999999999900000"},
		{1234.5e10, "12345000000000"},
		{1e300, "1e+300"},
		{1.5e300, "1.5e+300"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{-1.7976931348623157e308, "-1.7976931348623157e+308"},
		{tenth + 2*tenth, "0.30000000000000004"},
		{1.0 / 3, "0.3333333333333333"},
		{2.0 / 3, "0.6666666666666666"},
		{4.35, "4.35"},
		{123.456, "123.456"},
		{-123.456, "-123.456"},
		{12345678.9, "12345678.9"},
		{4294967296.5, "4294967296.5"},
		{math.Pi, "3.141592653589793"},
	}
	for _, tt := range tests {
		t.Run(tt.want+" is written for "+strconv.FormatFloat(tt.x, 'g', -1, 64), func(t *testing.T) {
			got, err := Marshal(tt.x)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal(%v) = %s, want %s", tt.x, got, tt.want)
			}
		})
	}
}

// testdata/jsnumbers.txt holds float64 bit patterns with the text node's
// JSON.stringify gave for them.
func TestMarshalNumbersMatchNodeFixture(t *testing.T) {
	f, err := os.Open("testdata/jsnumbers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		hex, want, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("bad fixture line %q", line)
		}
		bits, err := strconv.ParseUint(hex, 16, 64)
		if err != nil {
			t.Fatalf("bad fixture line %q: %v", line, err)
		}
		x := math.Float64frombits(bits)
		got, err := Marshal(x)
		if err != nil {
			t.Errorf("Marshal(%s) failed: %v", hex, err)
			continue
		}
		if string(got) != want {
			t.Errorf("Marshal(%s = %v) = %s, node gives %s", hex, x, got, want)
		}
		lines++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 300 {
		t.Errorf("fixture has only %d values", lines)
	}
}

func TestIntegerFastPathAgreesWithShortestDigits(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	xs := []float64{1, -1, 9, 10, 99, 100, 1e15, 1e16 - 1, 1<<53 - 1, 1 << 53, -(1 << 53), 4503599627370496, 4503599627370497}
	for range 20000 {
		xs = append(xs, float64(r.Int64N(1<<53+1)), -float64(r.Int64N(1<<53+1)), float64(r.Int64N(1e6)))
	}
	for _, x := range xs {
		if x == 0 {
			continue
		}
		fast := string(appendJSNumber(nil, x))
		general := string(appendJSNumberDigits(nil, x))
		if fast != general {
			t.Fatalf("integer %v: fast path %s, digit layout %s", x, fast, general)
		}
	}
}

func TestMarshalEscapesStringsAsJavaScriptDoes(t *testing.T) {
	var ascii strings.Builder
	for c := range 0x80 {
		ascii.WriteByte(byte(c))
	}
	tests := []struct {
		name string
		s    string
		want string
	}{
		{"every ASCII byte escapes only quote, backslash and controls", ascii.String(),
			`"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\b\t\n\u000b\f\r\u000e\u000f` +
				`\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f` +
				` !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_` + "`" +
				"abcdefghijklmnopqrstuvwxyz{|}~\x7f\""},
		{"the empty string is two quotes", "", `""`},
		{"line and paragraph separators stay raw", "\u2028\u2029", "\"\u2028\u2029\""},
		{"HTML characters stay raw", "<script>&amp;</script>", `"<script>&amp;</script>"`},
		{"an emoji stays raw", "smile 😀", `"smile 😀"`},
		{"accented letters and U+FFFD stay raw", "é\uFFFD", "\"é\uFFFD\""},
		{"a slash is not escaped", "a/b", `"a/b"`},
		{"escapes between plain runs keep the runs", "ab\"cd\\ef\ngh", `"ab\"cd\\ef\ngh"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.s)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Marshal(%q) =\n%s\nwant\n%s", tt.s, got, tt.want)
			}
			back, err := Unmarshal(got)
			if err != nil || back != tt.s {
				t.Errorf("Unmarshal(%s) = %q, %v; want the string back", got, back, err)
			}
		})
	}
}

func TestMarshalWritesContainers(t *testing.T) {
	shared := []any{1.0}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"null, true and false are literals", []any{nil, true, false}, `[null,true,false]`},
		{"an empty array is []", []any{}, `[]`},
		{"an empty object is {}", NewObject(), `{}`},
		{"object members keep their order", NewObject(Member{"b", 1.0}, Member{"a", []any{1.0, "x", NewObject(Member{"c", nil})}}, Member{"a b", true}, Member{"", false}),
			`{"b":1,"a":[1,"x",{"c":null}],"a b":true,"":false}`},
		{"keys are escaped like strings", NewObject(Member{"q\"\n", 1.0}), `{"q\"\n":1}`},
		{"a map is written with sorted keys", map[string]any{"zeta": 1.0, "alpha": 2.0, "Beta": 3.0, "10": 4.0, "9": 5.0},
			`{"10":4,"9":5,"Beta":3,"alpha":2,"zeta":1}`},
		{"maps inside arrays are sorted too", []any{map[string]any{"b": 1.0, "a": 2.0}}, `[{"a":2,"b":1}]`},
		{"a shared reference is written each time", []any{shared, shared, NewObject(Member{"s", shared})}, `[[1],[1],{"s":[1]}]`},
		{"nested empties close properly", []any{[]any{[]any{}}, NewObject(Member{"o", NewObject()})}, `[[[]],{"o":{}}]`},
		{"Go integers go through the snapshot", map[string]any{"n": 3, "u": uint8(7), "big": int64(1 << 53)}, `{"big":9007199254740992,"n":3,"u":7}`},
		{"typed slices and maps go through the snapshot", []any{[]string{"a", "b"}, map[string]int{"y": 2, "x": 1}}, `[["a","b"],{"x":1,"y":2}]`},
		{"json.Number and float32 go through the snapshot", []any{json.Number("1e21"), float32(0.5)}, `[1e+21,0.5]`},
		{"a top-level int is a number", 42, `42`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestMarshalRefusesWhatIsNotLossless(t *testing.T) {
	selfList := []any{nil, 1.0}
	selfList[0] = selfList
	selfObj := NewObject(Member{"a", 1.0})
	selfObj.Set("me", selfObj)
	// a chain of objects 100 deep whose bottom holds the top: only noticed
	// past the tracking depth, reported where it first repeats.
	deepTop := NewObject()
	deep := deepTop
	for range 99 {
		next := NewObject()
		deep.Set("n", next)
		deep = next
	}
	deep.Set("top", []any{deepTop})
	deepPath := "value" + strings.Repeat(".n", 99) + ".top[0]"
	shortList := make([]any, 2)
	shortList[0] = shortList[:1] // same backing array, shorter: still itself

	tests := []struct {
		name string
		v    any
		want string
	}{
		{"NaN is refused with its path", NewObject(Member{"items", []any{1.0, 2.0, 3.0, math.NaN()}}), `value.items[3]: NaN is not lossless JSON`},
		{"Infinity is refused", math.Inf(1), `value: Infinity is not lossless JSON`},
		{"-Infinity is refused", []any{math.Inf(-1)}, `value[0]: -Infinity is not lossless JSON`},
		{"-0 is refused", NewObject(Member{"a", math.Copysign(0, -1)}), `value.a: -0 is not lossless JSON`},
		{"invalid UTF-8 in a string is refused", NewObject(Member{"s", "a\xffb"}), `value.s: invalid UTF-8 in string`},
		{"an encoded surrogate is invalid UTF-8", []any{"\xed\xa0\x80"}, `value[0]: invalid UTF-8 in string`},
		{"a truncated sequence is invalid UTF-8", "\xe2\x82", `value: invalid UTF-8 in string`},
		{"invalid UTF-8 in a key is refused at the object", NewObject(Member{"o", NewObject(Member{"ok", 1.0}, Member{"\xc0", 2.0})}), `value.o: invalid UTF-8 in object key`},
		{"keys that are not identifiers are quoted in paths", NewObject(Member{"a b", NewObject(Member{"$x_1", []any{NewObject(Member{"2", math.NaN()})}})}), `value["a b"].$x_1[0]["2"]: NaN is not lossless JSON`},
		{"an array holding itself is a cycle", selfList, `value[0]: the value contains itself (cycle)`},
		{"an object holding itself is a cycle", selfObj, `value.me: the value contains itself (cycle)`},
		{"a cycle longer than the tracking depth is named where it repeats", deepTop, deepPath + `: the value contains itself (cycle)`},
		{"a shorter slice of the same array is a cycle", shortList, `value[0][0]: the value contains itself (cycle)`},
		{"a nil []any is refused", NewObject(Member{"l", []any(nil)}), `value.l: nil []any is not lossless JSON`},
		{"a nil *Object is refused", []any{(*Object)(nil)}, `value[0]: nil *dsl.Object is not lossless JSON`},
		{"a func is refused by the snapshot", map[string]any{"f": func() {}}, `value.f: func() is not lossless JSON`},
		{"an integer beyond 2^53 is refused", []any{1.0, int64(1<<53 + 1)}, `value[1]: integer 9007199254740993 is outside ±2^53`},
		{"undefined is refused", NewObject(Member{"u", Undefined{}}), `value.u: undefined is not lossless JSON`},
		{"the first problem in document order is named", []any{1.0, math.NaN(), math.Inf(1)}, `value[1]: NaN is not lossless JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Marshal(tt.v)
			var se *SnapshotError
			if !errors.As(err, &se) {
				t.Fatalf("Marshal = %s, %v; want a *SnapshotError", got, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
			if got != nil {
				t.Errorf("Marshal returned %q with the error", got)
			}
		})
	}
}

// The contract says Marshal refuses with the same errors as Snapshot.
func TestMarshalErrorsAreTheSnapshotErrors(t *testing.T) {
	self := []any{nil}
	self[0] = self
	values := []any{
		math.NaN(),
		[]any{1.0, NewObject(Member{"a b", []any{math.Inf(-1)}})},
		NewObject(Member{"x", NewObject(Member{"y", math.Copysign(0, -1)})}),
		[]any{"ok", "bad\xff"},
		self,
		NewObject(Member{"l", []any(nil)}),
		map[string]any{"a": []any{1.0, math.NaN()}},
	}
	for _, v := range values {
		_, merr := Marshal(v)
		_, serr := Snapshot(v)
		if merr == nil || serr == nil || merr.Error() != serr.Error() {
			t.Errorf("Marshal error %v, Snapshot error %v", merr, serr)
		}
	}
}

func TestAppendJSONAppendsToDst(t *testing.T) {
	t.Run("the text follows what dst held", func(t *testing.T) {
		got, err := AppendJSON([]byte("x="), NewObject(Member{"a", 1.0}))
		if err != nil || string(got) != `x={"a":1}` {
			t.Errorf("got %q, %v", got, err)
		}
	})
	t.Run("on error dst comes back as it was", func(t *testing.T) {
		dst := []byte("keep")
		got, err := AppendJSON(dst, []any{1.0, 2.0, math.NaN()})
		if err == nil || string(got) != "keep" {
			t.Errorf("got %q, %v", got, err)
		}
	})
}

func TestDeepValuesEncodeAndDecode(t *testing.T) {
	const depth = 100_000
	t.Run("a 100,000-deep array encodes", func(t *testing.T) {
		var v any = "leaf"
		for range depth {
			v = []any{v}
		}
		want := strings.Repeat("[", depth) + `"leaf"` + strings.Repeat("]", depth)
		got, err := Marshal(v)
		if err != nil || string(got) != want {
			t.Fatalf("Marshal failed: %v", err)
		}
		back, err := Unmarshal(got)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Marshal(back)
		if err != nil || string(again) != want {
			t.Fatalf("round trip failed: %v", err)
		}
	})
	t.Run("a 100,000-deep object encodes", func(t *testing.T) {
		var v any = 1.0
		for range depth {
			v = NewObject(Member{"k", v})
		}
		want := strings.Repeat(`{"k":`, depth) + "1" + strings.Repeat("}", depth)
		got, err := Marshal(v)
		if err != nil || string(got) != want {
			t.Fatalf("Marshal failed: %v", err)
		}
	})
	t.Run("a NaN at the bottom of a 100,000-deep array is found", func(t *testing.T) {
		var v any = math.NaN()
		for range depth {
			v = []any{v}
		}
		_, err := Marshal(v)
		want := "value" + strings.Repeat("[0]", depth) + ": NaN is not lossless JSON"
		if err == nil || err.Error() != want {
			t.Fatalf("error %.80v…, want %.80s…", err, want)
		}
	})
	t.Run("a 100,000-deep array of unclosed brackets fails at the end", func(t *testing.T) {
		_, err := Unmarshal([]byte(strings.Repeat("[", depth)))
		want := "json: unexpected end of JSON input at offset 100000"
		if err == nil || err.Error() != want {
			t.Fatalf("error %v, want %s", err, want)
		}
	})
}

func TestUnmarshalBuildsGoForm(t *testing.T) {
	v, err := Unmarshal([]byte(` {"b": [1, "two", true, false, null, {}], "a": {"z": 0.5, "y": []}, "c": -3e2 } `))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := v.(*Object)
	if !ok {
		t.Fatalf("got %T, want *Object", v)
	}
	if keys := o.Keys(); !reflect.DeepEqual(keys, []string{"b", "a", "c"}) {
		t.Errorf("keys %v, want document order", keys)
	}
	b, _ := o.Get("b")
	want := []any{1.0, "two", true, false, nil, NewObject()}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("b = %#v, want %#v", b, want)
	}
	a, _ := o.Get("a")
	if keys := a.(*Object).Keys(); !reflect.DeepEqual(keys, []string{"z", "y"}) {
		t.Errorf("a keys %v", keys)
	}
	if y, _ := a.(*Object).Get("y"); y == nil || len(y.([]any)) != 0 {
		t.Errorf("y = %#v, want an empty non-nil []any", y)
	}
	if c, _ := o.Get("c"); c != -300.0 {
		t.Errorf("c = %v", c)
	}
	t.Run("a large object finds its keys", func(t *testing.T) {
		var sb strings.Builder
		sb.WriteByte('{')
		for i := range 50 {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(`"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i))
		}
		sb.WriteByte('}')
		v, err := Unmarshal([]byte(sb.String()))
		if err != nil {
			t.Fatal(err)
		}
		o := v.(*Object)
		if got, ok := o.Get("k37"); !ok || got != 37.0 || o.Len() != 50 {
			t.Errorf("k37 = %v, %v; len %d", got, ok, o.Len())
		}
	})
}

func TestUnmarshalAcceptsAndNormalizes(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // canonical text of the value
	}{
		{"a bare number", `42`, `42`},
		{"whitespace of the four kinds surrounds values", " \t\r\n[ 1 ,\t2\n]\r\n ", `[1,2]`},
		{"1e+21 reads back as JavaScript writes it", `1e+21`, `1e+21`},
		{"an exponent with capital E", `1E3`, `1000`},
		{"a negative exponent", `123e-20`, `1.23e-18`},
		{"a fraction with trailing zeros", `1.500`, `1.5`},
		{"zero", `0`, `0`},
		{"positive zero with a fraction and exponent", `0.0e5`, `0`},
		{"the smallest subnormal", `5e-324`, `5e-324`},
		{"a long literal that rounds to the smallest subnormal", `4.9406564584124654e-324`, `5e-324`},
		{"the largest double", `1.7976931348623157e308`, `1.7976931348623157e+308`},
		{"2^53 as an integer literal", `9007199254740992`, `9007199254740992`},
		{"-2^53 as an integer literal", `-9007199254740992`, `-9007199254740992`},
		{"a big integer written with an exponent", `9007199254740993e0`, `9007199254740992`},
		{"a big integer written with a fraction", `12345678901234567890.0`, `12345678901234567000`},
		{"sixteen digits under 2^53", `1234567890123456`, `1234567890123456`},
		{"every simple escape", `"\"\\\/\b\f\n\r\t"`, `"\"\\/\b\f\n\r\t"`},
		{"a u escape in either case", `"\u00e9\u00C9"`, `"éÉ"`},
		{"an escaped NUL", `"\u0000"`, `"\u0000"`},
		{"a surrogate pair combines", `"\ud83d\ude00"`, `"😀"`},
		{"raw UTF-8 after an escape", `"\n😀é"`, `"\n😀é"`},
		{"U+2028 escaped reads as the raw character", `"\u2028"`, "\"\u2028\""},
		{"a DEL byte is allowed raw", "\"\x7f\"", "\"\x7f\""},
		{"an empty key", `{"":1}`, `{"":1}`},
		{"keys that differ only after an escape", `{"a":1,"\u0061b":2}`, `{"a":1,"ab":2}`},
		{"nested containers", `[[],{},[{}],{"a":[{"b":null}]}]`, `[[],{},[{}],{"a":[{"b":null}]}]`},
		{"a member named __proto__ is data", `{"__proto__":{"x":1}}`, `{"__proto__":{"x":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Unmarshal([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestUnmarshalRefuses(t *testing.T) {
	large := "{" // twenty members, then a comma
	for i := range 20 {
		large += `"k` + strconv.Itoa(i) + `":` + strconv.Itoa(i) + ","
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty input", ``, `json: unexpected end of JSON input at offset 0`},
		{"only whitespace", "  \n", `json: unexpected end of JSON input at offset 3`},
		{"a leading byte order mark", "\xef\xbb\xbf{}", `json: byte order mark is not allowed at offset 0`},
		{"trailing data", `{} x`, `json: invalid character 'x' after top-level value at offset 3`},
		{"two top-level values", `1 2`, `json: invalid character '2' after top-level value at offset 2`},
		{"a leading zero", `01`, `json: invalid character '1' after top-level value at offset 1`},
		{"a form feed is not whitespace", "\f1", `json: invalid character '\f' looking for beginning of value at offset 0`},
		{"a non-breaking space is not whitespace", "\u00a01", `json: invalid character '\u00a0' looking for beginning of value at offset 0`},
		{"a stray byte", "\xff", `json: invalid byte 0xff looking for beginning of value at offset 0`},
		{"a single quote string", `'a'`, `json: invalid character '\'' looking for beginning of value at offset 0`},
		{"a missing value in an array", `[1,]`, `json: invalid character ']' looking for beginning of value at offset 3`},
		{"a missing comma in an array", `[1 2]`, `json: invalid character '2' after array element at offset 3`},
		{"an unclosed array", `[1`, `json: unexpected end of JSON input at offset 2`},
		{"a trailing comma in an object", `{"a":1,}`, `json: invalid character '}' looking for beginning of object key string at offset 7`},
		{"an unquoted key", `{a:1}`, `json: invalid character 'a' looking for beginning of object key string at offset 1`},
		{"a missing colon", `{"a" 1}`, `json: invalid character '1' after object key at offset 5`},
		{"a missing comma in an object", `{"a":1 "b":2}`, `json: invalid character '"' after object key:value pair at offset 7`},
		{"a mismatched close", `[1}`, `json: invalid character '}' after array element at offset 2`},
		{"an unclosed object", `{"a":1`, `json: unexpected end of JSON input at offset 6`},
		{"an object cut after a key", `{"a" `, `json: unexpected end of JSON input at offset 5`},
		{"a key without value at the end", `{"a":`, `json: unexpected end of JSON input at offset 5`},
		{"a misspelt literal", `[tru]`, `json: invalid character ']' in literal true at offset 4`},
		{"a capitalised literal", `True`, `json: invalid character 'T' looking for beginning of value at offset 0`},
		{"a truncated literal", `nul`, `json: unexpected end of JSON input at offset 3`},
		{"a duplicate key", `{"a":1,"a":2}`, `json: duplicate key "a" at offset 7`},
		{"a duplicate key spelt with an escape", `{"a":1,"b":2,"\u0061":3}`, `json: duplicate key "a" at offset 13`},
		{"a duplicate key in an object of eleven", `{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k3":10}`, `json: duplicate key "k3" at offset 71`},
		{"a duplicate key in an object of twenty-one", large + `"k3":20}`, `json: duplicate key "k3" at offset 161`},
		{"a duplicate key is quoted as JSON", `{"a\nb":1,"a\nb":2}`, `json: duplicate key "a\nb" at offset 10`},
		{"the same key in different objects is fine until it repeats", `[{"a":1},{"a":2,"a":3}]`, `json: duplicate key "a" at offset 16`},
		{"an unterminated string", `"abc`, `json: unexpected end of JSON input at offset 4`},
		{"an unterminated string after an escape", `"a\n`, `json: unexpected end of JSON input at offset 4`},
		{"a raw newline in a string", "\"a\nb\"", `json: invalid character '\n' in string literal at offset 2`},
		{"a raw tab in a string after an escape", "\"\\n\t\"", `json: invalid character '\t' in string literal at offset 3`},
		{"a raw NUL in a string", "\"\x00\"", `json: invalid character '\x00' in string literal at offset 1`},
		{"an unknown escape", `"\x41"`, `json: invalid character 'x' in string escape code at offset 2`},
		{"a short u escape", `"\u12"`, `json: invalid character '"' in \u hexadecimal character escape at offset 5`},
		{"a u escape cut by the end", `"\u12`, `json: unexpected end of JSON input at offset 5`},
		{"invalid UTF-8 in a string", "\"ab\xffcd\"", `json: invalid UTF-8 in string at offset 3`},
		{"invalid UTF-8 after an escape", "\"\\t\xc3\x28\"", `json: invalid UTF-8 in string at offset 3`},
		{"an encoded surrogate in a string", "\"\xed\xa0\x80\"", `json: invalid UTF-8 in string at offset 1`},
		{"an overlong encoding in a key", "{\"\xc0\x80\":1}", `json: invalid UTF-8 in string at offset 2`},
		{"a lone high surrogate", `"a\ud800"`, `json: lone surrogate \ud800 in string at offset 2`},
		{"a high surrogate followed by a letter", `"\uD83Dx"`, `json: lone surrogate \ud83d in string at offset 1`},
		{"a high surrogate followed by another high one", `"\ud83d\ud83d"`, `json: lone surrogate \ud83d in string at offset 1`},
		{"a lone low surrogate", `"\ude00"`, `json: lone surrogate \ude00 in string at offset 1`},
		{"a low surrogate before a high one", `"\ude00\ud83d"`, `json: lone surrogate \ude00 in string at offset 1`},
		{"a minus sign alone", `-`, `json: unexpected end of JSON input at offset 1`},
		{"a minus sign before a letter", `-a`, `json: invalid character 'a' in numeric literal at offset 1`},
		{"a plus sign", `+1`, `json: invalid character '+' looking for beginning of value at offset 0`},
		{"a leading decimal point", `.5`, `json: invalid character '.' looking for beginning of value at offset 0`},
		{"a trailing decimal point", `[1.]`, `json: invalid character ']' after decimal point in numeric literal at offset 3`},
		{"an empty exponent", `1e`, `json: unexpected end of JSON input at offset 2`},
		{"an exponent without digits", `[1e+]`, `json: invalid character ']' in exponent of numeric literal at offset 4`},
		{"a hexadecimal number", `0x10`, `json: invalid character 'x' after top-level value at offset 1`},
		{"Infinity is not JSON", `Infinity`, `json: invalid character 'I' looking for beginning of value at offset 0`},
		{"NaN is not JSON", `[NaN]`, `json: invalid character 'N' looking for beginning of value at offset 1`},
		{"overflow to Infinity", `[1e309]`, `json: number 1e309 overflows a float64 at offset 1`},
		{"overflow to -Infinity", `-1.8e308`, `json: number -1.8e308 overflows a float64 at offset 0`},
		{"a non-zero literal that underflows", `{"a":1e-400}`, `json: number 1e-400 underflows to 0 at offset 5`},
		{"a negative literal that underflows", `-2e-324`, `json: number -2e-324 underflows to 0 at offset 0`},
		{"-0", `-0`, `json: number -0 is negative zero at offset 0`},
		{"-0.0", `[-0.0]`, `json: number -0.0 is negative zero at offset 1`},
		{"-0e3", `-0e3`, `json: number -0e3 is negative zero at offset 0`},
		{"-0.000e-5", `-0.000e-5`, `json: number -0.000e-5 is negative zero at offset 0`},
		{"an integer literal just above 2^53", `9007199254740993`, `json: integer 9007199254740993 is not exactly a float64 at offset 0`},
		{"a negative integer literal just below -2^53", `[-9007199254740993]`, `json: integer -9007199254740993 is not exactly a float64 at offset 1`},
		{"a seventeen-digit integer literal", `12345678901234567`, `json: integer 12345678901234567 is not exactly a float64 at offset 0`},
		{"a very long integer literal is clipped in the message", strings.Repeat("9", 100), `json: integer ` + strings.Repeat("9", 40) + `… is not exactly a float64 at offset 0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Unmarshal([]byte(tt.in))
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Unmarshal(%q) = %#v, %v; want a *SyntaxError", tt.in, v, err)
			}
			if err.Error() != tt.want {
				t.Errorf("Unmarshal(%q) error\n%s\nwant\n%s", tt.in, err, tt.want)
			}
			if v != nil {
				t.Errorf("value %#v returned with the error", v)
			}
		})
	}
}

func TestRoundTripsKeepTheText(t *testing.T) {
	docs := []string{
		`null`,
		`[1,-1,0.1,9007199254740992,1e+21,1e-7,5e-324,1.7976931348623157e+308]`,
		`{"z":1,"a":{"y":[true,false,null],"x":"\u0000\u001f\"\\"},"m":[]}`,
		"{\"emoji\":\"😀\",\"sep\":\"\u2028\",\"html\":\"<&>\"}",
		`[[[[[[[[[[{}]]]]]]]]]]`,
	}
	for _, doc := range docs {
		t.Run("canonical text "+doc+" survives a round trip", func(t *testing.T) {
			v, err := Unmarshal([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			got, err := Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != doc {
				t.Errorf("got  %s\nwant %s", got, doc)
			}
			if !Equal(v, mustUnmarshal(t, got)) {
				t.Error("the values differ after the round trip")
			}
		})
	}
}

// The contract refuses integer literals beyond 2^53 even when they are the
// canonical text of a float64, so such a number does not survive a round trip.
func TestBigIntegralNumbersReadBack(t *testing.T) {
	for _, x := range []float64{1e20, 1 << 60, 123456789012345680000, 9007199254740994, -(1 << 62)} {
		text, err := Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(text)+" is written as an integer literal and read back", func(t *testing.T) {
			v, err := Unmarshal(text)
			if err != nil || v != x {
				t.Errorf("Unmarshal = %v, %v; want %v", v, err, x)
			}
		})
	}
	t.Run("the exact digits of 2^60 read back too", func(t *testing.T) {
		if v, err := Unmarshal([]byte("1152921504606846976")); err != nil || v != float64(1<<60) {
			t.Errorf("Unmarshal = %v, %v", v, err)
		}
	})
}

// Unmarshal reads the same values as encoding/json when both accept a text.
func TestUnmarshalAgreesWithEncodingJSON(t *testing.T) {
	docs := []string{
		`{"a":[1,2.5,-3e-5,"x\u00e9\ud83d\ude00"],"b":{"c":null,"d":true},"e":""}`,
		`[0.1,1e300,4.9406564584124654e-324,"\/\b\f\n\r\t"]`,
		"\"tab\\tnew\\nline \u2028\"",
	}
	for _, doc := range docs {
		t.Run("both decoders read "+doc, func(t *testing.T) {
			ours := mustUnmarshal(t, []byte(doc))
			var theirs any
			if err := json.Unmarshal([]byte(doc), &theirs); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(jsonPlain(ours), theirs) {
				t.Errorf("ours %#v\ntheirs %#v", jsonPlain(ours), theirs)
			}
		})
	}
}

func TestMarshalAndUnmarshalAreSafeForConcurrentUse(t *testing.T) {
	docs := []string{`{"a":[1,2,{"b":"x\ny"}],"c":true}`, `[1e+21,"😀",null]`, `{"k":{"k":{"k":[]}}}`}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				doc := docs[(g+i)%len(docs)]
				v, err := Unmarshal([]byte(doc))
				if err != nil {
					t.Error(err)
					return
				}
				got, err := Marshal(v)
				if err != nil || string(got) != doc {
					t.Errorf("got %s, %v; want %s", got, err, doc)
					return
				}
			}
		})
	}
	wg.Wait()
}

func mustUnmarshal(tb testing.TB, data []byte) any {
	tb.Helper()
	v, err := Unmarshal(data)
	if err != nil {
		tb.Fatalf("Unmarshal(%q): %v", data, err)
	}
	return v
}

// jsonPlain turns *Object into map[string]any, the shape encoding/json decodes.
func jsonPlain(v any) any {
	switch x := v.(type) {
	case *Object:
		m := make(map[string]any, x.Len())
		for k, v := range x.All() {
			m[k] = jsonPlain(v)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = jsonPlain(v)
		}
		return out
	}
	return v
}
