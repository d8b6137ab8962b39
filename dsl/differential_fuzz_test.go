package dsl_test

// Fuzz targets and a differential check against an independent validator,
// github.com/santhosh-tekuri/jsonschema/v6 (draft 2020-12): for a schema in
// the enforced subset and a lossless value, our verdict (valid or not) must
// equal theirs. Two known, deliberate differences are in the schema check,
// not the verdict, and are skipped when jsonschema rejects the schema for
// them: the 2020-12 meta-schema requires `examples` to be an array and
// `required` names to be unique; our subset accepts any lossless `examples`
// and repeated names.

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// toPlain converts the dsl Go form to what jsonschema takes: *dsl.Object
// becomes map[string]any; float64 stays float64.
func toPlain(v any) any {
	switch v := v.(type) {
	case *dsl.Object:
		m := make(map[string]any, v.Len())
		for k, e := range v.All() {
			m[k] = toPlain(e)
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toPlain(e)
		}
		return out
	default:
		return v
	}
}

func compileTheirs(schema any) (*jsonschema.Schema, error) {
	const url = "https://dsh.test/schema.json"
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, toPlain(schema)); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// metaschemaDiffers reports whether schema uses one of the two things our
// subset accepts and the 2020-12 meta-schema does not.
func metaschemaDiffers(schema any) bool {
	stack := []any{schema}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		o, ok := n.(*dsl.Object)
		if !ok {
			continue
		}
		if ex, ok := o.Get("examples"); ok {
			if _, isArray := ex.([]any); !isArray {
				return true
			}
		}
		if req, ok := o.Get("required"); ok {
			if names, ok := req.([]any); ok {
				for i := range names {
					if slices.Contains(names[:i], names[i]) {
						return true
					}
				}
			}
		}
		if p, ok := o.Get("properties"); ok {
			if po, ok := p.(*dsl.Object); ok {
				for _, s := range po.All() {
					stack = append(stack, s)
				}
			}
		}
		if items, ok := o.Get("items"); ok {
			stack = append(stack, items)
		}
		if b, ok := o.Get("oneOf"); ok {
			if branches, ok := b.([]any); ok {
				stack = append(stack, branches...)
			}
		}
	}
	return false
}

// differential compares verdicts for one schema (which must be in the
// subset) and several lossless values. It returns how many values each side
// found valid, and fails t on any disagreement.
func differential(t testing.TB, schema any, values []any) (compared, valid int) {
	t.Helper()
	ours, err := dsl.Compile(schema)
	if err != nil {
		t.Fatalf("Compile rejected a schema AssertSupported accepted: %v", err)
	}
	theirs, err := compileTheirs(schema)
	if err != nil {
		if metaschemaDiffers(schema) {
			return 0, 0
		}
		t.Errorf("jsonschema rejects a schema of our subset: %s: %v", marshal(schema), err)
		return 0, 0
	}
	for _, v := range values {
		if !dsl.IsLossless(v) {
			continue
		}
		got := ours.Validate(v)
		theirErr := theirs.Validate(toPlain(v))
		if (len(got) == 0) != (theirErr == nil) {
			t.Errorf("verdicts differ\nschema %s\nvalue  %s\nours:   %q\ntheirs: %v", marshal(schema), marshal(v), got, theirErr)
		}
		compared++
		if len(got) == 0 {
			valid++
		}
	}
	return compared, valid
}

func marshal(v any) string {
	b, err := dsl.Marshal(v)
	if err != nil {
		return render(v)
	}
	return string(b)
}

// conformanceJSON returns, from the conformance data matching glob, every
// case input that is plain JSON, and for validate files every (schema,
// value) pair that is.
func conformanceJSON(tb testing.TB, glob string) (inputs []string, pairs [][2]string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "conformance", glob))
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		_, files := parseTxtar(string(raw))
		schema := ""
		for _, f := range files {
			if f.name == "schema" || f.name == "args-schema" {
				schema = strings.TrimSpace(f.data)
				inputs = append(inputs, schema)
				continue
			}
			if f.name == "spec" || f.name == "params" {
				schema = ""
				continue
			}
			c, err := parseCase(f.name, f.data)
			if err != nil || !json.Valid([]byte(c.input)) {
				continue
			}
			inputs = append(inputs, c.input)
			if schema != "" && json.Valid([]byte(schema)) {
				pairs = append(pairs, [2]string{schema, c.input})
			}
		}
	}
	return inputs, pairs
}

