package ptc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// Schemas outside dsh's subset (an imported MCP server's full JSON Schema)
// render node by node: see doc.go, "Schemas outside the subset".

func TestSchemaToTSOutsideTheSubset(t *testing.T) {
	selfRef := map[string]any{"type": "array"}
	selfRef["items"] = selfRef
	cases := []struct {
		name   string
		schema any
		want   string
	}{
		// rows that §1.8 degrades whole, now node by node
		{"a oneOf with one branch is that branch", sdkJS(t, `{"oneOf":[{"type":"string"}]}`), "string"},
		{"a $ref that names no $defs entry is unknown in its property only", sdkJS(t, `{"type":"object","properties":{"bad":{"$ref":"x"}},"required":["bad"]}`),
			"{\n  bad: unknown;\n} & Record<string, JsonValue>"},
		{"an enum is its literals whatever the type says", sdkJS(t, `{"type":"string","enum":[1,2]}`), "1 | 2"},
		{"required naming a non-string is ignored", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":[7,"a"]}`),
			"{\n  a: string;\n} & Record<string, JsonValue>"},
		{"a property that is not a schema is unknown", sdkJS(t, `{"type":"object","properties":{"weird":42,"ok":true,"no":false}}`),
			"{\n  weird?: unknown;\n  ok?: JsonValue;\n  no?: never;\n} & Record<string, JsonValue>"},
		{"required naming an undeclared property is ignored", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`),
			"{\n  a?: string;\n} & Record<string, JsonValue>"},
		{"a type array is a union", sdkJS(t, `{"type":["string","null"]}`), "string | null"},
		{"a type array with integer and object", sdkJS(t, `{"type":["integer","object"],"properties":{"n":{"type":"number"}}}`),
			"number | {\n  n?: number;\n} & Record<string, JsonValue>"},
		{"an unknown type in a type array makes the node unknown", sdkJS(t, `{"type":["string","date"]}`), "unknown"},
		{"type beside oneOf is their intersection", sdkJS(t, `{"type":"string","oneOf":[{"type":"string"},{"type":"null"}]}`), "string & (string | null)"},
		{"items on an object are ignored", sdkJS(t, `{"type":"object","items":{}}`), "Record<string, JsonValue>"},
		{"const wins over enum", sdkJS(t, `{"type":"string","enum":["a"],"const":"b"}`), `"b"`},
		{"a non-integral integer const is its literal", sdkJS(t, `{"type":"integer","const":1.5}`), "1.5"},
		{"an object const is unknown", sdkJS(t, `{"const":{"a":1}}`), "unknown"},
		{"an enum with an array member is unknown", sdkJS(t, `{"enum":["a",[1]]}`), "unknown"},
		{"an empty additionalProperties schema is an index of JsonValue", sdkJS(t, `{"type":"object","additionalProperties":{}}`), "Record<string, JsonValue>"},
		{"a validation keyword five levels down is ignored", sdkJS(t, `{"type":"array","items":{"type":"array","items":{"oneOf":[{"type":"null"},{"type":"array","items":{"type":"string","minLength":1}}]}}}`),
			"((null | string[])[])[]"},
		{"a non-string description is no comment", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string","description":7}}}`),
			"{\n  a?: string;\n} & Record<string, JsonValue>"},
		{"a Go value inside itself is unknown where it recurs", selfRef, "unknown[]"},

		// what real servers send
		{"annotations and validation keywords are ignored", sdkJS(t, `{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"urn:x","title":"T","type":"number","minimum":1,"exclusiveMaximum":10,"multipleOf":1,"default":3,"examples":[4],"deprecated":true,"readOnly":true,"$comment":"c"}`), "number"},
		{"string formats and patterns are string", sdkJS(t, `{"type":"string","format":"uri","pattern":"^h","minLength":1,"maxLength":9}`), "string"},
		{"minItems and uniqueItems keep the array", sdkJS(t, `{"type":"array","items":{"type":"integer"},"minItems":1,"uniqueItems":true}`), "number[]"},
		{"an array without items", sdkJS(t, `{"type":"array","maxItems":3}`), "JsonValue[]"},
		{"a draft-07 tuple is unknown[]", sdkJS(t, `{"type":"array","items":[{"type":"string"},{"type":"number"}]}`), "unknown[]"},
		{"anyOf is a union", sdkJS(t, `{"anyOf":[{"type":"string"},{"type":"number"}]}`), "string | number"},
		{"anyOf with a null branch (pydantic Optional)", sdkJS(t, `{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Cursor"}`), "string | null"},
		{"anyOf with an unconstrained branch keeps JsonValue as oneOf does", sdkJS(t, `{"anyOf":[{},{"type":"string"}]}`), "JsonValue | string"},
		{"a oneOf none of whose branches constrains is written as §1.8 writes it", sdkJS(t, `{"oneOf":[{},{"title":"x"}],"default":1}`), "JsonValue | JsonValue"},
		{"anyOf of required lists adds no type", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`),
			"{\n  a?: string;\n  b?: string;\n} & Record<string, JsonValue>"},
		{"an enum of mixed literals", sdkJS(t, `{"enum":["a",1,true,null]}`), `"a" | 1 | true | null`},
		{"nullable adds null", sdkJS(t, `{"type":"string","nullable":true}`), "string | null"},
		{"allOf of objects is an intersection", sdkJS(t, `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"}},"additionalProperties":false}]}`),
			"({\n  a: string;\n} & Record<string, JsonValue>) & {\n  b?: number;\n}"},
		{"allOf of one schema is that schema", sdkJS(t, `{"allOf":[{"type":"boolean"}]}`), "boolean"},
		{"properties without type make an object", sdkJS(t, `{"properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`),
			"{\n  a: string;\n}"},
		{"additionalProperties schema without properties is an index signature", sdkJS(t, `{"type":"object","additionalProperties":{"type":"number"},"propertyNames":{"pattern":"^[a-z]+$"}}`),
			"{ [key: string]: number }"},
		{"additionalProperties schema with properties gives both", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"array","items":{"type":"string"}}}`),
			"{\n  a?: string;\n} & { [key: string]: string[] }"},
		{"an object additionalProperties nests one level in", sdkJS(t, `{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"number"}},"additionalProperties":false}}`),
			"{ [key: string]: {\n    x?: number;\n  } }"},
		{"patternProperties leave the object open", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^x":{"type":"number"}},"additionalProperties":false}`),
			"{\n  a?: string;\n} & Record<string, JsonValue>"},
		{"a false schema is never", false, "never"},
		{"a true schema is JsonValue", true, "JsonValue"},
		{"an unknown type is unknown", sdkJS(t, `{"type":"date"}`), "unknown"},
		{"an empty anyOf is unknown", sdkJS(t, `{"anyOf":[]}`), "unknown"},
		{"an unknown branch makes the union unknown", sdkJS(t, `{"oneOf":[{"type":"string"},{"type":"date"}]}`), "unknown"},
		{"not, if, then and else are ignored", sdkJS(t, `{"type":"string","not":{"const":"x"},"if":{"minLength":2},"then":{"maxLength":3},"else":{}}`), "string"},
		{"a description with a comment closer in a property stays in its comment", sdkJS(t, `{"properties":{"a":{"description":"x */ y","format":"date"}}}`),
			"{\n  /** x *\\/ y */\n  a?: JsonValue;\n} & Record<string, JsonValue>"},

		// references; SchemaToTS names them, the SDK declares them (below)
		{"a $ref to $defs is a named type", sdkJS(t, `{"type":"object","properties":{"p":{"$ref":"#/$defs/Point"}},"$defs":{"Point":{"type":"object"}}}`),
			"{\n  p?: T_Point;\n} & Record<string, JsonValue>"},
		{"a $ref to definitions is a named type", sdkJS(t, `{"$ref":"#/definitions/a-b~1c","definitions":{"a-b/c":{"type":"string"}}}`), "T_a_b_c"},
		{"a $ref to the root is unknown", sdkJS(t, `{"type":"object","properties":{"self":{"$ref":"#"}}}`),
			"{\n  self?: unknown;\n} & Record<string, JsonValue>"},
		{"a $ref to a nested path is unknown", sdkJS(t, `{"$ref":"#/$defs/A/properties/b","$defs":{"A":{"properties":{"b":{}}}}}`), "unknown"},
		{"a remote $ref is unknown", sdkJS(t, `{"$ref":"https://example.com/schema.json"}`), "unknown"},
		{"a $ref to a missing entry is unknown", sdkJS(t, `{"$ref":"#/$defs/Nope","$defs":{}}`), "unknown"},
		{"a cycle of entries that are only $refs is unknown", sdkJS(t, `{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}},"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`),
			"{\n  a?: unknown;\n} & Record<string, JsonValue>"},
		{"siblings of $ref are ignored", sdkJS(t, `{"$ref":"#/$defs/A","type":"number","$defs":{"A":{"type":"string"}}}`), "T_A"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SchemaToTS(c.schema); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestTypeScriptSDKDeclaresNamedTypesOnce(t *testing.T) {
	tree := sdkJS(t, `{"type":"object","properties":{"root":{"$ref":"#/$defs/Node"},"other":{"$ref":"#/$defs/Node"}},"required":["root"],
		"$defs":{"Node":{"type":"object","description":"A tree node.","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}},"meta":{"$ref":"#/$defs/Meta"}},"required":["name"],"additionalProperties":false},
		"Meta":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}}}`)
	cycle := sdkJS(t, `{"$ref":"#/definitions/A","definitions":{"A":{"$ref":"#/definitions/B"},"B":{"type":"array","items":{"$ref":"#/definitions/A"}}}}`)
	got := TypeScriptDeclarations([]SDKTool{
		{Name: "fs__tree", Parameters: tree, Output: cycle},
		{Name: "fs.tree", Parameters: tree},
	})
	want := sdkLines(
		tsJSONValue,
		"",
		"/** A tree node. */",
		"type FsTreeArgs_Node = {",
		"  name: string;",
		"  children?: FsTreeArgs_Node[];",
		"  meta?: FsTreeArgs_Meta;",
		"};",
		"",
		"type FsTreeArgs_Meta = FsTreeArgs_Node | null;",
		"",
		"/** A tree node. */",
		"type FsTreeArgs_Node_2 = {",
		"  name: string;",
		"  children?: FsTreeArgs_Node_2[];",
		"  meta?: FsTreeArgs_Meta_2;",
		"};",
		"",
		"type FsTreeArgs_Meta_2 = FsTreeArgs_Node_2 | null;",
		"",
		"type FsTreeResult_A = FsTreeResult_B;",
		"",
		"type FsTreeResult_B = FsTreeResult_A[];",
		"",
		"interface ToolArgsMap {",
		"  \"fs.tree\": {",
		"    root: FsTreeArgs_Node;",
		"    other?: FsTreeArgs_Node;",
		"  } & Record<string, JsonValue>;",
		"  fs__tree: {",
		"    root: FsTreeArgs_Node_2;",
		"    other?: FsTreeArgs_Node_2;",
		"  } & Record<string, JsonValue>;",
		"}",
		"",
		"interface ToolOutputMap {",
		"  \"fs.tree\": unknown;",
		"  fs__tree: FsTreeResult_A;",
		"}",
		"",
		tsDeclarationTail,
	)
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	reversed := TypeScriptDeclarations([]SDKTool{
		{Name: "fs.tree", Parameters: tree},
		{Name: "fs__tree", Parameters: tree, Output: cycle},
	})
	if reversed != got {
		t.Errorf("the input order changed the text:\n%s", reversed)
	}
}

func TestSchemaToLuaOutsideTheSubset(t *testing.T) {
	selfRef := map[string]any{"type": "array"}
	selfRef["items"] = selfRef
	cases := []struct {
		name    string
		schema  any
		want    string
		classes []string
	}{
		{"a oneOf with one branch is that branch", sdkJS(t, `{"oneOf":[{"type":"string"}]}`), "string", nil},
		{"a $ref that names no $defs entry is any in its field only", sdkJS(t, `{"type":"object","additionalProperties":false,"properties":{"ok":{"type":"object","additionalProperties":false},"bad":{"$ref":"x"}}}`),
			"T", []string{sdkLines("---@class T", "---@field ok? TOk", "---@field bad? any"), "---@class TOk"}},
		{"an enum is its literals", sdkJS(t, `{"type":"string","enum":[1,"a",null]}`), `1|"a"|JsonNull`, nil},
		{"a type array is a union", sdkJS(t, `{"type":["integer","null"]}`), "integer|JsonNull", nil},
		{"a validation keyword five levels down is ignored", sdkJS(t, `{"type":"array","items":{"type":"array","items":{"oneOf":[{"type":"null"},{"type":"array","items":{"type":"string","minLength":1}}]}}}`),
			"((JsonNull|string[])[])[]", nil},
		{"a Go value inside itself is any where it recurs", selfRef, "any[]", nil},
		{"annotations are ignored", sdkJS(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"number","minimum":1,"default":2,"description":"How many."}},"required":["n"]}`),
			"T", []string{sdkLines("---@class T: table<string, any>", "---@field n number How many.")}},
		{"anyOf is a union", sdkJS(t, `{"anyOf":[{"type":"string"},{"type":"null"}]}`), "string|JsonNull", nil},
		{"allOf of several schemas is any (LuaLS has no intersection)", sdkJS(t, `{"allOf":[{"type":"object","properties":{"a":{}}},{"type":"object","properties":{"b":{}}}]}`),
			"any", []string{sdkLines("---@class TPart1: table<string, any>", "---@field a? any"), sdkLines("---@class TPart2: table<string, any>", "---@field b? any")}},
		{"an additionalProperties schema extends table<string, T>", sdkJS(t, `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":{"type":"number"}}`),
			"T", []string{sdkLines("---@class T: table<string, number>", "---@field a? string")}},
		{"an additionalProperties schema without properties is table<string, T>", sdkJS(t, `{"type":"object","additionalProperties":{"type":"array","items":{"type":"string"}}}`),
			"table<string, string[]>", nil},
		{"a $ref to an object $defs entry is its class", sdkJS(t, `{"type":"array","items":{"$ref":"#/$defs/Node"},"$defs":{"Node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"additionalProperties":false}}}`),
			"T_Node[]", []string{sdkLines("---@class T_Node", "---@field kids? T_Node[]")}},
		{"a $ref to another $defs entry is an alias", sdkJS(t, `{"$ref":"#/$defs/Id","$defs":{"Id":{"type":["string","integer"]}}}`),
			"T_Id", []string{"---@alias T_Id string|integer"}},
		{"a $ref cycle is named, not followed", sdkJS(t, `{"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"oneOf":[{"$ref":"#/$defs/A"},{"type":"null"}]}}}`),
			"T_A", []string{"---@alias T_A T_B", "---@alias T_B T_A|JsonNull"}},
		{"a cycle of entries that are only $refs is any", sdkJS(t, `{"$ref":"#/$defs/A","$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}}}`), "any", nil},
		{"a false schema is nil", false, "nil", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, classes := schemaToLua(c.schema, "T", newLuaNamer())
			if got != c.want || strings.Join(classes, "\n\n") != strings.Join(c.classes, "\n\n") {
				t.Errorf("got %q with\n%s\nwant %q with\n%s", got, strings.Join(classes, "\n\n"), c.want, strings.Join(c.classes, "\n\n"))
			}
		})
	}
}

