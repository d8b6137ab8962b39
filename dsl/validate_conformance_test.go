package dsl_test

// Validation conformance (§4.5, §4.6, cases 122–131). Data cases live in
// testdata/conformance/validate_*.txtar; this file holds the runner for them
// and what text cannot express: cyclic and shared values, depth, concurrency
// and the property-based test of case 131.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

func TestValidateConformance(t *testing.T) {
	runConformance(t, "validate_*.txtar")
}

// validator is the schema the cases of a validate file run against.
type validator struct {
	kind   string // schema, args-schema, spec, params
	source string
	input  any
	schema *dsl.Schema
	err    error
}

func newValidator(kind, source string) *validator {
	v := &validator{kind: kind, source: source}
	v.input, v.err = parseJS(source)
	if v.err != nil {
		return v
	}
	switch kind {
	case "schema", "args-schema":
		v.schema, v.err = dsl.Compile(v.input)
	case "spec":
		var raw any
		if raw, v.err = dsl.CompileValueSpec(v.input); v.err == nil {
			v.schema, v.err = dsl.Compile(raw)
		}
	case "params":
		var raw *dsl.Object
		if raw, v.err = dsl.CompileParameterSpec(v.input); v.err == nil {
			v.schema, v.err = dsl.Compile(raw)
		}
	}
	return v
}

func (v *validator) validate(t *testing.T, value func() any) []string {
	t.Helper()
	switch v.kind {
	case "schema":
		got := v.schema.Validate(value())
		// dsl.ValidateValue is compile + Validate.
		again, err := dsl.ValidateValue(v.input, value())
		if err != nil || !slices.Equal(again, got) {
			t.Errorf("ValidateValue = %q, %v; Compile(...).Validate = %q", again, err, got)
		}
		return got
	case "params":
		got := v.schema.ValidateArgs(value())
		// dsl.ValidateArgs is CompileParameterSpec + Compile + ValidateArgs.
		again, err := dsl.ValidateArgs(v.input, value())
		if err != nil || !slices.Equal(again, got) {
			t.Errorf("dsl.ValidateArgs = %q, %v; Compile(...).ValidateArgs = %q", again, err, got)
		}
		return got
	case "args-schema":
		return v.schema.ValidateArgs(value())
	default: // spec
		return v.schema.Validate(value())
	}
}

func runValidateFile(t *testing.T, files []txtarFile) {
	var cur *validator
	for _, f := range files {
		switch f.name {
		case "schema", "args-schema", "spec", "params":
			cur = newValidator(f.name, strings.TrimSpace(f.data))
			if cur.err != nil {
				t.Errorf("%s %s does not compile: %v", f.name, cur.source, cur.err)
			}
			continue
		}
		c, err := parseCase(f.name, f.data)
		if err != nil {
			t.Errorf("case %q: %v", f.name, err)
			continue
		}
		v := cur
		t.Run(c.name, func(t *testing.T) {
			if v == nil || v.err != nil {
				t.Fatal("no compiled schema for this case (see the error above)")
			}
			if _, err := parseJS(c.input); err != nil {
				t.Fatalf("bad value: %v", err)
			}
			// Parse afresh for each call: funcs and channels are not reusable
			// as data, and a validator must not be able to see an earlier
			// call's value.
			value := func() any { x, _ := parseJS(c.input); return x }
			wantViolations(t, v.validate(t, value), c.violations)
		})
	}
}

