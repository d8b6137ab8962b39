package ptc

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// FuzzSchemaToLua checks over JSON-decoded schemas that schemaToLua never
// panics, is deterministic, writes its type on one line and its classes as
// ---@class then ---@field lines (and, outside the subset, its named types
// as one ---@alias line), each name declared once, and that LuaSDK over the
// schema is a fence of annotation and declaration lines only.
func FuzzSchemaToLua(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `7`, `"x"`, `[]`,
		`{"type":"string","enum":["a","b|c","\n"],"const":"a"}`,
		`{"oneOf":[{"type":"string"},{"type":"null"}]}`,
		`{"type":"array","items":{"type":"string","enum":["x","y"]}}`,
		`{"type":"object","properties":{"a b":{"type":"integer","description":"x\n@y"}},"required":["a b"]}`,
		`{"type":"object","additionalProperties":false,"properties":{"end":{"type":"object","properties":{"z":{}}}}}`,
		`{"oneOf":[{"type":"object","additionalProperties":false},{"type":"array","items":{"type":"object","properties":{"":{}}}}]}`,
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
		got, classes := schemaToLua(schema, "T", newLuaNamer())
		again, againClasses := schemaToLua(schema, "T", newLuaNamer())
		if again != got || strings.Join(againClasses, "\n\n") != strings.Join(classes, "\n\n") {
			t.Fatalf("not deterministic: %q %q then %q %q", got, classes, again, againClasses)
		}
		if got == "" || strings.ContainsAny(got, "\n\r") {
			t.Fatalf("type %q is not one line", got)
		}
		names := map[string]bool{}
		for _, c := range classes {
			lines := strings.Split(c, "\n")
			name, ok := strings.CutPrefix(lines[0], "---@class ")
			if !ok {
				alias, isAlias := strings.CutPrefix(c, "---@alias ")
				if !isAlias || strings.ContainsAny(alias, "\n\r") {
					t.Fatalf("declaration without its head: %q", c)
				}
				name, _, _ = strings.Cut(alias, " ")
			}
			name, _, _ = strings.Cut(name, ": table<string, ")
			if names[name] || !luaIsName(name) {
				t.Fatalf("class name %q is repeated or not a name", name)
			}
			names[name] = true
			for _, line := range lines[1:] {
				if !strings.HasPrefix(line, "---@field ") || strings.ContainsAny(line, "\r\u0085\u2028\u2029") {
					t.Fatalf("class %q has the line %q", name, line)
				}
			}
		}
		sdk := LuaSDK([]SDKTool{{Name: "t", Parameters: schema, Output: schema}})
		body := sdk[strings.Index(sdk, "```lua\n")+len("```lua\n") : len(sdk)-len("\n```")]
		for _, line := range strings.Split(body, "\n") {
			switch {
			case line == "", strings.HasPrefix(line, "---"), strings.HasPrefix(line, "function "),
				line == "null = nil", line == "ToolCallError = {}", line == "tools = {}":
			default:
				t.Fatalf("unexpected line %q in the fence", line)
			}
		}
		if !strings.Contains(sdk, "\n---@param args ") {
			t.Fatalf("malformed SDK:\n%s", sdk)
		}
	})
}
