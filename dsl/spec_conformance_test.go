// Conformance tests for the schema half of package dsl, written from the
// pipeline spec (§1.8, §4.1–§4.7, §6 cases 104–131) by someone who did not
// write the implementation. This file holds the shared helpers (the
// conformance-data notation and runner) and the author-DSL tests (§4.1, §4.2,
// cases 104–111); assert_conformance_test.go covers the raw subset (§4.4),
// validate_conformance_test.go validation (§4.5, §4.6), suite_test.go the
// official JSON-Schema-Test-Suite and differential_fuzz_test.go the
// differential check against santhosh-tekuri/jsonschema.
//
// Most cases are data: testdata/conformance/*.txtar (format in
// runConformanceFile). The txtar files are parsed by parseTxtar below, not
// github.com/rogpeppe/go-internal/txtar: v1.16.0 of that package imports
// golang.org/x/tools/txtar, which is not in go.sum.
//
// Go has no JavaScript prototypes, getters, Proxies or realms. Where a spec
// case is about a non-plain object, a non-lossless Go value stands in for it:
// a func or a struct (class instance, non-enumerable keys), a channel,
// time.Time (Date), map[int]string (Map, symbol keys), dsl.Undefined
// (undefined, a sparse-array hole) and a cyclic *dsl.Object. Spec points with
// no Go meaning, and therefore not tested:
//   - cross-realm plain objects and arrays are accepted (§4.4, case 126);
//   - throwing getters and Proxies whose traps throw, reported at the
//     innermost enclosing frame (§4.5, case 128 "throwing Proxy");
//   - forged or odd prototypes, array subclasses, arrays carrying extra own
//     properties (case 109 "enum array with extra property"): a Go slice has
//     no extra properties;
//   - inherited keys (toString) versus own keys: Go objects only have own
//     keys; the cases are kept, with the obvious Go meaning (plain keys);
//   - `properties`/`required` explicitly undefined in a schema that bypassed
//     the assertion, and a forged schema with an unknown type that throws
//     (§4.5): *dsl.Schema can only be built by Compile, which asserts;
//   - InferValue / InferArgs (§4.3) are type-level only.
package dsl_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// ---------------------------------------------------------------------------
// Test-side notation: JSON plus a few bare words.

// parseJS parses the notation of the conformance data: JSON in which objects
// keep their key order (*dsl.Object), numbers are parsed with
// strconv.ParseFloat (so -0 is negative zero) and these bare words stand for
// values JSON cannot spell:
//
//	undefined  dsl.Undefined{}
//	NaN, Infinity, -Infinity
//	func       a Go func (a non-plain object: class instance, function)
//	chan       a Go channel
//	date       a time.Time (JavaScript Date)
//	struct     a Go struct value (class instance, non-enumerable keys)
//	intmap     a map[int]string (JavaScript Map, symbol keys)
//
// Duplicate keys are an error, to catch typos in the data.
func parseJS(src string) (any, error) {
	p := &jsParser{src: src}
	p.space()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.src) {
		return nil, fmt.Errorf("trailing text at offset %d: %q", p.i, p.src[p.i:])
	}
	return v, nil
}

// mustJS is parseJS for literals written in test code.
func mustJS(t testing.TB, src string) any {
	t.Helper()
	v, err := parseJS(src)
	if err != nil {
		t.Fatalf("bad test literal %s: %v", src, err)
	}
	return v
}

type jsParser struct {
	src string
	i   int
}

func (p *jsParser) space() {
	for p.i < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.i]) >= 0 {
		p.i++
	}
}

func (p *jsParser) value() (any, error) {
	if p.i >= len(p.src) {
		return nil, errors.New("unexpected end of text")
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case strings.HasPrefix(p.src[p.i:], "-Infinity"):
		p.i += len("-Infinity")
		return math.Inf(-1), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.word()
	}
}