func TestValidateGoValues(t *testing.T) {
	free := mustCompile(t, `{}`)
	anyObject := mustCompile(t, `{"type":"object"}`)
	anyArray := mustCompile(t, `{"type":"array"}`)
	cyclic := cobj("a", 1.0)
	cyclic.Set("self", cyclic)
	cyclicSlice := make([]any, 1)
	cyclicSlice[0] = cyclicSlice
	shared := cobj("x", []any{1.0, "y"})

	cases := []struct {
		name   string
		schema *dsl.Schema
		value  any
		want   []string
	}{
		{"a cyclic object is not a lossless value (128)", free, cyclic, []string{`"value" must be a lossless JSON value`}},
		{"a cyclic object is not a lossless object", anyObject, cyclic, []string{`"value" must be a lossless JSON object`}},
		{"an object containing a cycle further down is not lossless", anyObject, cobj("ok", 1.0, "c", cyclic), []string{`"value" must be a lossless JSON object`}},
		{"a slice that contains itself is not a lossless value", free, cyclicSlice, []string{`"value" must be a lossless JSON value`}},
		{"a slice that contains itself is not a dense lossless array", anyArray, cyclicSlice, []string{`"value" must be a dense lossless JSON array`}},
		{"a shared non-cyclic object is lossless", free, cobj("a", shared, "b", arr(shared, shared)), nil},
		{"a shared non-cyclic slice is lossless", anyArray, func() any { s := []any{"x"}; return []any{s, s} }(), nil},
		{"a pointer to a string is not a lossless value", free, new(string), []string{`"value" must be a lossless JSON value`}},
		{"a chan is not an object", anyObject, make(chan int), []string{`"value" must be an object`}},
		{"a struct is not an array", anyArray, testStruct{}, []string{`"value" must be an array`}},
		{"a map[int]string is not an array", anyArray, map[int]string{0: "a"}, []string{`"value" must be an array`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, tc.schema.Validate(tc.value), tc.want)
		})
	}
}

func mustCompile(t testing.TB, schema string) *dsl.Schema {
	t.Helper()
	s, err := dsl.Compile(mustJS(t, schema))
	if err != nil {
		t.Fatalf("Compile(%s): %v", schema, err)
	}
	return s
}

func TestValidateDeepSchemas(t *testing.T) {
	const depth = 5000
	deepOneOf := func(levels int) *dsl.Schema {
		var s any = cobj("type", "string")
		for range levels {
			s = cobj("oneOf", arr(s, cobj("type", "null")))
		}
		c, err := dsl.Compile(s)
		if err != nil {
			t.Fatalf("Compile(%d-deep oneOf): %v", levels, err)
		}
		return c
	}
	t.Run("a string passes a 5000-deep oneOf", func(t *testing.T) {
		wantViolations(t, deepOneOf(depth).Validate("x"), nil)
	})
	// L0 = string, Lk = oneOf[L(k-1), null]: null matches Lk exactly when k
	// is odd, so at an even depth both branches of the top oneOf match.
	t.Run("null matches both branches of an even-depth oneOf", func(t *testing.T) {
		wantViolations(t, deepOneOf(depth).Validate(nil), []string{`"value" must match exactly one oneOf branch (matched 2)`})
	})
	t.Run("null matches one branch of an odd-depth oneOf", func(t *testing.T) {
		wantViolations(t, deepOneOf(depth-1).Validate(nil), nil)
	})
	t.Run("a missing property 5000 levels down carries the full path", func(t *testing.T) {
		var s any = cobj("type", "object", "properties", cobj("leaf", cobj("type", "string")), "required", arr("leaf"))
		for range depth {
			s = cobj("type", "object", "properties", cobj("a", s), "required", arr("a"))
		}
		c, err := dsl.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		var v any = cobj()
		for range depth {
			v = cobj("a", v)
		}
		want := `missing required property "value` + strings.Repeat(".a", depth) + `.leaf"`
		wantViolations(t, c.Validate(v), []string{want})
		wantViolations(t, c.ValidateArgs(v), []string{`missing required property "` + strings.Repeat("a.", depth) + `leaf"`})
	})
	t.Run("a wrong item 5000 arrays down carries the full path", func(t *testing.T) {
		var s any = cobj("type", "string")
		for range depth {
			s = cobj("type", "array", "items", s)
		}
		c, err := dsl.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		var v any = 1.0
		for range depth {
			v = []any{v}
		}
		want := `"value` + strings.Repeat("[0]", depth) + `" must be a string`
		wantViolations(t, c.Validate(v), []string{want})
	})
	t.Run("a 5000-deep value against the free schema is lossless", func(t *testing.T) {
		var v any = "leaf"
		for i := range depth {
			if i%2 == 0 {
				v = []any{v}
			} else {
				v = cobj("k", v)
			}
		}
		wantViolations(t, mustCompile(t, `{}`).Validate(v), nil)
	})
}