// sdkServerTools reads a tools/list result saved from a real MCP server
// (testdata/sdk_full/server-*.json) as the SDK's tools, each named as an
// import named prefix serves it.
func sdkServerTools(t testing.TB, file, prefix string) []SDKTool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sdk_full", file))
	if err != nil {
		t.Fatal(err)
	}
	v, err := dsl.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	var tools []SDKTool
	for _, x := range v.([]any) {
		o := x.(*dsl.Object)
		name, _ := o.Get("name")
		desc, _ := o.Get("description")
		in, _ := o.Get("inputSchema")
		out, _ := o.Get("outputSchema")
		d, _ := desc.(string)
		tools = append(tools, SDKTool{Name: prefix + "__" + name.(string), Description: d, Parameters: in, Output: out})
	}
	return tools
}

// TestRealServersRender pins the SDKs of three real servers' tools/list
// (@modelcontextprotocol/server-filesystem, server-everything and
// server-memory, saved in testdata/sdk_full): every schema declares
// "$schema" and most "default", "minimum", "format" or "minItems", which
// §1.8 would render unknown; each renders whole, byte for byte as the
// .d.ts and .lua files beside them say.
func TestRealServersRender(t *testing.T) {
	for _, s := range []struct{ file, prefix, golden string }{
		{"server-filesystem.json", "fs", "server-filesystem"},
		{"server-everything.json", "everything", "server-everything"},
		{"server-memory.json", "memory", "server-memory"},
	} {
		tools := sdkServerTools(t, s.file, s.prefix)
		for _, tool := range tools {
			if dsl.AssertSupported(tool.Parameters) == nil {
				t.Errorf("%s: %s's parameters are inside the subset: the case tests nothing", s.file, tool.Name)
			}
		}
		for _, lang := range []struct {
			ext    string
			render func([]SDKTool) string
		}{{".d.ts", TypeScriptDeclarations}, {".lua", LuaDeclarations}} {
			t.Run(s.golden+lang.ext+" renders every tool", func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join("testdata", "sdk_full", s.golden+lang.ext))
				if err != nil {
					t.Fatal(err)
				}
				got := lang.render(tools) + "\n"
				if got != string(want) {
					t.Errorf("got:\n%s", got)
				}
				for _, tool := range tools {
					key := tsKeyOrQuoted(tool.Name) + ": unknown;"
					if lang.ext == ".d.ts" && tool.Output == nil {
						continue // no output schema: unknown, as §1.8 says
					}
					if strings.Contains(got, "\n  "+key) {
						t.Errorf("%s renders unknown", tool.Name)
					}
				}
			})
		}
	}
}

