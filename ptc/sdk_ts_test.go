package ptc

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// js decodes a JSON schema written in a test table.
func sdkJS(t testing.TB, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", text, err)
	}
	return v
}

func sdkLines(l ...string) string { return strings.Join(l, "\n") }

func TestSchemaToTS(t *testing.T) {
	cases := []struct {
		name   string
		schema string
		want   string
	}{
		// upstream: "maps every unified schema construct"
		{"a string is string", `{"type":"string"}`, "string"},
		{"a number is number", `{"type":"number"}`, "number"},
		{"an integer is number", `{"type":"integer"}`, "number"},
		{"a boolean is boolean", `{"type":"boolean"}`, "boolean"},
		{"a null is null", `{"type":"null"}`, "null"},
		{"a string enum joins its literals", `{"type":"string","enum":["a","b"]}`, `"a" | "b"`},
		{"a number enum joins its literals", `{"type":"number","enum":[1,2]}`, "1 | 2"},
		{"an integer const is its literal", `{"type":"integer","const":2}`, "2"},
		{"a boolean const is its literal", `{"type":"boolean","const":true}`, "true"},
		{"a null const is null", `{"type":"null","const":null}`, "null"},
		{"a const wins over an enum", `{"type":"string","enum":["a","b"],"const":"a"}`, `"a"`},
		{"a oneOf joins its branches without parentheses", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, "string | null"},
		{"an array of numbers is number[]", `{"type":"array","items":{"type":"number"}}`, "number[]"},
		{"an array of a union is parenthesized", `{"type":"array","items":{"type":"string","enum":["x","y"]}}`, `("x" | "y")[]`},
		{"an array without items is JsonValue[]", `{"type":"array"}`, "JsonValue[]"},
		{"an open object without properties is a JsonValue record", `{"type":"object"}`, "Record<string, JsonValue>"},
		{"a closed object without properties is a never record", `{"type":"object","additionalProperties":false}`, "Record<string, never>"},
		{"an open object with empty properties is a JsonValue record", `{"type":"object","properties":{}}`, "Record<string, JsonValue>"},
		{"a closed object with empty properties is a never record", `{"type":"object","properties":{},"additionalProperties":false}`, "Record<string, never>"},
		{"a closed object lists required and optional members",
			`{"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer"},"label":{"type":"string"}},"required":["id"]}`,
			sdkLines("{", "  id: number;", "  label?: string;", "}")},
		{"an empty schema is JsonValue", `{}`, "JsonValue"},
		{"an annotation-only schema is JsonValue", `{"description":"anything","title":"T","default":[1],"examples":[{"a":1}]}`, "JsonValue"},

		// beyond upstream's table
		{"an explicitly open object with properties is intersected with a record",
			`{"type":"object","additionalProperties":true,"properties":{"a":{"type":"string"}}}`,
			sdkLines("{", "  a?: string;", "} & Record<string, JsonValue>")},
		{"an array of an open object is parenthesized for its intersection",
			`{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}`,
			sdkLines("({", "  a?: string;", "} & Record<string, JsonValue>)[]")},
		{"an array of a closed object is not parenthesized",
			`{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}}}`,
			sdkLines("{", "  a?: string;", "}[]")},
		{"an array of a closed object whose member is a union is parenthesized",
			`{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"a":{"oneOf":[{"type":"string"},{"type":"null"}]}}}}`,
			sdkLines("({", "  a?: string | null;", "})[]")},
		{"an array whose item text has a pipe only in a description is parenthesized",
			`{"type":"array","items":{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string","description":"x | y"}}}}`,
			sdkLines("({", "  /** x | y */", "  a?: string;", "})[]")},
		{"an array whose item is a single-literal enum with a pipe is parenthesized",
			`{"type":"array","items":{"type":"string","enum":["a|b"]}}`, `("a|b")[]`},
		{"an array of arrays of a union parenthesizes every level",
			`{"type":"array","items":{"type":"array","items":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`,
			"((string | number)[])[]"},
		{"numbers are written as JavaScript writes them",
			`{"type":"number","enum":[0.1,1e21,1.5e-7,-5,123456789012]}`, "0.1 | 1e+21 | 1.5e-7 | -5 | 123456789012"},
		{"string literals are JSON-escaped",
			`{"type":"string","enum":["quote\"","new\nline","\u2028"]}`, `"quote\"" | "new\nline" | "` + "\u2028" + `"`},
		{"a nested object is indented two spaces per level",
			`{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":false,"properties":{"b":{"type":"object","additionalProperties":false,"properties":{"c":{"type":"null"}},"required":["c"]}}}}}`,
			sdkLines("{", "  a?: {", "    b?: {", "      c: null;", "    };", "  };", "}")},
		{"members keep declaration order",
			`{"type":"object","additionalProperties":false,"properties":{"z":{"type":"string"},"a":{"type":"string"},"m":{"type":"string"}}}`,
			sdkLines("{", "  z?: string;", "  a?: string;", "  m?: string;", "}")},
		{"a oneOf of objects keeps each object at the same indent",
			`{"oneOf":[{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}},{"type":"null"}]}`,
			sdkLines("{", "  a?: string;", "} | null")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SchemaToTS(sdkJS(t, c.schema)); got != c.want {
				t.Errorf("SchemaToTS(%s)\n got: %q\nwant: %q", c.schema, got, c.want)
			}
		})
	}
}