func FuzzAssertSupported(f *testing.F) {
	inputs, _ := conformanceJSON(f, "*.txtar")
	for _, in := range inputs {
		f.Add([]byte(in))
	}
	f.Add([]byte(`{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"null"}]}},"required":["a"],"additionalProperties":false}`))
	f.Add([]byte(`{"oneOf":[{"oneOf":[{"type":"integer","enum":[1,2],"const":1},{}]},{"type":"array","items":{"type":"boolean"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		err = dsl.AssertSupported(v)
		objErr := dsl.AssertObjectSchema(v)
		if err != nil {
			var se *dsl.JsonSchemaError
			if !errors.As(err, &se) || len(se.Violations) == 0 {
				t.Fatalf("AssertSupported error %v (%T) is not a JsonSchemaError with violations", err, err)
			}
			if se.Error() != "unsupported JSON schema: "+strings.Join(se.Violations, "; ") {
				t.Fatalf("Error() %q does not join %q", se.Error(), se.Violations)
			}
			var oe *dsl.JsonSchemaError
			if !errors.As(objErr, &oe) || !slices.Equal(oe.Violations, se.Violations) {
				t.Fatalf("AssertObjectSchema = %v; want the same violations as AssertSupported %q", objErr, se.Violations)
			}
			return
		}
		o, isObject := v.(*dsl.Object)
		typ, _ := o.Get("type")
		if objectRooted := isObject && typ == "object"; objectRooted != (objErr == nil) {
			t.Fatalf("AssertObjectSchema = %v for a supported schema with root type %v", objErr, typ)
		}
		s, err := dsl.Compile(v)
		if err != nil {
			t.Fatalf("Compile failed for a supported schema: %v", err)
		}
		// Validation is total for asserted schemas.
		s.Validate(v)
		s.ValidateArgs(v)
		s.Validate(dsl.Undefined{})
	})
}

// FuzzCompileSpec: the author compilers never panic, fail only with a
// JsonSchemaError, and what they produce passes the raw assertion.
func FuzzCompileSpec(f *testing.F) {
	inputs, _ := conformanceJSON(f, "compile_*.txtar")
	for _, in := range inputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		check := func(name string, got any, err error) {
			if err != nil {
				var se *dsl.JsonSchemaError
				if !errors.As(err, &se) || len(se.Violations) == 0 {
					t.Fatalf("%s error %v (%T) is not a JsonSchemaError", name, err, err)
				}
				return
			}
			if err := dsl.AssertSupported(got); err != nil {
				t.Fatalf("%s output %s fails AssertSupported: %v", name, marshal(got), err)
			}
		}
		raw, err := dsl.CompileValueSpec(v)
		check("CompileValueSpec", raw, err)
		params, err := dsl.CompileParameterSpec(v)
		var p any
		if params != nil {
			p = params
		}
		check("CompileParameterSpec", p, err)
	})
}

func FuzzValidateDifferential(f *testing.F) {
	_, pairs := conformanceJSON(f, "validate_*.txtar")
	for _, p := range pairs {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	seeds := [][2]string{
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1`},
		{`{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `1.5`},
		{`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, `{"a":"x","b":1}`},
		{`{"type":"array","items":{"oneOf":[{"type":"null"},{"type":"object","additionalProperties":false}]}}`, `[null,{},{"x":1}]`},
		{`{"type":"integer","enum":[1,2,1e21]}`, `1e21`},
		{`{"type":"number","const":0.1}`, `0.1`},
		{`{"type":"string","enum":["é","e\u0301"]}`, `"e\u0301"`},
		{`{}`, `{"a":[1,{"b":null}]}`},
		{`{"description":"x","default":[1]}`, `"anything"`},
		{`{"type":"object","properties":{"__proto__":{"type":"number"}},"required":["__proto__"]}`, `{"__proto__":"x"}`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, schemaText, valueText []byte) {
		schema, err := dsl.Unmarshal(schemaText)
		if err != nil || dsl.AssertSupported(schema) != nil {
			return
		}
		value, err := dsl.Unmarshal(valueText)
		if err != nil || !dsl.IsLossless(value) {
			return
		}
		differential(t, schema, []any{value})
	})
}