func (p *jsParser) object() (any, error) {
	p.i++ // {
	o := dsl.NewObject()
	p.space()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
		return o, nil
	}
	for {
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != '"' {
			return nil, fmt.Errorf("object key expected at offset %d", p.i)
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		key := k.(string)
		if o.Has(key) {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		p.space()
		if p.i >= len(p.src) || p.src[p.i] != ':' {
			return nil, fmt.Errorf("':' expected at offset %d", p.i)
		}
		p.i++
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		o.Set(key, v)
		p.space()
		if p.i >= len(p.src) {
			return nil, errors.New("unterminated object")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return o, nil
		default:
			return nil, fmt.Errorf("',' or '}' expected at offset %d", p.i)
		}
	}
}

func (p *jsParser) array() (any, error) {
	p.i++ // [
	a := []any{}
	p.space()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
		return a, nil
	}
	for {
		p.space()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.src) {
			return nil, errors.New("unterminated array")
		}
		switch p.src[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, fmt.Errorf("',' or ']' expected at offset %d", p.i)
		}
	}
}

func (p *jsParser) str() (any, error) {
	start := p.i
	p.i++ // opening quote
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case '\\':
			p.i += 2
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal([]byte(p.src[start:p.i]), &s); err != nil {
				return nil, fmt.Errorf("bad string %s: %v", p.src[start:p.i], err)
			}
			return s, nil
		default:
			p.i++
		}
	}
	return nil, errors.New("unterminated string")
}

func (p *jsParser) number() (any, error) {
	start := p.i
	for p.i < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.i]) >= 0 {
		p.i++
	}
	f, err := strconv.ParseFloat(p.src[start:p.i], 64)
	if err != nil {
		return nil, fmt.Errorf("bad number %q: %v", p.src[start:p.i], err)
	}
	return f, nil
}

// testStruct is the Go struct that stands in for a class instance.
type testStruct struct{ A int }

func (p *jsParser) word() (any, error) {
	start := p.i
	for p.i < len(p.src) && (p.src[p.i] >= 'a' && p.src[p.i] <= 'z' || p.src[p.i] >= 'A' && p.src[p.i] <= 'Z') {
		p.i++
	}
	switch w := p.src[start:p.i]; w {
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "undefined":
		return dsl.Undefined{}, nil
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "func":
		return func() {}, nil
	case "chan":
		return make(chan int), nil
	case "date":
		return time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), nil
	case "struct":
		return testStruct{A: 1}, nil
	case "intmap":
		return map[int]string{1: "a"}, nil
	default:
		return nil, fmt.Errorf("unknown word %q at offset %d", w, start)
	}
}

// render writes v in a deterministic, order-preserving text that does not
// depend on the package under test: keys in object order, numbers in Go's
// shortest form, anything that is not JSON as <type>.
func render(v any) string {
	var b strings.Builder
	renderTo(&b, v)
	return b.String()
}

func renderTo(b *strings.Builder, v any) {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case float64:
		if v == 0 && math.Signbit(v) {
			b.WriteString("-0")
			return
		}
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case string:
		b.WriteString(strconv.Quote(v))
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			renderTo(b, e)
		}
		b.WriteByte(']')
	case *dsl.Object:
		if v == nil {
			b.WriteString("<nil *dsl.Object>")
			return
		}
		b.WriteByte('{')
		for i := 0; i < v.Len(); i++ {
			k, e := v.At(i)
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			renderTo(b, e)
		}
		b.WriteByte('}')
	default:
		if _, ok := v.(dsl.Undefined); ok {
			b.WriteString("undefined")
			return
		}
		fmt.Fprintf(b, "<%T>", v)
	}
}

// ---------------------------------------------------------------------------
// Assertion helpers.

// wantSchemaError checks that err is a *dsl.JsonSchemaError carrying exactly
// the violations want, in order, and that its text joins them.
func wantSchemaError(t testing.TB, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("no error; want JsonSchemaError with violations\n%s", lines(want))
		return
	}
	var se *dsl.JsonSchemaError
	if !errors.As(err, &se) {
		t.Errorf("error %q is a %T; want *dsl.JsonSchemaError", err, err)
		return
	}
	if !slices.Equal(se.Violations, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", lines(se.Violations), lines(want))
	}
	if got, wantText := se.Error(), "unsupported JSON schema: "+strings.Join(want, "; "); got != wantText {
		t.Errorf("Error() = %q; want %q", got, wantText)
	}
}