func TestSchemaToTSRendersParameterSpecsWithDocsAndNesting(t *testing.T) {
	// upstream: "renders objects with required/optional keys, nested shapes, and per-property docs"
	schema, err := dsl.CompileParameterSpec(sdkJS(t, `{
		"path": {"type": "string", "required": true, "description": "Absolute file path"},
		"limit": {"type": "number"},
		"opts": {"type": "object", "additionalProperties": true, "properties": {"deep": {"type": "boolean", "required": true}}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	want := sdkLines(
		"{",
		"  /** Absolute file path */",
		"  path: string;",
		"  limit?: number;",
		"  opts?: {",
		"    deep: boolean;",
		"  } & Record<string, JsonValue>;",
		"} & Record<string, JsonValue>",
	)
	if got := SchemaToTS(schema); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// TestSchemaToTSDegradesToUnknown keeps the rows of upstream's totality
// table that stay unknown now that a schema outside the subset renders node
// by node; the others moved, with the types they now render, to
// TestSchemaToTSOutsideTheSubset (sdk_fullschema_test.go).
func TestSchemaToTSDegradesToUnknown(t *testing.T) {
	cases := []struct {
		name   string
		schema any
	}{
		// upstream: "is total: unsupported or hostile constructs degrade to unknown"
		{"a nil schema is unknown", nil},
		{"a number schema is unknown", 42.0},
		{"a string schema is unknown", "string-schema"},
		{"a oneOf with no branch is unknown", sdkJS(t, `{"oneOf":[]}`)},
		{"a $ref is unknown", sdkJS(t, `{"$ref":"#/defs/x"}`)},
		{"properties that are not an object are unknown", sdkJS(t, `{"type":"object","properties":7}`)},
		{"an empty enum is unknown", sdkJS(t, `{"type":"string","enum":[]}`)},

		// beyond upstream's table
		{"an unknown type is unknown", sdkJS(t, `{"type":"date"}`)},
		{"a typed nil object is unknown", (*dsl.Object)(nil)},
		{"a nil map is unknown", map[string]any(nil)},
		{"a Go int enum value is unknown (dsl numbers are float64)", map[string]any{"type": "integer", "enum": []any{int64(1)}}},
		{"a channel is unknown", make(chan int)},
		{"a property name that is not UTF-8 is unknown", map[string]any{"type": "object", "properties": map[string]any{"\xff": map[string]any{}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := SchemaToTS(c.schema); got != "unknown" {
				t.Errorf("got %q, want unknown", got)
			}
		})
	}
}

func TestSchemaToTSKeys(t *testing.T) {
	cases := []struct {
		name, key, want string
	}{
		{"an identifier is bare", "path", "path"},
		{"a reserved word stays bare", "class", "class"},
		{"a dollar and underscore start are bare", "$_x9", "$_x9"},
		{"a digit start is quoted", "9lives", `"9lives"`},
		{"a dash is quoted", "my-key", `"my-key"`},
		{"a dot is quoted", "my-mcp.tool", `"my-mcp.tool"`},
		{"the empty name is quoted", "", `""`},
		{"a non-ASCII letter is quoted", "é", `"é"`},
		{"a quote and a backslash are escaped", `a"b\c`, `"a\"b\\c"`},
		{"a control character is escaped", "a\tb", `"a\tb"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := dsl.NewObject(
				dsl.Member{Key: "type", Value: "object"},
				dsl.Member{Key: "additionalProperties", Value: false},
				dsl.Member{Key: "properties", Value: dsl.NewObject(dsl.Member{Key: c.key, Value: dsl.NewObject()})},
				dsl.Member{Key: "required", Value: []any{c.key}},
			)
			want := sdkLines("{", "  "+c.want+": JsonValue;", "}")
			if got := SchemaToTS(o); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

func TestSchemaToTSDocComments(t *testing.T) {
	cases := []struct {
		name, description, want string
	}{
		{"a comment closer is escaped", "a pattern like packages/*/tool-*/ over here", `/** a pattern like packages/*\/tool-*\/ over here */`},
		{"every comment closer is escaped", "x*/*/y", `/** x*\/*\/y */`},
		{"whitespace runs collapse to one space and the ends are trimmed", "  lots   of\n\tspace  ", "/** lots of space */"},
		{"JavaScript's Unicode spaces collapse too", "nbsp\u00a0and\u3000ideo\ufeffbom\u2028ls", "/** nbsp and ideo bom ls */"},
		{"NEL is not JavaScript whitespace and is kept", "nel\u0085kept", "/** nel\u0085kept */"},
		{"a blank description still writes a comment", "   ", "/**  */"},
		{"a pipe in prose is kept", "a | b", "/** a | b */"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := dsl.NewObject(
				dsl.Member{Key: "type", Value: "object"},
				dsl.Member{Key: "additionalProperties", Value: false},
				dsl.Member{Key: "properties", Value: dsl.NewObject(dsl.Member{Key: "p", Value: dsl.NewObject(
					dsl.Member{Key: "type", Value: "string"},
					dsl.Member{Key: "description", Value: c.description},
				)})},
			)
			want := sdkLines("{", "  "+c.want, "  p?: string;", "}")
			if got := SchemaToTS(o); got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
	t.Run("an empty description writes no comment", func(t *testing.T) {
		got := SchemaToTS(sdkJS(t, `{"type":"object","properties":{"p":{"type":"string","description":""}}}`))
		if want := sdkLines("{", "  p?: string;", "} & Record<string, JsonValue>"); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})
}

func TestSchemaToTSDeepSchemas(t *testing.T) {
	const depth = 5000
	t.Run("a 5,000-deep oneOf chain renders", func(t *testing.T) {
		// upstream: "renders deeply nested unions without using the JavaScript call stack"
		var schema any = dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
		for range depth {
			schema = dsl.NewObject(dsl.Member{Key: "oneOf", Value: []any{schema, dsl.NewObject(dsl.Member{Key: "type", Value: "null"})}})
		}
		got := SchemaToTS(schema)
		if want := "string" + strings.Repeat(" | null", depth); got != want {
			t.Errorf("got %d bytes starting %q, want %d bytes", len(got), got[:min(len(got), 40)], len(want))
		}
	})
	t.Run("5,000 nested arrays of a union render", func(t *testing.T) {
		var schema any = sdkJS(t, `{"oneOf":[{"type":"string"},{"type":"null"}]}`)
		for range depth {
			schema = dsl.NewObject(dsl.Member{Key: "type", Value: "array"}, dsl.Member{Key: "items", Value: schema})
		}
		got := SchemaToTS(schema)
		want := strings.Repeat("(", depth) + "string | null" + strings.Repeat(")[]", depth)
		if got != want {
			t.Errorf("got %d bytes starting %q, want %d bytes", len(got), got[:min(len(got), 40)], len(want))
		}
	})
	t.Run("5,000 nested closed objects render with growing indentation", func(t *testing.T) {
		var schema any = sdkJS(t, `{"type":"null"}`)
		for range depth {
			schema = dsl.NewObject(
				dsl.Member{Key: "type", Value: "object"},
				dsl.Member{Key: "additionalProperties", Value: false},
				dsl.Member{Key: "properties", Value: dsl.NewObject(dsl.Member{Key: "a", Value: schema})},
				dsl.Member{Key: "required", Value: []any{"a"}},
			)
		}
		var b strings.Builder
		b.WriteString("{")
		for i := 1; i < depth; i++ {
			b.WriteString("\n" + strings.Repeat("  ", i) + "a: {")
		}
		b.WriteString("\n" + strings.Repeat("  ", depth) + "a: null;")
		for i := depth - 1; i >= 1; i-- {
			b.WriteString("\n" + strings.Repeat("  ", i) + "};")
		}
		b.WriteString("\n}")
		if got, want := SchemaToTS(schema), b.String(); got != want {
			t.Errorf("got %d bytes, want %d bytes", len(got), len(want))
		}
	})
}

func TestSchemaToTSReadsGoMapsInSortedKeyOrder(t *testing.T) {
	schema := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties":           map[string]any{"b": map[string]any{"type": "string"}, "a": map[string]any{"type": "integer"}},
		"required":             []any{"b"},
	}
	want := sdkLines("{", "  a?: number;", "  b: string;", "}")
	for range 20 {
		if got := SchemaToTS(schema); got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
}

func TestSchemaToTSMatchesUpstream(t *testing.T) {
	// The file holds random schemas rendered by upstream's jsonSchemaToTs at
	// indent 0 (want) and 1 (want1): see testdata/sdk_ts/README.md.
	var cases []struct {
		Schema any
		Want   string
		Want1  string
	}
	for i, c := range sdkReadArray(t, "upstream_schemas.json") {
		o := c.(*dsl.Object)
		schema, _ := o.Get("schema")
		want, _ := o.Get("want")
		want1, _ := o.Get("want1")
		if _, ok := want.(string); !ok {
			t.Fatalf("case %d has no want", i)
		}
		cases = append(cases, struct {
			Schema any
			Want   string
			Want1  string
		}{schema, want.(string), want1.(string)})
	}
	if len(cases) < 100 {
		t.Fatalf("only %d upstream cases", len(cases))
	}
	for i, c := range cases {
		if dsl.AssertSupported(c.Schema) != nil {
			// Outside the subset upstream gives up (unknown), and dsh renders
			// node by node (doc.go): the departure is exactly these cases.
			if c.Want != "unknown" || c.Want1 != "unknown" {
				t.Errorf("case %d: upstream rendered a schema outside the subset: %q", i, c.Want)
			}
			continue
		}
		if got := SchemaToTS(c.Schema); got != c.Want {
			text, _ := dsl.Marshal(c.Schema)
			t.Errorf("case %d: SchemaToTS(%s)\n got: %q\nwant: %q", i, text, got, c.Want)
		}
		if got := schemaToTS(c.Schema, 1); got != c.Want1 {
			text, _ := dsl.Marshal(c.Schema)
			t.Errorf("case %d at indent 1: schemaToTS(%s)\n got: %q\nwant: %q", i, text, got, c.Want1)
		}
	}
}

func sdkReadArray(t testing.TB, name string) []any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "sdk_ts", name))
	if err != nil {
		t.Fatal(err)
	}
	v, err := dsl.Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return v.([]any)
}

// upstream's renderToolsSdk fixtures
var (
	sdkBash = SDKTool{
		Name:        "bash",
		Description: "Run a shell command.",
		Parameters:  sdkMustParams(`{"command":{"type":"string","required":true}}`),
		Output:      sdkMustJSON(`{"type":"object","additionalProperties":false,"properties":{"exitCode":{"type":"integer"}},"required":["exitCode"]}`),
	}
	sdkExotic = SDKTool{
		Name:        "my-mcp.tool",
		Description: "Exotic name.",
		Parameters:  sdkMustParams(`{}`),
		Output:      sdkMustJSON(`{"type":"array","items":{"type":"string"}}`),
	}
)

func sdkMustJSON(text string) any {
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		panic(err)
	}
	return v
}

func sdkMustParams(text string) any {
	v, err := dsl.CompileParameterSpec(sdkMustJSON(text))
	if err != nil {
		panic(err)
	}
	return v
}

func TestTypeScriptSDK(t *testing.T) {
	text := TypeScriptSDK([]SDKTool{sdkExotic, sdkBash})
	// upstream: "declares every tool in lexicographic order with quoted keys for exotic names"
	// and "names both required call arguments, not just the program"
	for _, fragment := range []string{
		"## Writing code for run_code\n\n",
		"interface ToolArgsMap {",
		"interface ToolOutputMap {",
		"type ToolName = keyof ToolOutputMap",
		"declare class ToolCallError extends Error",
		`readonly name: "ToolCallError";`,
		"readonly toolName: ToolName;",
		"declare const tools: {",
		"type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }",
		`"my-mcp.tool":`,
		"exitCode: number;",
		`"my-mcp.tool": string[];`,
		"[K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;",
		"/** Run a shell command. */",
		"erasable syntax only",
		"rejects with `ToolCallError`",
		"MAY overlap under `Promise.all`",
		"lossless JSON",
		"`code`",
		"`description`",
		"two required arguments",
		"The available tools:\n\n```ts\n",
	} {
		t.Run("it contains "+fragment, func(t *testing.T) {
			if !strings.Contains(text, fragment) {
				t.Errorf("missing %q in:\n%s", fragment, text)
			}
		})
	}
	t.Run("bash is declared before the exotic name", func(t *testing.T) {
		if i, j := strings.Index(text, "bash: {"), strings.Index(text, `"my-mcp.tool":`); i <= 0 || i > j {
			t.Errorf("bash at %d, exotic at %d", i, j)
		}
	})
	t.Run("the whole section is exactly upstream's", func(t *testing.T) {
		want := tsInstructions + "\n\n```ts\n" + tsJSONValue + "\n\n" + sdkLines(
			"interface ToolArgsMap {",
			"  /** Run a shell command. */",
			"  bash: {",
			"    command: string;",
			"  } & Record<string, JsonValue>;",
			"  /** Exotic name. */",
			`  "my-mcp.tool": Record<string, JsonValue>;`,
			"}",
			"",
			"interface ToolOutputMap {",
			"  bash: {",
			"    exitCode: number;",
			"  };",
			`  "my-mcp.tool": string[];`,
			"}",
			"",
			"type ToolName = keyof ToolOutputMap",
			"",
			"declare class ToolCallError extends Error {",
			`  readonly name: "ToolCallError";`,
			"  readonly toolName: ToolName;",
			"}",
			"",
			"declare const tools: {",
			"  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;",
			"}",
			"```",
		)
		if text != want {
			t.Errorf("got:\n%s\nwant:\n%s", text, want)
		}
	})
	t.Run("an empty tool set declares empty maps", func(t *testing.T) {
		text := TypeScriptSDK(nil)
		for _, fragment := range []string{"interface ToolArgsMap {}\n\ninterface ToolOutputMap {}\n\n"} {
			if !strings.Contains(text, fragment) {
				t.Errorf("missing %q", fragment)
			}
		}
	})
	t.Run("a tool without schemas declares unknown and no empty comment", func(t *testing.T) {
		text := TypeScriptSDK([]SDKTool{{Name: "bare"}})
		if !strings.Contains(text, "interface ToolArgsMap {\n  bare: unknown;\n}") ||
			!strings.Contains(text, "interface ToolOutputMap {\n  bare: unknown;\n}") {
			t.Errorf("got:\n%s", text)
		}
	})
	t.Run("a tool description is collapsed and escaped", func(t *testing.T) {
		text := TypeScriptSDK([]SDKTool{{Name: "t", Description: " ends\n with */ ", Parameters: sdkMustParams(`{}`), Output: sdkMustJSON(`{}`)}})
		if !strings.Contains(text, "  /** ends with *\\/ */\n  t: Record<string, JsonValue>;") {
			t.Errorf("got:\n%s", text)
		}
	})
}

func TestTypeScriptSDKIsDeterministic(t *testing.T) {
	tools := []SDKTool{
		sdkBash, sdkExotic,
		{Name: "\U0001F600face", Output: sdkMustJSON(`{"type":"string"}`)},
		{Name: "\uFF01bang", Output: sdkMustJSON(`{"type":"number"}`)},
		{Name: "Zeta"}, {Name: "alpha"}, {Name: "a"}, {Name: "ab"}, {Name: "é"},
		// A duplicate name, which callers never pass, still renders the same in any order.
		{Name: "dup", Output: sdkMustJSON(`{"type":"string"}`)},
		{Name: "dup", Output: sdkMustJSON(`{"type":"null"}`)},
	}
	want := TypeScriptSDK(tools)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		shuffled := append([]SDKTool(nil), tools...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := TypeScriptSDK(shuffled); got != want {
			t.Fatalf("shuffle %d renders differently:\n%s\nwant:\n%s", i, got, want)
		}
	}
	t.Run("names sort by UTF-16 code units, so an astral name precedes U+FF01", func(t *testing.T) {
		order := []string{"  Zeta:", "  a:", "  ab:", "  alpha:", "  bash:", "  dup:", `  "my-mcp.tool":`, `  "é":`, "  \"\U0001F600face\":", "  \"\uFF01bang\":"}
		out := want[strings.Index(want, "interface ToolOutputMap"):]
		last := -1
		for _, key := range order {
			i := strings.Index(out, key)
			if i <= last {
				t.Fatalf("%q at %d, not after %d in:\n%s", key, i, last, out)
			}
			last = i
		}
	})
	t.Run("the input slice is not reordered", func(t *testing.T) {
		in := []SDKTool{sdkExotic, sdkBash}
		TypeScriptSDK(in)
		if in[0].Name != sdkExotic.Name {
			t.Error("TypeScriptSDK sorted its argument")
		}
	})
}

func TestTypeScriptSDKMatchesUpstream(t *testing.T) {
	cases := sdkReadArray(t, "upstream_sdk.json")
	if len(cases) == 0 {
		t.Fatal("no upstream SDK cases")
	}
	for i, c := range cases {
		o := c.(*dsl.Object)
		rawTools, _ := o.Get("tools")
		want, _ := o.Get("want")
		var tools []SDKTool
		for _, rt := range rawTools.([]any) {
			to := rt.(*dsl.Object)
			name, _ := to.Get("name")
			desc, _ := to.Get("description")
			params, _ := to.Get("parameters")
			output, _ := to.Get("output")
			// Upstream declares a schema outside the subset unknown, which
			// dsh renders node by node (doc.go): such a schema is compared as
			// none, which both declare unknown.
			if dsl.AssertSupported(params) != nil {
				params = nil
			}
			if dsl.AssertSupported(output) != nil {
				output = nil
			}
			tools = append(tools, SDKTool{Name: name.(string), Description: desc.(string), Parameters: params, Output: output})
		}
		if got := TypeScriptSDK(tools); got != want {
			t.Errorf("case %d:\n got: %q\nwant: %q", i, got, want)
		}
	}
}