// rawGen generates raw schemas of the subset and values near them.
type rawGen struct{ r *rand.Rand }

var (
	rawNumbers  = []float64{0, 1, 2, -1, 1.5, 0.1, 1e21, 3, -7, 1e-7}
	rawIntegers = []float64{0, 1, 2, -1, 1e21, 3, -7}
	rawStrings  = []string{"", "a", "b", "é", "1"}
	rawKeys     = []string{"a", "b", "c"}
)

func (g *rawGen) coin(p float64) bool { return g.r.Float64() < p }

func (g *rawGen) scalar(typ string) any {
	switch typ {
	case "string":
		return rawStrings[g.r.IntN(len(rawStrings))]
	case "number":
		return rawNumbers[g.r.IntN(len(rawNumbers))]
	case "integer":
		return rawIntegers[g.r.IntN(len(rawIntegers))]
	case "boolean":
		return g.coin(0.5)
	default:
		return nil
	}
}

func (g *rawGen) json(depth int) any {
	switch k := g.r.IntN(7); {
	case k == 0:
		return nil
	case k == 1:
		return g.coin(0.5)
	case k == 2:
		return g.scalar("number")
	case k == 3:
		return g.scalar("string")
	case k == 4 && depth > 0:
		a := make([]any, g.r.IntN(3))
		for i := range a {
			a[i] = g.json(depth - 1)
		}
		return a
	case k >= 5 && depth > 0:
		o := dsl.NewObject()
		for range g.r.IntN(3) {
			o.Set(rawKeys[g.r.IntN(len(rawKeys))], g.json(depth-1))
		}
		return o
	default:
		return g.scalar("integer")
	}
}

func (g *rawGen) schema(depth int) *dsl.Object {
	kinds := []string{"string", "number", "integer", "boolean", "null", "free", "array", "object", "oneOf"}
	if depth <= 0 {
		kinds = kinds[:6]
	}
	o := dsl.NewObject()
	switch kind := kinds[g.r.IntN(len(kinds))]; kind {
	case "free":
	case "array":
		o.Set("type", "array")
		if g.coin(0.7) {
			o.Set("items", g.schema(depth-1))
		}
	case "object":
		o.Set("type", "object")
		var declared []string
		if g.coin(0.8) {
			props := dsl.NewObject()
			for _, k := range rawKeys {
				if g.coin(0.5) {
					props.Set(k, g.schema(depth-1))
					declared = append(declared, k)
				}
			}
			o.Set("properties", props)
		}
		if len(declared) > 0 && g.coin(0.6) {
			g.r.Shuffle(len(declared), func(i, j int) { declared[i], declared[j] = declared[j], declared[i] })
			req := []any{}
			for _, k := range declared[:g.r.IntN(len(declared)+1)] {
				req = append(req, k)
			}
			o.Set("required", req)
		}
		if g.coin(0.6) {
			o.Set("additionalProperties", g.coin(0.5))
		}
	case "oneOf":
		branches := make([]any, 2+g.r.IntN(2))
		for i := range branches {
			branches[i] = g.schema(depth - 1)
		}
		o.Set("oneOf", branches)
	default:
		o.Set("type", kind)
		var enum []any
		if g.coin(0.35) {
			for range 1 + g.r.IntN(3) {
				if v := g.scalar(kind); !slices.Contains(enum, v) {
					enum = append(enum, v)
				}
			}
			o.Set("enum", enum)
		}
		if g.coin(0.25) {
			c := g.scalar(kind)
			if enum != nil {
				c = enum[g.r.IntN(len(enum))]
			}
			o.Set("const", c)
		}
	}
	if g.coin(0.2) {
		o.Set("description", "d")
	}
	if g.coin(0.1) {
		o.Set("title", "t")
	}
	if g.coin(0.15) {
		o.Set("default", g.json(2))
	}
	if g.coin(0.1) {
		o.Set("examples", []any{g.json(1)})
	}
	return o
}