// wantViolations compares validation output; nil want means valid.
func wantViolations(t testing.TB, got, want []string) {
	t.Helper()
	if len(want) == 0 {
		if len(got) != 0 {
			t.Errorf("violations:\n%s\nwant none", lines(got))
		} else if got != nil {
			t.Errorf("valid value gave an empty non-nil slice; the API says nil when valid")
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", lines(got), lines(want))
	}
}

func lines(s []string) string {
	if len(s) == 0 {
		return "\t(none)"
	}
	return "\t" + strings.Join(s, "\n\t")
}

// wantSchema compares a compiled schema with the expected one three ways:
// as JSON values (dsl.Equal), key order included (render, independent of the
// package) and as canonical text (dsl.Marshal).
func wantSchema(t testing.TB, got, want any) {
	t.Helper()
	if !dsl.Equal(got, want) {
		t.Errorf("compiled %s\nwant     %s", render(got), render(want))
		return
	}
	if render(got) != render(want) {
		t.Errorf("key order: compiled %s\nwant              %s", render(got), render(want))
	}
	gotText, err1 := dsl.Marshal(got)
	wantText, err2 := dsl.Marshal(want)
	if err1 != nil || err2 != nil {
		t.Errorf("Marshal: %v / %v", err1, err2)
		return
	}
	if !bytes.Equal(gotText, wantText) {
		t.Errorf("Marshal: compiled %s\nwant              %s", gotText, wantText)
	}
}

// ---------------------------------------------------------------------------
// Conformance data: testdata/conformance/*.txtar.

type txtarFile struct {
	name string
	data string
}

// parseTxtar splits a txtar archive: a comment, then "-- name --" marker lines
// each starting a file that runs to the next marker.
func parseTxtar(data string) (comment string, files []txtarFile) {
	var cur *txtarFile
	var buf strings.Builder
	flush := func() {
		if cur == nil {
			comment = buf.String()
		} else {
			cur.data = buf.String()
			files = append(files, *cur)
		}
		buf.Reset()
	}
	for _, line := range strings.SplitAfter(data, "\n") {
		trimmed := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) >= 6 {
			flush()
			cur = &txtarFile{name: strings.TrimSpace(trimmed[3 : len(trimmed)-3])}
			continue
		}
		buf.WriteString(line)
	}
	flush()
	return comment, files
}

// confCase is one case of a conformance file: an input, then optionally a
// line starting "= " with the expected compiled schema (it may continue on
// the following lines), then zero or more "! violation" lines.
type confCase struct {
	name       string
	input      string
	want       string // expected compiled schema text; "" if none
	violations []string
}

func parseCase(name, data string) (confCase, error) {
	c := confCase{name: name}
	var input, want []string
	inWant := false
	for _, line := range strings.Split(strings.TrimRight(data, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "! "):
			c.violations = append(c.violations, strings.TrimPrefix(line, "! "))
		case len(c.violations) > 0:
			if strings.TrimSpace(line) != "" {
				return c, fmt.Errorf("text after the violations: %q", line)
			}
		case strings.HasPrefix(line, "= "):
			inWant = true
			want = append(want, strings.TrimPrefix(line, "= "))
		case inWant:
			want = append(want, line)
		default:
			input = append(input, line)
		}
	}
	c.input = strings.TrimSpace(strings.Join(input, "\n"))
	c.want = strings.TrimSpace(strings.Join(want, "\n"))
	if c.input == "" {
		return c, errors.New("empty input")
	}
	if c.want != "" && len(c.violations) > 0 {
		return c, errors.New("both an expected schema and violations")
	}
	return c, nil
}

// runConformance runs every testdata/conformance file matching glob.
func runConformance(t *testing.T, glob string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "conformance", glob))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no conformance data matches testdata/conformance/%s (err %v)", glob, err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			runConformanceFile(t, path)
		})
	}
}

