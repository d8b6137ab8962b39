package dsl_test

// Raw subset conformance (§4.4, cases 112–119): assertSupportedJsonSchema
// collects every violation in walk order. Data cases live in
// testdata/conformance/assert_*.txtar; this file holds what text cannot
// express (cycles, shared nodes, depth, error shape).

import (
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

func TestAssertSupportedConformance(t *testing.T) {
	runConformance(t, "assert_*.txtar")
}

func TestJsonSchemaErrorShape(t *testing.T) {
	schema := mustJS(t, `{"type":"object","properties":{"a":{"type":"bogus"}},"required":["b"]}`)
	err := dsl.AssertSupported(schema)
	var se *dsl.JsonSchemaError
	if !errors.As(err, &se) {
		t.Fatalf("AssertSupported error %v (%T); want *dsl.JsonSchemaError", err, err)
	}
	a := "schema.properties.a.type must be one of object/array/string/number/integer/boolean/null"
	b := `schema.required names "b" which is not in properties`
	t.Run("violations are listed in walk order", func(t *testing.T) {
		if len(se.Violations) != 2 || se.Violations[0] != a || se.Violations[1] != b {
			t.Errorf("violations %q; want %q", se.Violations, []string{a, b})
		}
	})
	t.Run("the message joins the violations with semicolons", func(t *testing.T) {
		if want := "unsupported JSON schema: " + a + "; " + b; se.Error() != want {
			t.Errorf("Error() = %q\nwant      %q", se.Error(), want)
		}
	})
	t.Run("the name is JsonSchemaError", func(t *testing.T) {
		if se.Name() != "JsonSchemaError" {
			t.Errorf("Name() = %q", se.Name())
		}
	})
	t.Run("the code is UNSUPPORTED_SCHEMA", func(t *testing.T) {
		if se.Code() != "UNSUPPORTED_SCHEMA" {
			t.Errorf("Code() = %q", se.Code())
		}
	})
	t.Run("a literal error formats the same way", func(t *testing.T) {
		e := &dsl.JsonSchemaError{Violations: []string{"a", "b"}}
		if e.Error() != "unsupported JSON schema: a; b" {
			t.Errorf("Error() = %q; want %q", e.Error(), "unsupported JSON schema: a; b")
		}
	})
	t.Run("Compile returns the same violations", func(t *testing.T) {
		s, err := dsl.Compile(schema)
		if s != nil {
			t.Errorf("Compile returned a schema for an unsupported one")
		}
		wantSchemaError(t, err, []string{a, b})
	})
	t.Run("ValidateValue returns the same violations as an error", func(t *testing.T) {
		got, err := dsl.ValidateValue(schema, "x")
		if got != nil {
			t.Errorf("ValidateValue returned violations %q beside the error", got)
		}
		wantSchemaError(t, err, []string{a, b})
	})
	t.Run("an accepted schema gives a nil error", func(t *testing.T) {
		if err := dsl.AssertSupported(mustJS(t, `{"type":"string"}`)); err != nil {
			t.Errorf("AssertSupported = %v (%T); want nil", err, err)
		}
		if err := dsl.AssertObjectSchema(mustJS(t, `{"type":"object"}`)); err != nil {
			t.Errorf("AssertObjectSchema = %v (%T); want nil", err, err)
		}
	})
}

func TestAssertCircularAndSharedNodes(t *testing.T) {
	t.Run("items that are the node itself are circular", func(t *testing.T) {
		s := cobj("type", "array")
		s.Set("items", s)
		wantSchemaError(t, dsl.AssertSupported(s), []string{"schema.items is circular"})
	})
	t.Run("a property that is an ancestor is circular", func(t *testing.T) {
		root := cobj("type", "object")
		inner := cobj("type", "object")
		root.Set("properties", cobj("inner", inner))
		inner.Set("properties", cobj("back", root, "ok", cobj("type", "string")))
		wantSchemaError(t, dsl.AssertSupported(root), []string{"schema.properties.inner.properties.back is circular"})
	})
	t.Run("a oneOf branch that is the node is circular", func(t *testing.T) {
		s := cobj()
		s.Set("oneOf", arr(s, cobj("type", "null")))
		wantSchemaError(t, dsl.AssertSupported(s), []string{"schema.oneOf[0] is circular"})
	})
	t.Run("walking goes on after a circular node", func(t *testing.T) {
		s := cobj("type", "object")
		s.Set("properties", cobj("self", s, "bad", cobj("type", "tuple")))
		wantSchemaError(t, dsl.AssertSupported(s), []string{
			"schema.properties.self is circular",
			"schema.properties.bad.type must be one of object/array/string/number/integer/boolean/null",
		})
	})
	t.Run("one node reused by siblings is not circular", func(t *testing.T) {
		shared := cobj("type", "string")
		s := cobj("type", "object", "properties", cobj("a", shared, "b", shared),
			"additionalProperties", false)
		if err := dsl.AssertSupported(s); err != nil {
			t.Errorf("sibling reuse rejected: %v", err)
		}
		branches := cobj("oneOf", arr(shared, cobj("type", "array", "items", shared)))
		if err := dsl.AssertSupported(branches); err != nil {
			t.Errorf("reuse across oneOf branches rejected: %v", err)
		}
	})
	t.Run("a reused bad node is reported at every place it appears", func(t *testing.T) {
		bad := cobj("type", "tuple")
		s := cobj("type", "object", "properties", cobj("a", bad, "b", bad))
		wantSchemaError(t, dsl.AssertSupported(s), []string{
			"schema.properties.a.type must be one of object/array/string/number/integer/boolean/null",
			"schema.properties.b.type must be one of object/array/string/number/integer/boolean/null",
		})
	})
	t.Run("a cyclic default annotation is not lossless", func(t *testing.T) {
		d := cobj()
		d.Set("d", d)
		wantSchemaError(t, dsl.AssertSupported(cobj("type", "object", "default", d)),
			[]string{"schema.default annotation must be lossless JSON data"})
	})
	t.Run("a shared non-cyclic annotation value is lossless", func(t *testing.T) {
		v := cobj("x", 1.0)
		if err := dsl.AssertSupported(cobj("type", "object", "default", arr(v, v), "examples", arr(v))); err != nil {
			t.Errorf("shared annotation value rejected: %v", err)
		}
	})
	t.Run("a property whose schema is the object itself is circular", func(t *testing.T) {
		props := cobj()
		node := cobj("type", "object", "properties", props)
		props.Set("p", node)
		wantSchemaError(t, dsl.AssertSupported(node), []string{"schema.properties.p is circular"})
	})
}

func TestAssertDeepSchemas(t *testing.T) {
	const depth = 5000
	t.Run("a 5000-deep raw oneOf asserts fine (112)", func(t *testing.T) {
		var s any = cobj("type", "string")
		for range depth {
			s = cobj("oneOf", arr(s, cobj("type", "null")))
		}
		if err := dsl.AssertSupported(s); err != nil {
			t.Errorf("deep oneOf: %v", err)
		}
	})
	t.Run("5000 levels of properties assert fine", func(t *testing.T) {
		var s any = cobj("type", "string")
		for range depth {
			s = cobj("type", "object", "properties", cobj("a", s), "required", arr("a"))
		}
		if err := dsl.AssertSupported(s); err != nil {
			t.Errorf("deep properties: %v", err)
		}
	})
	t.Run("a violation 5000 levels down carries the full path", func(t *testing.T) {
		var s any = cobj("type", "tuple")
		for range depth {
			s = cobj("type", "array", "items", s)
		}
		want := "schema" + strings.Repeat(".items", depth) + ".type must be one of object/array/string/number/integer/boolean/null"
		wantSchemaError(t, dsl.AssertSupported(s), []string{want})
	})
	t.Run("a 5000-deep cycle-free chain with a cycle at the bottom is circular", func(t *testing.T) {
		root := cobj("type", "array")
		cur := root
		for range depth {
			next := cobj("type", "array")
			cur.Set("items", next)
			cur = next
		}
		cur.Set("items", root)
		want := "schema" + strings.Repeat(".items", depth+1) + " is circular"
		wantSchemaError(t, dsl.AssertSupported(root), []string{want})
	})
}