// value returns a value shaped like schema, with random mutations so both
// verdicts occur.
func (g *rawGen) value(schema *dsl.Object, depth int) any {
	if depth > 6 || g.coin(0.12) {
		return g.json(2)
	}
	if b, ok := schema.Get("oneOf"); ok {
		branches := b.([]any)
		return g.value(branches[g.r.IntN(len(branches))].(*dsl.Object), depth+1)
	}
	if c, ok := schema.Get("const"); ok && g.coin(0.7) {
		return c
	}
	if e, ok := schema.Get("enum"); ok && g.coin(0.7) {
		enum := e.([]any)
		return enum[g.r.IntN(len(enum))]
	}
	typ, _ := schema.Get("type")
	switch typ {
	case nil:
		return g.json(2)
	case "array":
		a := make([]any, g.r.IntN(4))
		items, ok := schema.Get("items")
		for i := range a {
			if ok {
				a[i] = g.value(items.(*dsl.Object), depth+1)
			} else {
				a[i] = g.json(1)
			}
		}
		return a
	case "object":
		o := dsl.NewObject()
		if p, ok := schema.Get("properties"); ok {
			for k, s := range p.(*dsl.Object).All() {
				if g.coin(0.75) {
					o.Set(k, g.value(s.(*dsl.Object), depth+1))
				}
			}
		}
		if g.coin(0.25) {
			o.Set([]string{"a", "b", "c", "z"}[g.r.IntN(4)], g.json(1))
		}
		return o
	default:
		return g.scalar(typ.(string))
	}
}

func TestValidateDifferential(t *testing.T) {
	g := &rawGen{r: rand.New(rand.NewPCG(4, 5))}
	const schemas = 2500
	var compared, valid int
	for range schemas {
		s := g.schema(3)
		if err := dsl.AssertSupported(s); err != nil {
			t.Fatalf("generator produced an unsupported schema %s: %v", marshal(s), err)
		}
		values := make([]any, 4)
		for i := range values {
			values[i] = g.value(s, 0)
		}
		c, v := differential(t, s, values)
		compared += c
		valid += v
		if t.Failed() {
			break
		}
	}
	t.Logf("%d schemas, %d (schema, value) pairs compared: %d valid, %d invalid", schemas, compared, valid, compared-valid)
	if valid < compared/5 || compared-valid < compared/5 {
		t.Errorf("verdicts are lopsided (%d valid of %d); the generator needs tuning", valid, compared)
	}
}

func TestDifferentialHelpers(t *testing.T) {
	t.Run("jsonschema rejects non-array examples, which our subset accepts", func(t *testing.T) {
		s := mustJS(t, `{"type":"string","examples":"x"}`)
		if _, err := compileTheirs(s); err == nil {
			t.Skip("this jsonschema version accepts non-array examples; metaschemaDiffers is merely conservative")
		}
		if !metaschemaDiffers(s) {
			t.Error("metaschemaDiffers missed non-array examples")
		}
	})
	t.Run("jsonschema rejects repeated required names, which our subset accepts", func(t *testing.T) {
		s := mustJS(t, `{"type":"object","properties":{"a":{}},"required":["a","a"]}`)
		if _, err := compileTheirs(s); err == nil {
			t.Skip("this jsonschema version accepts repeated required names")
		}
		if !metaschemaDiffers(s) {
			t.Error("metaschemaDiffers missed repeated required names")
		}
	})
	t.Run("jsonschema agrees on a plain case", func(t *testing.T) {
		s, err := compileTheirs(mustJS(t, `{"type":"integer"}`))
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(1.0) != nil || s.Validate(1.5) == nil {
			t.Error("jsonschema integer check is not what the differential assumes")
		}
	})
}