func TestHostileSchemasOutsideTheSubset(t *testing.T) {
	// 200,000 nested anyOf: past the node bound, the schema is unknown.
	deep := strings.Repeat(`{"anyOf":[`, 200_000) + `{"type":"string"}` + strings.Repeat(`]}`, 200_000)
	deepObjects := `{"$schema":"x",` + strings.Repeat(`"type":"object","properties":{"a":{`, 5_000) + `"type":"string"` + strings.Repeat(`}}`, 5_000) + `}`
	// 50 $defs each referring twice to the next: named once each, not
	// expanded 2^50 times.
	var defs strings.Builder
	for i := range 50 {
		if i > 0 {
			defs.WriteString(",")
		}
		next := `{"type":"null"}`
		if i < 49 {
			n := `"#/$defs/D` + string(rune('A'+(i+1)/26)) + string(rune('a'+(i+1)%26)) + `"`
			next = `{"type":"object","properties":{"l":{"$ref":` + n + `},"r":{"$ref":` + n + `}}}`
		}
		defs.WriteString(`"D` + string(rune('A'+i/26)) + string(rune('a'+i%26)) + `":` + next)
	}
	fanout := `{"$ref":"#/$defs/DAa","$defs":{` + defs.String() + `}}`
	var props strings.Builder
	for i := range 2_000 {
		if i > 0 {
			props.WriteString(",")
		}
		fmt.Fprintf(&props, `"p%04d":{"type":"string","format":"x","description":"%s"}`, i, strings.Repeat("y", 40))
	}
	big := `{"type":"object","properties":{` + props.String() + `}}`

	// 100,000 entries, each only a $ref to the next: the chain is walked
	// within the node bound.
	var chain strings.Builder
	chain.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range 100_000 {
		fmt.Fprintf(&chain, `"d%d":{"$ref":"#/$defs/d%d"},`, i, i+1)
	}
	chain.WriteString(`"d100000":{"type":"string"}}}`)

	shared := map[string]any{"type": "null"}
	for range 60 {
		shared = map[string]any{"anyOf": []any{shared, shared}}
	}

	cases := []struct {
		name   string
		schema any
		ts     string
		lua    string
	}{
		{"200,000 nested anyOf passes the node bound and is unknown", sdkJS(t, deep), "unknown", "any"},
		{"5,000 nested objects pass the size bound and are unknown", sdkJS(t, deepObjects), "unknown", "any"},
		{"2,000 described properties pass the size bound and are unknown", sdkJS(t, big), "unknown", "any"},
		{"a Go map shared 2^60 times passes the node bound and is unknown", shared, "unknown", "any"},
		{"a chain of 100,000 $refs passes the node bound and is unknown", sdkJS(t, chain.String()), "unknown", "any"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SchemaToTS(c.schema); got != c.ts {
				t.Errorf("TypeScript: got %.200q, want %q", got, c.ts)
			}
			namer := newLuaNamer()
			got, classes := schemaToLua(c.schema, "T", namer)
			if got != c.lua || len(classes) != 0 {
				t.Errorf("Lua: got %.200q with %d classes, want %q and none", got, len(classes), c.lua)
			}
			if name := namer.claim("T"); name != "T" {
				t.Errorf("the degraded schema kept a class name: T is now %q", name)
			}
		})
	}
	t.Run("50 $defs each referring twice to the next are declared once each", func(t *testing.T) {
		typ, decls := tsSchema(sdkJS(t, fanout), 0, "T", newLuaNamer())
		if typ != "T_DAa" || len(decls) != 50 {
			t.Fatalf("got %q with %d declarations", typ, len(decls))
		}
		if decls[49] != "type T_DBx = null;" {
			t.Errorf("last declaration %q", decls[49])
		}
		lua, classes := schemaToLua(sdkJS(t, fanout), "T", newLuaNamer())
		if lua != "T_DAa" || len(classes) != 50 || classes[49] != "---@alias T_DBx JsonNull" {
			t.Errorf("Lua: got %q with %d declarations", lua, len(classes))
		}
	})
}

