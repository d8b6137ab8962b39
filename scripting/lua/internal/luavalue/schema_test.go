package luavalue

import (
	"testing"
)

func TestToGoLetsTheSchemaDecideEmptyTables(t *testing.T) {
	e := newEnv(t, Limits{})
	for _, tc := range []struct {
		name, src, schema, want string
	}{
		{"no schema makes an object", `{}`, ``, `{}`},
		{"type array makes an array", `{}`, `{"type":"array"}`, `[]`},
		{"type object makes an object", `{}`, `{"type":"object"}`, `{}`},
		{"a scalar type leaves an object", `{}`, `{"type":"string"}`, `{}`},
		{"an annotation-only schema leaves an object", `{}`, `{"description":"anything"}`, `{}`},
		{"a type list with array and not object makes an array", `{}`, `{"type":["array","null"]}`, `[]`},
		{"a type list with both leaves an object", `{}`, `{"type":["array","object"]}`, `{}`},
		{"oneOf with an array branch and no object branch makes an array", `{}`, `{"oneOf":[{"type":"array"},{"type":"null"}]}`, `[]`},
		{"oneOf with both leaves an object", `{}`, `{"oneOf":[{"type":"array"},{"type":"object"}]}`, `{}`},
		{"nested oneOf is followed", `{}`, `{"oneOf":[{"oneOf":[{"type":"array"},{"type":"string"}]},{"type":"null"}]}`, `[]`},
		{"properties are followed", `{tags={}, meta={}}`, `{"type":"object","properties":{"tags":{"type":"array"},"meta":{"type":"object"}}}`, `{"meta":{},"tags":[]}`},
		{"additionalProperties schemas are followed", `{x={}}`, `{"type":"object","additionalProperties":{"type":"array"}}`, `{"x":[]}`},
		{"a declared property wins over additionalProperties", `{x={}, y={}}`, `{"type":"object","properties":{"x":{"type":"object"}},"additionalProperties":{"type":"array"}}`, `{"x":{},"y":[]}`},
		{"items are followed", `{{}, {}}`, `{"type":"array","items":{"type":"array"}}`, `[[],[]]`},
		{"deep paths are followed", `{a={{b={}}}}`, `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"array"}}}}}}`, `{"a":[{"b":[]}]}`},
		{"oneOf narrows to the branch that fits the table", `{a={}}`, `{"oneOf":[{"type":"object","properties":{"a":{"type":"array"}}},{"type":"string"}]}`, `{"a":[]}`},
		{"oneOf with two fitting branches gives no guidance below", `{a={}}`, `{"oneOf":[{"type":"object","properties":{"a":{"type":"array"}}},{"type":"object"}]}`, `{"a":{}}`},
		{"a mark beats the schema", `object{}`, `{"type":"array"}`, `{}`},
		{"an array mark beats the schema", `array{}`, `{"type":"object"}`, `[]`},
		{"the schema does not change non-empty tables", `{x=1}`, `{"type":"array"}`, `{"x":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var schema any
			if tc.schema != "" {
				schema = mustParse(t, tc.schema)
			}
			got, err := e.toGo(tc.src, schema)
			if err != nil {
				t.Fatalf("ToGo: %v", err)
			}
			if s := mustJSON(t, got); s != tc.want {
				t.Fatalf("ToGo = %s, want %s", s, tc.want)
			}
		})
	}
}

func TestToGoReadsMapSchemasToo(t *testing.T) {
	e := newEnv(t, Limits{})
	schema := map[string]any{"type": "object", "properties": map[string]any{"list": map[string]any{"type": "array"}}}
	got, err := e.toGo(`{list={}}`, schema)
	if err != nil {
		t.Fatal(err)
	}
	if s := mustJSON(t, got); s != `{"list":[]}` {
		t.Fatalf("ToGo = %s", s)
	}
}

func TestToGoSurvivesACyclicSchema(t *testing.T) {
	e := newEnv(t, Limits{})
	// A schema built in Go can refer to itself; ToGo must neither loop nor crash.
	s := map[string]any{}
	s["oneOf"] = []any{s, s}
	got, err := e.toGo(`{x={}}`, s)
	if err != nil {
		t.Fatal(err)
	}
	if j := mustJSON(t, got); j != `{"x":{}}` {
		t.Fatalf("ToGo = %s", j)
	}
}