func TestValidateDoesNotTouchTheValue(t *testing.T) {
	// §4.6: defaults are never applied; validation only reads.
	params := mustJS(t, `{"n":{"type":"number","default":5},"o":{"type":"object","additionalProperties":true,"default":{},"properties":{"x":{"type":"string","default":"d"}}}}`)
	args := mustJS(t, `{"o":{}}`)
	before := render(args)
	got, err := dsl.ValidateArgs(params, args)
	if err != nil {
		t.Fatal(err)
	}
	wantViolations(t, got, nil)
	if render(args) != before {
		t.Errorf("arguments changed to %s; were %s", render(args), before)
	}
}

func TestValidateArgsRejectsBadSpecs(t *testing.T) {
	// §4.6: a bad spec is an error, not a violation (case 130).
	cases := []struct {
		name string
		spec string
		want string
	}{
		{"a mistyped enum spec is an error", `{"n":{"type":"number","enum":["1"]}}`, "schema.properties.n.enum must be a non-empty array of number values"},
		{"an unknown type spec is an error", `{"n":{"type":"tuple"}}`, "parameters.n.type must be string/number/integer/boolean/null/array/object/json, or use oneOf"},
		{"a null spec is an error", `null`, "parameters must be an object of value schemas"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dsl.ValidateArgs(mustJS(t, tc.spec), mustJS(t, `{}`))
			if got != nil {
				t.Errorf("violations %q beside the error", got)
			}
			wantSchemaError(t, err, []string{tc.want})
		})
	}
}