// runConformanceFile runs one archive. Its comment names the mode in a line
// "mode: <mode>":
//
//	compile-value   each case is an author value spec (§4.2): "= schema" is the
//	                raw schema it must compile to, "! v" the violations it
//	                must fail with.
//	compile-params  the same for parameter specs.
//	assert          each case is a raw schema for AssertSupported: no "!"
//	                lines means accepted.
//	assert-object   the same for AssertObjectSchema.
//	validate        files named "schema" (raw schema; Validate),
//	                "args-schema" (raw schema; ValidateArgs), "spec" (author
//	                value spec; Validate) or "params" (parameter spec;
//	                ValidateArgs) set the schema for the cases that follow;
//	                each case is a value and its expected violations (none =
//	                valid).
func runConformanceFile(t *testing.T, path string) {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	comment, files := parseTxtar(string(raw))
	mode := ""
	for _, line := range strings.Split(comment, "\n") {
		if m, ok := strings.CutPrefix(line, "mode: "); ok {
			mode = strings.TrimSpace(m)
		}
	}
	if mode == "validate" {
		runValidateFile(t, files)
		return
	}
	for _, f := range files {
		c, err := parseCase(f.name, f.data)
		if err != nil {
			t.Errorf("case %q: %v", f.name, err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			input, err := parseJS(c.input)
			if err != nil {
				t.Fatalf("bad input: %v", err)
			}
			switch mode {
			case "compile-value":
				got, err := dsl.CompileValueSpec(input)
				checkCompiled(t, c, got, err)
			case "compile-params":
				got, err := dsl.CompileParameterSpec(input)
				var v any
				if got != nil {
					v = got
				}
				checkCompiled(t, c, v, err)
			case "assert":
				if c.want != "" {
					t.Fatal("assert cases take no expected schema")
				}
				err := dsl.AssertSupported(input)
				if len(c.violations) == 0 {
					if err != nil {
						t.Errorf("AssertSupported rejected a schema in the subset: %v", err)
					}
					return
				}
				wantSchemaError(t, err, c.violations)
			case "assert-object":
				err := dsl.AssertObjectSchema(input)
				if len(c.violations) == 0 {
					if err != nil {
						t.Errorf("AssertObjectSchema rejected an object-rooted schema: %v", err)
					}
					return
				}
				wantSchemaError(t, err, c.violations)
			default:
				t.Fatalf("unknown mode %q", mode)
			}
		})
	}
}

func checkCompiled(t *testing.T, c confCase, got any, err error) {
	t.Helper()
	if len(c.violations) > 0 {
		wantSchemaError(t, err, c.violations)
		return
	}
	if err != nil {
		t.Fatalf("compile failed: %v", err)
	}
	want, perr := parseJS(c.want)
	if c.want == "" || perr != nil {
		t.Fatalf("bad expected schema %q: %v", c.want, perr)
	}
	wantSchema(t, got, want)
	// §4.2: the compiled result passes the raw assertion.
	if err := dsl.AssertSupported(got); err != nil {
		t.Errorf("compiled schema fails AssertSupported: %v", err)
	}
}

// ---------------------------------------------------------------------------
// Author DSL (§4.1, §4.2, cases 104–111).

func TestCompileSpecConformance(t *testing.T) {
	runConformance(t, "compile_*.txtar")
}

