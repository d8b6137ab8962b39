package ptc

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// FuzzSchemaToTS checks over JSON-decoded schemas that SchemaToTS never
// panics, is deterministic, renders every schema inside the subset (one
// outside it renders node by node: FuzzFullSchema), and writes no comment
// closer outside a comment's end.
func FuzzSchemaToTS(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `7`, `"x"`, `[]`,
		`{"type":"string","enum":["a","b"],"const":"a"}`,
		`{"oneOf":[{"type":"string"},{"type":"null"}]}`,
		`{"type":"array","items":{"type":"string","enum":["x","y"]}}`,
		`{"type":"object","properties":{"a b":{"type":"integer","description":"x */ y"}},"required":["a b"]}`,
		`{"type":"object","additionalProperties":false,"properties":{"o":{"type":"object","properties":{"z":{}}}}}`,
		`{"type":"object","properties":{"bad":{"$ref":"x"}}}`,
	} {
		f.Add([]byte(seed))
	}
	for i, c := range sdkReadArray(f, "upstream_schemas.json") {
		if i%8 != 0 {
			continue
		}
		schema, _ := c.(*dsl.Object).Get("schema")
		if data, err := dsl.Marshal(schema); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		schema, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		got := SchemaToTS(schema)
		if again := SchemaToTS(schema); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		supported := dsl.AssertSupported(schema) == nil
		if supported && got == "unknown" {
			// Decoded text is valid UTF-8, so every property name has JSON text.
			t.Fatalf("supported schema %s rendered unknown", data)
		}
		for _, line := range strings.Split(got, "\n") {
			body := strings.TrimSuffix(strings.TrimLeft(line, " "), " */")
			if strings.HasPrefix(body, "/** ") && strings.Contains(body, "*/") {
				t.Fatalf("comment closer inside a doc line: %q", line)
			}
		}
		indented := schemaToTS(schema, 1)
		if strings.Count(indented, "\n") != strings.Count(got, "\n") {
			t.Fatalf("indent changed the line count: %q vs %q", got, indented)
		}
		// In the SDK, the named types a $ref declares are named after the tool.
		indented, _ = tsSchema(schema, 1, "TArgs", newLuaNamer())
		sdk := TypeScriptSDK([]SDKTool{{Name: "t", Parameters: schema, Output: schema}})
		if !strings.Contains(sdk, "  t: "+indented+";\n}") {
			t.Fatalf("SDK lacks the indented type %q", indented)
		}
	})
}