func TestSchemaIsReusable(t *testing.T) {
	raw := mustJS(t, `{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]}`)
	s, err := dsl.Compile(raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("Raw returns the compiled schema", func(t *testing.T) {
		if !dsl.Equal(s.Raw(), raw) {
			t.Errorf("Raw() = %s; want %s", render(s.Raw()), render(raw))
		}
	})
	t.Run("concurrent validations agree", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan string, 64)
		for g := range 16 {
			wg.Go(func() {
				for i := range 50 {
					n := float64(g*100 + i)
					if got := s.Validate(cobj("a", n)); got != nil {
						errs <- fmt.Sprintf("a=%v: %q", n, got)
					}
					want := `"value.a" must be an integer`
					if got := s.Validate(cobj("a", n+0.5)); len(got) != 1 || got[0] != want {
						errs <- fmt.Sprintf("a=%v: %q", n+0.5, got)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	})
}

// ---------------------------------------------------------------------------
// Case 131, property-based: random valid parameter specs.

// specGen generates valid author specs and values that satisfy them.
type specGen struct{ r *rand.Rand }

// The empty key has its own cases in validate_args.txtar: a property path
// "" looks like the empty root, which makes its messages special.
var genKeys = []string{"path", "a", "b", "c d", "__proto__", "toString", "x.y", "ünï", "required", "type"}

func (g *specGen) coin(p float64) bool { return g.r.Float64() < p }

func (g *specGen) pick(n int) int { return g.r.IntN(n) }

// scalar returns a random value of a scalar type.
func (g *specGen) scalar(typ string) any {
	switch typ {
	case "string":
		return []string{"", "a", "b", "é", "x y", "0"}[g.pick(6)]
	case "number":
		return []float64{0, 1, -1, 1.5, 0.1, 1e21, -2.5e-7, 42}[g.pick(8)]
	case "integer":
		return []float64{0, 1, -1, 2, 1e21, 42, 9007199254740991}[g.pick(7)]
	case "boolean":
		return g.coin(0.5)
	default:
		return nil
	}
}

// json returns a random lossless JSON value.
func (g *specGen) json(depth int) any {
	switch k := g.pick(7); {
	case k == 0:
		return nil
	case k == 1:
		return g.coin(0.5)
	case k == 2:
		return g.scalar("number")
	case k == 3:
		return g.scalar("string")
	case k == 4 && depth > 0:
		n := g.pick(3)
		a := make([]any, n)
		for i := range a {
			a[i] = g.json(depth - 1)
		}
		return a
	case k >= 5 && depth > 0:
		o := dsl.NewObject()
		for range g.pick(3) {
			o.Set(genKeys[g.pick(len(genKeys))], g.json(depth-1))
		}
		return o
	default:
		return "leaf"
	}
}

// annotate adds random annotations; node members are shuffled at the end.
func (g *specGen) annotate(m []dsl.Member) []dsl.Member {
	if g.coin(0.3) {
		m = append(m, dsl.Member{Key: "description", Value: "D"})
	}
	if g.coin(0.2) {
		m = append(m, dsl.Member{Key: "title", Value: "T"})
	}
	if g.coin(0.2) {
		m = append(m, dsl.Member{Key: "default", Value: g.json(2)})
	}
	if g.coin(0.2) {
		m = append(m, dsl.Member{Key: "examples", Value: []any{g.json(1)}})
	}
	return m
}

func (g *specGen) node(m []dsl.Member) *dsl.Object {
	m = g.annotate(m)
	g.r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return dsl.NewObject(m...)
}

// family is a set of JSON values; oneOf branches use disjoint families so a
// value generated for one branch matches that branch only.
var families = []string{"string", "number", "boolean", "null", "array", "object"}

// spec returns a random value spec. family "" means any kind.
func (g *specGen) spec(depth int, family string) *dsl.Object {
	kind := family
	if kind == "" {
		kinds := []string{"string", "number", "integer", "boolean", "null", "json", "array", "object", "oneOf"}
		if depth <= 0 {
			kinds = kinds[:6]
		}
		kind = kinds[g.pick(len(kinds))]
	} else if kind == "number" && g.coin(0.5) {
		kind = "integer"
	}
	switch kind {
	case "json":
		return g.node([]dsl.Member{{Key: "type", Value: "json"}})
	case "array":
		m := []dsl.Member{{Key: "type", Value: "array"}}
		if depth > 0 && g.coin(0.7) {
			m = append(m, dsl.Member{Key: "items", Value: g.spec(depth-1, "")})
		}
		return g.node(m)
	case "object":
		m := []dsl.Member{{Key: "type", Value: "object"}, {Key: "additionalProperties", Value: g.coin(0.5)}}
		if g.coin(0.8) {
			m = append(m, dsl.Member{Key: "properties", Value: g.params(depth - 1)})
		}
		return g.node(m)
	case "oneOf":
		fams := slices.Clone(families)
		g.r.Shuffle(len(fams), func(i, j int) { fams[i], fams[j] = fams[j], fams[i] })
		n := 2 + g.pick(2)
		branches := make([]any, n)
		for i := range branches {
			branches[i] = g.spec(depth-1, fams[i])
		}
		return g.node([]dsl.Member{{Key: "oneOf", Value: branches}})
	default: // scalar
		m := []dsl.Member{{Key: "type", Value: kind}}
		var enum []any
		if kind != "null" && g.coin(0.3) {
			for range 1 + g.pick(3) {
				if v := g.scalar(kind); !slices.Contains(enum, v) {
					enum = append(enum, v)
				}
			}
			m = append(m, dsl.Member{Key: "enum", Value: enum})
		}
		if g.coin(0.2) {
			c := g.scalar(kind)
			if enum != nil {
				c = enum[g.pick(len(enum))]
			}
			m = append(m, dsl.Member{Key: "const", Value: c})
		}
		return g.node(m)
	}
}

// params returns a random parameter map; some properties are required.
func (g *specGen) params(depth int) *dsl.Object {
	p := dsl.NewObject()
	for range g.pick(5) {
		key := genKeys[g.pick(len(genKeys))]
		if p.Has(key) {
			continue
		}
		s := g.spec(depth, "")
		if g.coin(0.4) {
			s.Set("required", true)
		}
		p.Set(key, s)
	}
	return p
}

// value returns a value valid for spec.
func (g *specGen) value(spec *dsl.Object, depth int) any {
	if branches, ok := spec.Get("oneOf"); ok {
		b := branches.([]any)
		return g.value(b[g.pick(len(b))].(*dsl.Object), depth)
	}
	typ, _ := spec.Get("type")
	if c, ok := spec.Get("const"); ok {
		return c
	}
	if e, ok := spec.Get("enum"); ok {
		enum := e.([]any)
		return enum[g.pick(len(enum))]
	}
	switch typ {
	case "json":
		return g.json(2)
	case "array":
		items, ok := spec.Get("items")
		n := g.pick(3)
		a := make([]any, n)
		for i := range a {
			if ok {
				a[i] = g.value(items.(*dsl.Object), depth+1)
			} else {
				a[i] = g.json(1)
			}
		}
		return a
	case "object":
		props, _ := spec.Get("properties")
		open, _ := spec.Get("additionalProperties")
		return g.object(props, open == true)
	default:
		return g.scalar(typ.(string))
	}
}

// object returns an object valid for a property map.
func (g *specGen) object(props any, open bool) *dsl.Object {
	o := dsl.NewObject()
	if p, ok := props.(*dsl.Object); ok {
		for k, s := range p.All() {
			node := s.(*dsl.Object)
			if req, _ := node.Get("required"); req == true || g.coin(0.5) {
				o.Set(k, g.value(node, 0))
			}
		}
		if open && g.coin(0.5) {
			for _, extra := range []string{"zz extra", "zz"} {
				if !p.Has(extra) {
					o.Set(extra, g.json(1))
					break
				}
			}
		}
	} else if open && g.coin(0.5) {
		o.Set("zz", g.json(1))
	}
	// Shuffle the value's key order: validity must not depend on it.
	m := o.Members()
	g.r.Shuffle(len(m), func(i, j int) { m[i], m[j] = m[j], m[i] })
	return dsl.NewObject(m...)
}

// requiredKeys lists the keys of a property map marked required:true.
func requiredKeys(props *dsl.Object) []string {
	var keys []string
	for k, s := range props.All() {
		if req, _ := s.(*dsl.Object).Get("required"); req == true {
			keys = append(keys, k)
		}
	}
	return keys
}

// checkRequired walks spec and compiled schema together and returns the
// problems found: at every property map, compiled required must be the keys
// with required:true in declaration order (absent when none), and no
// compiled property may keep a required:true flag.
func checkRequired(path string, props *dsl.Object, compiled *dsl.Object, problems []string) []string {
	want := requiredKeys(props)
	got, has := compiled.Get("required")
	switch {
	case len(want) == 0 && has:
		problems = append(problems, fmt.Sprintf("%s: required %s; want no required key", path, render(got)))
	case len(want) > 0 && render(got) != render(toAny(want)):
		problems = append(problems, fmt.Sprintf("%s: required %s; want %s", path, render(got), render(toAny(want))))
	}
	cprops, _ := compiled.Get("properties")
	cp, ok := cprops.(*dsl.Object)
	if !ok {
		return append(problems, fmt.Sprintf("%s: compiled properties %s", path, render(cprops)))
	}
	if !slices.Equal(cp.Keys(), props.Keys()) {
		return append(problems, fmt.Sprintf("%s: compiled property keys %q; want %q", path, cp.Keys(), props.Keys()))
	}
	for k, s := range props.All() {
		c, _ := cp.Get(k)
		problems = checkRequiredNode(path+"."+k, s.(*dsl.Object), c, problems)
	}
	return problems
}

func checkRequiredNode(path string, spec *dsl.Object, compiled any, problems []string) []string {
	c, ok := compiled.(*dsl.Object)
	if !ok {
		return append(problems, fmt.Sprintf("%s: compiled %s", path, render(compiled)))
	}
	if req, ok := c.Get("required"); ok {
		if _, isList := req.([]any); !isList {
			problems = append(problems, fmt.Sprintf("%s: compiled node keeps required %s", path, render(req)))
		}
	}
	if b, ok := spec.Get("oneOf"); ok {
		cb, _ := c.Get("oneOf")
		cbl, _ := cb.([]any)
		for i, s := range b.([]any) {
			if i >= len(cbl) {
				return append(problems, fmt.Sprintf("%s: compiled oneOf %s", path, render(cb)))
			}
			problems = checkRequiredNode(fmt.Sprintf("%s.oneOf[%d]", path, i), s.(*dsl.Object), cbl[i], problems)
		}
	}
	if items, ok := spec.Get("items"); ok {
		ci, _ := c.Get("items")
		problems = checkRequiredNode(path+".items", items.(*dsl.Object), ci, problems)
	}
	if props, ok := spec.Get("properties"); ok {
		problems = checkRequired(path, props.(*dsl.Object), c, problems)
	}
	return problems
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

// droppable is a required key present in a generated value, reachable
// without passing through a oneOf, with its args-rooted display path.
type droppable struct {
	holder *dsl.Object
	key    string
	path   string
}

func collectDroppable(props *dsl.Object, value *dsl.Object, prefix string, out *[]droppable) {
	join := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	for k, s := range props.All() {
		node := s.(*dsl.Object)
		v, present := value.Get(k)
		if !present {
			continue
		}
		if req, _ := node.Get("required"); req == true {
			*out = append(*out, droppable{value, k, join(k)})
		}
		collectNode(node, v, join(k), out)
	}
}

func collectNode(node *dsl.Object, v any, path string, out *[]droppable) {
	if node.Has("oneOf") || node.Has("const") || node.Has("enum") {
		return
	}
	switch typ, _ := node.Get("type"); typ {
	case "object":
		props, ok := node.Get("properties")
		o, isObj := v.(*dsl.Object)
		if ok && isObj {
			collectDroppable(props.(*dsl.Object), o, path, out)
		}
	case "array":
		items, ok := node.Get("items")
		a, isArr := v.([]any)
		if ok && isArr {
			for i, e := range a {
				collectNode(items.(*dsl.Object), e, path+"["+strconv.Itoa(i)+"]", out)
			}
		}
	}
}

func TestPropertyBasedParameterSpecs(t *testing.T) {
	g := &specGen{r: rand.New(rand.NewPCG(131, 2024))}
	nonObjects := []any{nil, true, false, 0.5, 0.0, "s", "", []any{}, []any{cobj("a", 1.0)}, dsl.Undefined{}, func() {}, math.Inf(1)}
	const runs = 400
	dropped := 0
	for i := range runs {
		params := g.params(3)
		name := fmt.Sprintf("spec %d", i)
		compiled, err := dsl.CompileParameterSpec(params)
		if err != nil {
			t.Errorf("%s: compile failed for a valid spec %s: %v", name, render(params), err)
			continue
		}
		if problems := checkRequired(name+" parameters", params, compiled, nil); len(problems) > 0 {
			t.Errorf("%s\nspec     %s\ncompiled %s", strings.Join(problems, "\n"), render(params), render(compiled))
			return
		}
		s, err := dsl.Compile(compiled)
		if err != nil {
			t.Errorf("%s: Compile of the compiled spec failed: %v", name, err)
			continue
		}
		for range 4 {
			args := g.object(params, true)
			if got := s.ValidateArgs(args); got != nil {
				t.Errorf("%s: generated valid args %s rejected: %q\nspec %s", name, render(args), got, render(params))
				return
			}
			if got, err := dsl.ValidateArgs(params, args); err != nil || got != nil {
				t.Errorf("%s: dsl.ValidateArgs(%s) = %q, %v", name, render(args), got, err)
			}
			var drops []droppable
			collectDroppable(params, args, "", &drops)
			for _, d := range drops {
				v, _ := d.holder.Get(d.key)
				d.holder.Delete(d.key)
				want := []string{`missing required property "` + d.path + `"`}
				if got := s.ValidateArgs(args); !slices.Equal(got, want) {
					t.Errorf("%s: dropping %q from %s gave %q; want %q", name, d.path, render(args), got, want)
				}
				d.holder.Set(d.key, v)
				dropped++
			}
		}
		for _, v := range nonObjects {
			if got := s.ValidateArgs(v); !slices.Equal(got, []string{`"arguments" must be an object`}) {
				t.Errorf("%s: non-object arguments %s gave %q", name, render(v), got)
			}
		}
		// validateArgs never throws, whatever the input.
		for range 4 {
			junk := g.json(3)
			if o, ok := junk.(*dsl.Object); ok && g.coin(0.5) {
				o.Set("f", func() {})
			}
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: ValidateArgs(%s) panicked: %v", name, render(junk), r)
					}
				}()
				s.ValidateArgs(junk)
				s.Validate(junk)
			}()
		}
	}
	if dropped < 100 {
		t.Errorf("only %d required keys were dropped; the generator is too weak", dropped)
	}
	t.Logf("%d specs, %d required-key drops checked", runs, dropped)
}