// obj builds a *dsl.Object from alternating keys and values.
func cobj(kv ...any) *dsl.Object {
	o := dsl.NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func arr(v ...any) []any { return v }

func TestBuildersCompileLikeLiterals(t *testing.T) {
	cases := []struct {
		name    string
		value   func() any // builder output (spec value)
		literal string     // the equivalent literal spec
		params  bool
	}{
		{"a bare string", func() any { return dsl.String().Value() }, `{"type":"string"}`, false},
		{"a bare number", func() any { return dsl.Number().Value() }, `{"type":"number"}`, false},
		{"a bare integer", func() any { return dsl.Integer().Value() }, `{"type":"integer"}`, false},
		{"a bare boolean", func() any { return dsl.Boolean().Value() }, `{"type":"boolean"}`, false},
		{"a bare null", func() any { return dsl.Null().Value() }, `{"type":"null"}`, false},
		{"a bare json", func() any { return dsl.JSON().Value() }, `{"type":"json"}`, false},
		{"an array without items", func() any { return dsl.Array().Value() }, `{"type":"array"}`, false},
		{"an array of json", func() any { return dsl.ArrayOf(dsl.JSON()).Value() }, `{"type":"array","items":{"type":"json"}}`, false},
		{
			"a string with every annotation",
			func() any {
				return dsl.String().Describe("D").Title("T").Default("d").Examples("x", "y").Value()
			},
			`{"type":"string","description":"D","title":"T","default":"d","examples":["x","y"]}`, false,
		},
		{
			"a string enum with a const",
			func() any { return dsl.String().Enum("a", "b").Const("a").Value() },
			`{"type":"string","enum":["a","b"],"const":"a"}`, false,
		},
		{
			"a number enum of float64 values",
			func() any { return dsl.Number().Enum(1.5, 2.0).Value() },
			`{"type":"number","enum":[1.5,2]}`, false,
		},
		{
			"an integer const",
			func() any { return dsl.Integer().Const(3.0).Value() },
			`{"type":"integer","const":3}`, false,
		},
		{
			"a boolean enum",
			func() any { return dsl.Boolean().Enum(true).Value() },
			`{"type":"boolean","enum":[true]}`, false,
		},
		{
			"a closed object with a required property",
			func() any {
				return dsl.ObjectOf(false, dsl.Prop("host", dsl.String().Required()), dsl.Prop("port", dsl.Integer())).Value()
			},
			`{"type":"object","additionalProperties":false,"properties":{"host":{"type":"string","required":true},"port":{"type":"integer"}}}`, false,
		},
		{
			"an open described object",
			func() any {
				return dsl.ObjectOf(true, dsl.Prop("a", dsl.Boolean())).Describe("D").Value()
			},
			`{"type":"object","additionalProperties":true,"description":"D","properties":{"a":{"type":"boolean"}}}`, false,
		},
		{
			"a titled oneOf of string and null",
			func() any { return dsl.OneOf(dsl.String(), dsl.Null()).Title("T").Value() },
			`{"oneOf":[{"type":"string"},{"type":"null"}],"title":"T"}`, false,
		},
		{
			"the case 104 parameters",
			func() any {
				return dsl.Params(
					dsl.Prop("path", dsl.String().Required().Describe("File path")),
					dsl.Prop("offset", dsl.Number()),
					dsl.Prop("limit", dsl.Number().Describe("Max lines")),
				).Value()
			},
			`{"path":{"type":"string","required":true,"description":"File path"},"offset":{"type":"number"},"limit":{"type":"number","description":"Max lines"}}`, true,
		},
		{
			"empty parameters",
			func() any { return dsl.Params().Value() },
			`{}`, true,
		},
		{
			"the case 105 nested parameters",
			func() any {
				return dsl.Params(
					dsl.Prop("config", dsl.ObjectOf(true, dsl.Prop("host", dsl.String().Required())).Required()),
					dsl.Prop("tags", dsl.ArrayOf(dsl.String())),
					dsl.Prop("mode", dsl.OneOf(dsl.String().Enum("r", "w"), dsl.Null()).Required()),
				).Value()
			},
			`{"config":{"type":"object","additionalProperties":true,"required":true,"properties":{"host":{"type":"string","required":true}}},
			  "tags":{"type":"array","items":{"type":"string"}},
			  "mode":{"oneOf":[{"type":"string","enum":["r","w"]},{"type":"null"}],"required":true}}`, true,
		},
		{
			"a property named __proto__",
			func() any { return dsl.Params(dsl.Prop("__proto__", dsl.String().Required())).Value() },
			`{"__proto__":{"type":"string","required":true}}`, true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			literal := mustJS(t, tc.literal)
			built := tc.value()
			if !dsl.Equal(built, literal) {
				t.Errorf("builder spec %s\nliteral      %s", render(built), render(literal))
			}
			var fromBuilder, fromLiteral any
			var err1, err2 error
			if tc.params {
				var a, b *dsl.Object
				a, err1 = dsl.CompileParameterSpec(built)
				b, err2 = dsl.CompileParameterSpec(literal)
				fromBuilder, fromLiteral = a, b
			} else {
				fromBuilder, err1 = dsl.CompileValueSpec(built)
				fromLiteral, err2 = dsl.CompileValueSpec(literal)
			}
			if err1 != nil || err2 != nil {
				t.Fatalf("compile: builder %v, literal %v", err1, err2)
			}
			wantSchema(t, fromBuilder, fromLiteral)
		})
	}
}