// FuzzFullSchema checks the renderer of schemas outside the subset over
// JSON-decoded schemas, in both languages: it never panics, is
// deterministic, stays within its bounds, writes a Lua type on one line and
// TypeScript declarations as "type N = …;", and on a schema inside the
// subset writes exactly what §1.8's renderer writes.
func FuzzFullSchema(f *testing.F) {
	for _, seed := range []string{
		`{}`, `true`, `false`, `null`, `[]`,
		`{"type":["string","null"],"minLength":1}`,
		`{"anyOf":[{"$ref":"#/$defs/A"},{"type":"null"}],"$defs":{"A":{"type":"object","properties":{"a":{"$ref":"#/$defs/A"}}}}}`,
		`{"allOf":[{"type":"object","properties":{"a":{}}},{"properties":{"b":{"type":"integer"}},"additionalProperties":{"type":"string"}}]}`,
		`{"$ref":"#/definitions/x~0y","definitions":{"x~y":{"enum":["a",1,null],"nullable":true}}}`,
		`{"type":"object","properties":{"a b":{"description":"x */ y","const":"*/"}},"patternProperties":{"^a":{}}}`,
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
		supported := dsl.AssertSupported(schema) == nil
		for _, lang := range []fullLang{fullTS, fullLua} {
			typ, decls, ok := newFullRenderer(lang, schema, "T", newLuaNamer()).renderAll(schema, 1)
			typ2, decls2, ok2 := newFullRenderer(lang, schema, "T", newLuaNamer()).renderAll(schema, 1)
			if typ != typ2 || ok != ok2 || strings.Join(decls, "\x00") != strings.Join(decls2, "\x00") {
				t.Fatalf("not deterministic: %q then %q", typ, typ2)
			}
			if !ok {
				continue
			}
			size := len(typ)
			for _, d := range decls {
				size += len(d)
				switch {
				case lang == fullTS && !strings.HasPrefix(d, "type ") && !strings.HasPrefix(d, "/** "):
					t.Fatalf("TypeScript declaration %q", d)
				case lang == fullTS && !strings.HasSuffix(d, ";"):
					t.Fatalf("unterminated TypeScript declaration %q", d)
				case lang == fullLua && !strings.HasPrefix(d, "---@class ") && !strings.HasPrefix(d, "---@alias "):
					t.Fatalf("Lua declaration %q", d)
				}
			}
			if size > fullMaxBytes {
				t.Fatalf("%d bytes rendered", size)
			}
			if lang == fullLua && strings.ContainsAny(typ, "\n\r") {
				t.Fatalf("Lua type %q is not one line", typ)
			}
			if !supported {
				continue
			}
			if lang == fullTS {
				if want := schemaToTS(schema, 1); typ != want || len(decls) != 0 {
					t.Fatalf("inside the subset: got %q, §1.8 gives %q", typ, want)
				}
			} else {
				want, classes := schemaToLua(schema, "T", newLuaNamer())
				if typ != want || strings.Join(decls, "\n\n") != strings.Join(classes, "\n\n") {
					t.Fatalf("inside the subset: got %q %q, §1.8 gives %q %q", typ, decls, want, classes)
				}
			}
		}
	})
}