// Go users write dsl.Integer().Enum(1, 2) with untyped constants, which are
// ints. The spec values are Go values; ints are lossless (Snapshot accepts
// them), so the compiled schema should be the same as with float64.
func TestBuilderEnumAcceptsGoInts(t *testing.T) {
	got, err := dsl.CompileValueSpec(dsl.Integer().Enum(1, 2).Const(1).Value())
	if err != nil {
		t.Fatalf("CompileValueSpec(Integer().Enum(1, 2).Const(1)): %v", err)
	}
	if want := mustJS(t, `{"type":"integer","enum":[1,2],"const":1}`); !dsl.Equal(got, want) {
		t.Errorf("compiled %s; want %s", render(got), render(want))
	}
}

func TestCompileCircularSpecs(t *testing.T) {
	t.Run("an array whose items are itself is circular (110)", func(t *testing.T) {
		spec := cobj("type", "array")
		spec.Set("items", spec)
		_, err := dsl.CompileValueSpec(spec)
		wantSchemaError(t, err, []string{"schema.items is circular"})
	})
	t.Run("a property whose schema is an ancestor object is circular", func(t *testing.T) {
		spec := cobj("type", "object", "additionalProperties", true)
		spec.Set("properties", cobj("self", spec))
		_, err := dsl.CompileValueSpec(spec)
		wantSchemaError(t, err, []string{"schema.properties.self is circular"})
	})
	t.Run("a property map containing itself is circular (110)", func(t *testing.T) {
		props := cobj()
		props.Set("self", props)
		spec := cobj("type", "object", "additionalProperties", true, "properties", props)
		_, err := dsl.CompileValueSpec(spec)
		checkSingleCircular(t, err)
	})
	t.Run("a parameter map containing itself is circular", func(t *testing.T) {
		params := cobj("a", cobj("type", "string"))
		params.Set("b", params)
		_, err := dsl.CompileParameterSpec(params)
		checkSingleCircular(t, err)
	})
	t.Run("a oneOf branch that is the oneOf node is circular", func(t *testing.T) {
		spec := cobj()
		spec.Set("oneOf", arr(cobj("type", "string"), spec))
		_, err := dsl.CompileValueSpec(spec)
		wantSchemaError(t, err, []string{"schema.oneOf[1] is circular"})
	})
	t.Run("one spec reused by siblings is not circular", func(t *testing.T) {
		shared := cobj("type", "string", "description", "shared")
		spec := cobj("type", "object", "additionalProperties", false,
			"properties", cobj("a", shared, "b", shared, "c", cobj("type", "array", "items", shared)))
		got, err := dsl.CompileValueSpec(spec)
		if err != nil {
			t.Fatalf("shared sibling spec rejected: %v", err)
		}
		want := mustJS(t, `{"type":"object","additionalProperties":false,"properties":{
			"a":{"type":"string","description":"shared"},
			"b":{"type":"string","description":"shared"},
			"c":{"type":"array","items":{"type":"string","description":"shared"}}}}`)
		wantSchema(t, got, want)
	})
	t.Run("one property spec reused with required is required in both places", func(t *testing.T) {
		shared := cobj("type", "string", "required", true)
		got, err := dsl.CompileParameterSpec(cobj("a", shared, "b", shared))
		if err != nil {
			t.Fatalf("shared property spec rejected: %v", err)
		}
		want := mustJS(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}`)
		wantSchema(t, got, want)
	})
}

// checkSingleCircular: case 110 says the message "matches circular".
func checkSingleCircular(t *testing.T, err error) {
	t.Helper()
	var se *dsl.JsonSchemaError
	if !errors.As(err, &se) {
		t.Fatalf("error %v (%T); want *dsl.JsonSchemaError", err, err)
	}
	if len(se.Violations) != 1 || !strings.HasSuffix(se.Violations[0], " is circular") {
		t.Errorf("violations %q; want one ending in \" is circular\"", se.Violations)
	}
}

func TestCompileDeepSpecs(t *testing.T) {
	const depth = 5000
	t.Run("a 5000-deep author oneOf compiles to full depth (110)", func(t *testing.T) {
		var spec any = cobj("type", "string")
		for range depth {
			spec = cobj("oneOf", arr(spec, cobj("type", "null")), "description", "level")
		}
		got, err := dsl.CompileValueSpec(spec)
		if err != nil {
			t.Fatalf("deep oneOf: %v", err)
		}
		node := got
		for i := range depth {
			o, ok := node.(*dsl.Object)
			if !ok || !slices.Equal(o.Keys(), []string{"oneOf", "description"}) {
				t.Fatalf("level %d: %s", i, shallow(node))
			}
			branches, _ := o.Get("oneOf")
			b, ok := branches.([]any)
			if !ok || len(b) != 2 || render(b[1]) != `{"type":"null"}` {
				t.Fatalf("level %d: branches %s", i, shallow(branches))
			}
			node = b[0]
		}
		if render(node) != `{"type":"string"}` {
			t.Errorf("leaf %s; want {\"type\":\"string\"}", render(node))
		}
	})
	t.Run("5000 levels of required objects compile with required at every level", func(t *testing.T) {
		var params any = cobj("leaf", cobj("type", "string", "required", true))
		for range depth {
			params = cobj("a", cobj("type", "object", "additionalProperties", false, "required", true, "properties", params))
		}
		got, err := dsl.CompileParameterSpec(params)
		if err != nil {
			t.Fatalf("deep parameters: %v", err)
		}
		var node any = got
		for i := range depth {
			o := node.(*dsl.Object)
			req, _ := o.Get("required")
			if render(req) != `["a"]` {
				t.Fatalf("level %d: required %s", i, render(req))
			}
			props, _ := o.Get("properties")
			node, _ = props.(*dsl.Object).Get("a")
		}
		o := node.(*dsl.Object)
		if req, _ := o.Get("required"); render(req) != `["leaf"]` {
			t.Errorf("innermost required %s; want [\"leaf\"]", render(req))
		}
	})
}

// shallow renders one level of a value (deep values are never rendered whole).
func shallow(v any) string {
	o, ok := v.(*dsl.Object)
	if !ok {
		return fmt.Sprintf("%T", v)
	}
	return fmt.Sprintf("object with keys %q", o.Keys())
}

func TestCompileNonPlainSpecValues(t *testing.T) {
	cyclic := cobj("type", "json")
	cyclic.Set("self", cyclic)
	cases := []struct {
		name string
		spec any
		want string
	}{
		{"a Go map[int]string is not an author node", map[int]string{1: "a"}, "schema must be a value schema object"},
		{"a float is not an author node", 1.5, "schema must be a value schema object"},
		{"a bool is not an author node", true, "schema must be a value schema object"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dsl.CompileValueSpec(tc.spec)
			wantSchemaError(t, err, []string{tc.want})
		})
	}
	t.Run("a cyclic default annotation is not lossless", func(t *testing.T) {
		spec := cobj("type", "string", "default", cyclic)
		_, err := dsl.CompileValueSpec(spec)
		wantSchemaError(t, err, []string{"schema.default annotation must be lossless JSON data"})
	})
}

func TestCompileDoesNotAliasTheSpec(t *testing.T) {
	// §4.2 builds a fresh raw tree; mutating it must not change the spec.
	spec := mustJS(t, `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","required":true,"enum":["x"]}}}`)
	before := render(spec)
	got, err := dsl.CompileValueSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	o := got.(*dsl.Object)
	o.Set("type", "array")
	props, _ := o.Get("properties")
	a, _ := props.(*dsl.Object).Get("a")
	a.(*dsl.Object).Set("type", "number")
	if render(spec) != before {
		t.Errorf("spec changed through the compiled schema:\nnow    %s\nbefore %s", render(spec), before)
	}
}
