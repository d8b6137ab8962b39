package ptc

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// luaRendered is schemaToLua's result for a schema whose root class is T.
func luaRendered(schema any) (string, []string) {
	return schemaToLua(schema, "T", newLuaNamer())
}

func TestSchemaToLua(t *testing.T) {
	cases := []struct {
		name    string
		schema  string
		want    string
		classes []string
	}{
		{"a string is string", `{"type":"string"}`, "string", nil},
		{"a number is number", `{"type":"number"}`, "number", nil},
		{"an integer is integer", `{"type":"integer"}`, "integer", nil},
		{"a boolean is boolean", `{"type":"boolean"}`, "boolean", nil},
		{"a null is the null sentinel's type", `{"type":"null"}`, "JsonNull", nil},
		{"an empty schema is any", `{}`, "any", nil},
		{"an annotation-only schema is any", `{"description":"anything","title":"T","default":[1]}`, "any", nil},
		{"a string enum joins its literals", `{"type":"string","enum":["a","b"]}`, `"a"|"b"`, nil},
		{"a number enum joins its literals", `{"type":"number","enum":[1,2]}`, "1|2", nil},
		{"an integer const is its literal", `{"type":"integer","const":2}`, "2", nil},
		{"a boolean const is its literal", `{"type":"boolean","const":true}`, "true", nil},
		{"a null const is the null sentinel's type", `{"type":"null","const":null}`, "JsonNull", nil},
		{"a const wins over an enum", `{"type":"string","enum":["a","b"],"const":"a"}`, `"a"`, nil},
		{"a oneOf of string and null is string or the null sentinel", `{"oneOf":[{"type":"string"},{"type":"null"}]}`, "string|JsonNull", nil},
		{"an array of numbers is number[]", `{"type":"array","items":{"type":"number"}}`, "number[]", nil},
		{"an array of an enum is parenthesized", `{"type":"array","items":{"type":"string","enum":["x","y"]}}`, `("x"|"y")[]`, nil},
		{"an array without items is any[]", `{"type":"array"}`, "any[]", nil},
		{"an array of arrays of a union parenthesizes every level",
			`{"type":"array","items":{"type":"array","items":{"oneOf":[{"type":"string"},{"type":"number"}]}}}`, "((string|number)[])[]", nil},
		{"an open object without properties is a string-keyed table", `{"type":"object"}`, "table<string, any>", nil},
		{"an open object with empty properties is a string-keyed table", `{"type":"object","properties":{}}`, "table<string, any>", nil},
		{"a closed object without properties is an empty class", `{"type":"object","additionalProperties":false}`, "T", []string{"---@class T"}},
		{"a closed object lists required and optional fields",
			`{"type":"object","additionalProperties":false,"properties":{"id":{"type":"integer"},"label":{"type":"string"}},"required":["id"]}`,
			"T", []string{sdkLines("---@class T", "---@field id integer", "---@field label? string")}},
		{"an open object with properties is a class extending a string-keyed table",
			`{"type":"object","properties":{"a":{"type":"string"}}}`,
			"T", []string{sdkLines("---@class T: table<string, any>", "---@field a? string")}},
		{"fields keep declaration order",
			`{"type":"object","additionalProperties":false,"properties":{"z":{"type":"string"},"a":{"type":"string"},"m":{"type":"string"}}}`,
			"T", []string{sdkLines("---@class T", "---@field z? string", "---@field a? string", "---@field m? string")}},
		{"a nested object is a class named after its property, declared after its parent",
			`{"type":"object","additionalProperties":false,"properties":{"my_opts":{"type":"object","additionalProperties":false,"properties":{"deep":{"type":"boolean"}},"required":["deep"]}},"required":["my_opts"]}`,
			"T", []string{sdkLines("---@class T", "---@field my_opts TMyOpts"), sdkLines("---@class TMyOpts", "---@field deep boolean")}},
		{"an array of objects names its class Item",
			`{"type":"array","items":{"type":"object","properties":{"a":{"type":"string"}}}}`,
			"TItem[]", []string{sdkLines("---@class TItem: table<string, any>", "---@field a? string")}},
		{"a oneOf of objects numbers its classes by branch",
			`{"oneOf":[{"type":"object","additionalProperties":false,"properties":{"a":{"type":"string"}}},{"type":"null"},{"type":"object","additionalProperties":false}]}`,
			"TVariant1|JsonNull|TVariant3", []string{sdkLines("---@class TVariant1", "---@field a? string"), "---@class TVariant3"}},
		{"an array of a oneOf of objects is parenthesized",
			`{"type":"array","items":{"oneOf":[{"type":"object","additionalProperties":false},{"type":"null"}]}}`,
			"(TItemVariant1|JsonNull)[]", []string{"---@class TItemVariant1"}},
		{"numbers are written as JSON writes them",
			`{"type":"number","enum":[0.1,1e21,1.5e-7,-5,123456789012]}`, "0.1|1e+21|1.5e-7|-5|123456789012", nil},
		{"string literals are Lua-escaped on one line",
			`{"type":"string","enum":["quote\"","back\\slash","new\nline","tab\t","\u0001one","\u2028ls","é"]}`,
			`"quote\""|"back\\slash"|"new\nline"|"tab\t"|"\001one"|"\226\128\168ls"|"é"`, nil},
		{"a field description follows its type",
			`{"type":"object","additionalProperties":false,"properties":{"p":{"type":"string","description":"  The   path\nto read. "}}}`,
			"T", []string{sdkLines("---@class T", "---@field p? string The path to read.")}},
		{"a field description that could continue the type is marked with #",
			`{"type":"object","additionalProperties":false,"properties":{"p":{"type":"string","description":"| or [x]"},"q":{"type":"string","description":"@deprecated"}}}`,
			"T", []string{sdkLines("---@class T", "---@field p? string # | or [x]", `---@field q? string # \@deprecated`)}},
		{"an empty field description writes nothing",
			`{"type":"object","additionalProperties":false,"properties":{"p":{"type":"string","description":""}}}`,
			"T", []string{sdkLines("---@class T", "---@field p? string")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, classes := luaRendered(sdkJS(t, c.schema))
			if got != c.want || strings.Join(classes, "\n\n") != strings.Join(c.classes, "\n\n") {
				t.Errorf("schemaToLua(%s)\n got: %q %q\nwant: %q %q", c.schema, got, classes, c.want, c.classes)
			}
		})
	}
}

func TestSchemaToLuaRendersTheParameterMap(t *testing.T) {
	// §6 26's parameter map, in its LuaLS form.
	schema := sdkMustParams(`{
		"path": {"type": "string", "required": true, "description": "Absolute file path"},
		"limit": {"type": "number"},
		"opts": {"type": "object", "additionalProperties": true, "properties": {"deep": {"type": "boolean", "required": true}}}
	}`)
	got, classes := schemaToLua(schema, "ReadArgs", newLuaNamer())
	want := []string{
		sdkLines(
			"---@class ReadArgs: table<string, any>",
			"---@field path string Absolute file path",
			"---@field limit? number",
			"---@field opts? ReadArgsOpts",
		),
		sdkLines(
			"---@class ReadArgsOpts: table<string, any>",
			"---@field deep boolean",
		),
	}
	if got != "ReadArgs" || strings.Join(classes, "\n\n") != strings.Join(want, "\n\n") {
		t.Errorf("got %q with:\n%s\nwant ReadArgs with:\n%s", got, strings.Join(classes, "\n\n"), strings.Join(want, "\n\n"))
	}
}

// TestSchemaToLuaDegradesToAny keeps the schemas that stay any now that a
// schema outside the subset renders node by node; the others moved, with
// the types they now render, to TestSchemaToLuaOutsideTheSubset
// (sdk_fullschema_test.go).
func TestSchemaToLuaDegradesToAny(t *testing.T) {
	cases := []struct {
		name   string
		schema any
	}{
		{"a nil schema is any", nil},
		{"a number schema is any", 42.0},
		{"a oneOf with no branch is any", sdkJS(t, `{"oneOf":[]}`)},
		{"a $ref is any", sdkJS(t, `{"$ref":"#/defs/x"}`)},
		{"properties that are not an object are any", sdkJS(t, `{"type":"object","properties":7}`)},
		{"an empty enum is any", sdkJS(t, `{"type":"string","enum":[]}`)},
		{"a typed nil object is any", (*dsl.Object)(nil)},
		{"a channel is any", make(chan int)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			namer := newLuaNamer()
			got, classes := schemaToLua(c.schema, "T", namer)
			if got != "any" || len(classes) != 0 {
				t.Errorf("got %q with classes %q, want any and none", got, classes)
			}
			if name := namer.claim("T"); name != "T" {
				t.Errorf("the degraded schema kept a class name: T is now %q", name)
			}
		})
	}
}

func TestSchemaToLuaQuotesKeysThatAreNotLuaNames(t *testing.T) {
	cases := []struct {
		name, key, want string
	}{
		{"an identifier is bare", "path", "path"},
		{"an underscore start is bare", "_x9", "_x9"},
		{"a name like __index is bare", "__index", "__index"},
		{"a Lua keyword is bracketed", "end", `["end"]`},
		{"nil is bracketed", "nil", `["nil"]`},
		{"a JavaScript-only reserved word stays bare", "class", "class"},
		{"a dollar is bracketed", "$x", `["$x"]`},
		{"a digit start is bracketed", "9lives", `["9lives"]`},
		{"a dash is bracketed", "my-key", `["my-key"]`},
		{"the empty name is bracketed", "", `[""]`},
		{"a non-ASCII letter is bracketed", "é", `["é"]`},
		{"a quote and a backslash are escaped", `a"b\c`, `["a\"b\\c"]`},
		{"a control character is escaped", "a\x1bb", `["a\027b"]`},
		{"a byte of invalid UTF-8 is escaped exactly", "a\xffb", `["a\255b"]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			schema := map[string]any{
				"type": "object", "additionalProperties": false,
				"properties": map[string]any{c.key: map[string]any{}},
				"required":   []any{c.key},
			}
			got, classes := luaRendered(schema)
			want := sdkLines("---@class T", "---@field "+c.want+" any")
			if got != "T" || len(classes) != 1 || classes[0] != want {
				t.Errorf("got %q %q, want T %q", got, classes, want)
			}
		})
	}
}

func TestSchemaToLuaDeepSchemas(t *testing.T) {
	const depth = 5000
	t.Run("a 5,000-deep oneOf chain renders", func(t *testing.T) {
		var schema any = dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
		for range depth {
			schema = dsl.NewObject(dsl.Member{Key: "oneOf", Value: []any{schema, dsl.NewObject(dsl.Member{Key: "type", Value: "null"})}})
		}
		got, _ := luaRendered(schema)
		if want := "string" + strings.Repeat("|JsonNull", depth); got != want {
			t.Errorf("got %d bytes starting %q, want %d bytes", len(got), got[:min(len(got), 40)], len(want))
		}
	})
	t.Run("5,000 nested arrays of a union render", func(t *testing.T) {
		var schema any = sdkJS(t, `{"oneOf":[{"type":"string"},{"type":"null"}]}`)
		for range depth {
			schema = dsl.NewObject(dsl.Member{Key: "type", Value: "array"}, dsl.Member{Key: "items", Value: schema})
		}
		got, _ := luaRendered(schema)
		if want := strings.Repeat("(", depth) + "string|JsonNull" + strings.Repeat(")[]", depth); got != want {
			t.Errorf("got %d bytes starting %q, want %d bytes", len(got), got[:min(len(got), 40)], len(want))
		}
	})
	t.Run("5,000 nested closed objects render as 5,000 classes with distinct short names", func(t *testing.T) {
		var schema any = sdkJS(t, `{"type":"null"}`)
		for range depth {
			schema = dsl.NewObject(
				dsl.Member{Key: "type", Value: "object"},
				dsl.Member{Key: "additionalProperties", Value: false},
				dsl.Member{Key: "properties", Value: dsl.NewObject(dsl.Member{Key: "a", Value: schema})},
				dsl.Member{Key: "required", Value: []any{"a"}},
			)
		}
		got, classes := luaRendered(schema)
		if got != "T" || len(classes) != depth {
			t.Fatalf("got %q with %d classes, want T with %d", got, len(classes), depth)
		}
		seen := map[string]bool{}
		for i, c := range classes {
			head, field, _ := strings.Cut(c, "\n")
			name := strings.TrimPrefix(head, "---@class ")
			if seen[name] || len(name) > luaMaxClassName+8 {
				t.Fatalf("class %d is named %q (seen before: %v)", i, name, seen[name])
			}
			seen[name] = true
			if i+1 < depth && !strings.HasPrefix(field, "---@field a ") || i+1 == depth && field != "---@field a JsonNull" {
				t.Fatalf("class %d:\n%s", i, c)
			}
			if i > 0 && !strings.HasSuffix(classes[i-1], "---@field a "+name) {
				t.Fatalf("class %d is not the type of class %d's field:\n%s", i, i-1, classes[i-1])
			}
		}
		if sdk := LuaSDK([]SDKTool{{Name: "deep", Parameters: schema, Output: schema}}); strings.Count(sdk, "---@class ") != 2*depth+3 {
			t.Errorf("the SDK declares %d classes, want %d", strings.Count(sdk, "---@class "), 2*depth+3)
		}
	})
}

func TestSchemaToLuaReadsGoMapsInSortedKeyOrder(t *testing.T) {
	schema := map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"properties":           map[string]any{"b": map[string]any{"type": "string"}, "a": map[string]any{"type": "integer"}},
		"required":             []any{"b"},
	}
	want := sdkLines("---@class T", "---@field a? integer", "---@field b string")
	for range 20 {
		if _, classes := luaRendered(schema); len(classes) != 1 || classes[0] != want {
			t.Fatalf("got %q, want %q", classes, want)
		}
	}
}

func TestLuaSDK(t *testing.T) {
	text := LuaSDK([]SDKTool{sdkExotic, sdkBash})
	for _, fragment := range []string{
		"## Writing code for run_code\n\n",
		"two required arguments",
		"`code`",
		"`description`",
		"`return`",
		"lossless JSON",
		"raises a `ToolCallError`",
		"pcall",
		"`error(e)`",
		"`ToolCallError.is(e)`",
		"`toolName`",
		"`message`",
		"MAY overlap under `tools.gather",
		"`print(...)`",
		"`tools[\"my-tool\"]{key = value}`",
		"JSON null is `null`",
		"`array{}`",
		"The available tools:\n\n```lua\n---@meta\n",
		"---@class JsonNull\n",
		"---@type JsonNull\nnull = nil\n",
		"function array(t) end\n",
		"function object(t) end\n",
		"---@class ToolCallError\n---@field toolName string",
		"---@field message string",
		"function ToolCallError.is(e) end\n",
		"---@class tools\ntools = {}\n",
		"returns one array table of their results in order (`null` for a function that returns nothing): `local r = tools.gather(f, g)`, then `r[1]`, `r[2]`",
		"---@param ... fun(): any\n---@return any[] results one per function, in order (null for a function that returns nothing)\nfunction tools.gather(...) end\n",
		"---Run a shell command.\n---@param args BashArgs\n---@return BashResult\nfunction tools.bash(args) end",
		"tools[\"my-mcp.tool\"] = function(args) end",
	} {
		t.Run("it contains "+fragment, func(t *testing.T) {
			if !strings.Contains(text, fragment) {
				t.Errorf("missing %q in:\n%s", fragment, text)
			}
		})
	}
	for _, word := range []string{"TypeScript", "JavaScript", "Promise", "await", "JsonValue", "console"} {
		t.Run("it never mentions "+word, func(t *testing.T) {
			if strings.Contains(text, word) {
				t.Errorf("%q in:\n%s", word, text)
			}
		})
	}
	t.Run("bash is declared before the exotic name", func(t *testing.T) {
		if i, j := strings.Index(text, "function tools.bash("), strings.Index(text, `tools["my-mcp.tool"]`); i <= 0 || i > j {
			t.Errorf("bash at %d, exotic at %d", i, j)
		}
	})
	t.Run("the tools follow the prelude as classes, then the function", func(t *testing.T) {
		want := luaInstructions + "\n\n```lua\n" + luaPrelude + "\n\n" + luaGather + "\n\n" + sdkLines(
			"---@class BashArgs: table<string, any>",
			"---@field command string",
			"",
			"---@class BashResult",
			"---@field exitCode integer",
			"",
			"---Run a shell command.",
			"---@param args BashArgs",
			"---@return BashResult",
			"function tools.bash(args) end",
			"",
			"---Exotic name.",
			"---@param args table<string, any>",
			"---@return string[]",
			`tools["my-mcp.tool"] = function(args) end`,
			"```",
		)
		if text != want {
			t.Errorf("got:\n%s\nwant:\n%s", text, want)
		}
	})
	t.Run("an empty tool set declares the prelude and gather alone", func(t *testing.T) {
		if got, want := LuaSDK(nil), luaInstructions+"\n\n```lua\n"+luaPrelude+"\n\n"+luaGather+"\n```"; got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("a tool named gather replaces the helper, as in the runtime", func(t *testing.T) {
		got := LuaSDK([]SDKTool{{Name: "gather", Description: "Gather crops."}})
		if strings.Contains(got, luaGather) || strings.Count(got, "function tools.gather(") != 1 ||
			!strings.HasSuffix(got, "\n\n---Gather crops.\n---@param args any\n---@return any\nfunction tools.gather(args) end\n```") {
			t.Errorf("got:\n%s", got)
		}
	})
	t.Run("a tool without schemas takes and returns any", func(t *testing.T) {
		if got := LuaSDK([]SDKTool{{Name: "bare"}}); !strings.HasSuffix(got, "\n\n---@param args any\n---@return any\nfunction tools.bare(args) end\n```") {
			t.Errorf("got:\n%s", got)
		}
	})
	t.Run("a tool description is one line and cannot read as an annotation", func(t *testing.T) {
		got := LuaSDK([]SDKTool{{Name: "t", Description: " @return\n  string\u2028now ", Parameters: sdkMustParams(`{}`), Output: sdkMustJSON(`{}`)}})
		if !strings.Contains(got, "\n\n---\\@return string now\n---@param args table<string, any>\n---@return any\nfunction tools.t(args) end") {
			t.Errorf("got:\n%s", got)
		}
	})
}

func TestLuaSDKNamesTools(t *testing.T) {
	params := sdkMustParams(`{"x":{"type":"string"}}`)
	cases := []struct {
		name, tool, call, class string
	}{
		{"an identifier is a dotted function", "read_file", "function tools.read_file(args) end", "ReadFileArgs"},
		{"a name like __index is an ordinary dotted function", "__index", "function tools.__index(args) end", "IndexArgs"},
		{"a Lua keyword is documented as bracket access", "end", `tools["end"] = function(args) end`, "EndArgs"},
		{"another Lua keyword is documented as bracket access", "repeat", `tools["repeat"] = function(args) end`, "RepeatArgs"},
		{"a dotted name is documented as bracket access", "my-mcp.tool", `tools["my-mcp.tool"] = function(args) end`, "MyMcpToolArgs"},
		{"a digit start is documented as bracket access", "9lives", `tools["9lives"] = function(args) end`, "Tool9livesArgs"},
		{"a name without ASCII letters is documented as bracket access", "éé", `tools["éé"] = function(args) end`, "ToolArgs"},
		{"a name with a quote and a newline stays on one line", "a\"b\nc", `tools["a\"b\nc"] = function(args) end`, "ABCArgs"},
		{"a name that is not UTF-8 is quoted byte for byte", "x\xff", `tools["x\255"] = function(args) end`, "XArgs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := LuaSDK([]SDKTool{{Name: c.tool, Parameters: params}})
			want := "---@class " + c.class + ": table<string, any>\n---@field x? string\n\n---@param args " + c.class +
				"\n---@return any\n" + c.call + "\n```"
			if !strings.HasSuffix(got, want) {
				t.Errorf("got:\n%s\nwant the end:\n%s", got, want)
			}
		})
	}
	t.Run("tools whose names give the same classes get numbered classes", func(t *testing.T) {
		got := LuaSDK([]SDKTool{{Name: "read_file", Parameters: params}, {Name: "readFile", Parameters: params}, {Name: "read-file", Parameters: params}})
		for _, want := range []string{
			"---@param args ReadFileArgs\n---@return any\ntools[\"read-file\"]",
			"---@param args ReadFileArgs_2\n---@return any\nfunction tools.readFile(",
			"---@param args ReadFileArgs_3\n---@return any\nfunction tools.read_file(",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("missing %q in:\n%s", want, got)
			}
		}
	})
	t.Run("every class is declared once in a crowded tool set", func(t *testing.T) {
		nested := sdkMustJSON(`{"type":"object","additionalProperties":false,"properties":{"b":{"type":"object","additionalProperties":false}}}`)
		tools := []SDKTool{
			{Name: "a", Parameters: sdkMustParams(`{"b":{"type":"object","additionalProperties":true,"properties":{"c":{"type":"string"}}}}`), Output: nested},
			{Name: "a_args_b", Parameters: params, Output: nested},
			{Name: "aArgsB", Parameters: params, Output: nested},
			{Name: "a.result", Parameters: params, Output: nested},
			{Name: "tool_call_error", Parameters: params, Output: nested},
			{Name: "", Parameters: params, Output: nested},
			{Name: "é", Parameters: params, Output: nested},
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(LuaSDK(tools), "\n") {
			if name, ok := strings.CutPrefix(line, "---@class "); ok {
				name, _, _ = strings.Cut(name, ":")
				if seen[name] {
					t.Errorf("class %q declared twice", name)
				}
				seen[name] = true
			}
		}
		if len(seen) != 3+2*len(tools)+len(tools)+1 {
			t.Errorf("%d classes: %v", len(seen), seen)
		}
	})
}

func TestLuaSDKIsDeterministic(t *testing.T) {
	params := sdkMustParams(`{"x":{"type":"object","additionalProperties":true,"properties":{"y":{"type":"string"}}}}`)
	tools := []SDKTool{
		sdkBash, sdkExotic,
		{Name: "\U0001F600face", Output: sdkMustJSON(`{"type":"string"}`)},
		{Name: "\uFF01bang", Output: sdkMustJSON(`{"type":"number"}`)},
		{Name: "Zeta", Parameters: params}, {Name: "zeta", Parameters: params}, {Name: "alpha"}, {Name: "a"}, {Name: "ab"}, {Name: "é"},
		{Name: "end"}, {Name: "read_file", Parameters: params}, {Name: "readFile", Parameters: params},
		// A duplicate name, which callers never pass, still renders the same in any order.
		{Name: "dup", Parameters: params, Output: sdkMustJSON(`{"type":"string"}`)},
		{Name: "dup", Parameters: params, Output: sdkMustJSON(`{"type":"null"}`)},
	}
	want := LuaSDK(tools)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 50 {
		shuffled := append([]SDKTool(nil), tools...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := LuaSDK(shuffled); got != want {
			t.Fatalf("shuffle %d renders differently:\n%s\nwant:\n%s", i, got, want)
		}
	}
	t.Run("names sort by UTF-16 code units, as the TypeScript SDK sorts them", func(t *testing.T) {
		order := []string{"tools.Zeta(", "tools.a(", "tools.ab(", "tools.alpha(", "tools.bash(", "tools.dup(", `tools["end"]`,
			`tools["my-mcp.tool"]`, "tools.readFile(", "tools.read_file(", "tools.zeta(", `tools["é"]`, "tools[\"\U0001F600face\"]", "tools[\"\uFF01bang\"]"}
		last := -1
		for _, key := range order {
			i := strings.Index(want, key)
			if i <= last {
				t.Fatalf("%q at %d, not after %d in:\n%s", key, i, last, want)
			}
			last = i
		}
	})
	t.Run("the input slice is not reordered", func(t *testing.T) {
		in := []SDKTool{sdkExotic, sdkBash}
		LuaSDK(in)
		if in[0].Name != sdkExotic.Name {
			t.Error("LuaSDK sorted its argument")
		}
	})
}

// luaLang is a goRuntime that reports the Lua language.
type luaLang struct{ *goRuntime }

func (*luaLang) Language() Language { return Lua }

func TestTheExecutorOfALuaRuntimeShowsTheLuaSDK(t *testing.T) {
	svc := engine.New()
	agent := engine.NewAgent("main", nil)
	e, err := NewExecutor(svc, &luaLang{&goRuntime{}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc.Scope(agent).SetExecutor(e)
	echo := &engine.Definition{
		Name: "echo", Description: "Echo the text.", Parameters: sdkMustParams(`{"text":{"type":"string","required":true}}`),
		Output: engine.Output{Schema: sdkMustJSON(`{"type":"string"}`), Render: func(_, v any) ([]engine.Block, error) {
			return []engine.Block{engine.Text(v.(string))}, nil
		}},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) { return "", nil },
	}
	if _, err := svc.Global().Register(echo); err != nil {
		t.Fatal(err)
	}
	d, err := e.Describe(svc.Scope(agent).Definitions(nil))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.Names, ",") != "run_code" || len(d.Sections) != 2 || d.Sections[1].ID != SDKSectionID {
		t.Fatalf("names %v, sections %+v", d.Names, d.Sections)
	}
	sdk := d.Sections[1].Text
	want := LuaSDK([]SDKTool{{Name: "echo", Description: echo.Description, Parameters: echo.Parameters, Output: echo.Output.Schema}})
	if sdk != want {
		t.Errorf("tools:sdk:\n%s\nwant:\n%s", sdk, want)
	}
	for _, fragment := range []string{"```lua\n", "---Echo the text.\n---@param args EchoArgs\n---@return string\nfunction tools.echo(args) end"} {
		if !strings.Contains(sdk, fragment) {
			t.Errorf("missing %q in:\n%s", fragment, sdk)
		}
	}
	if strings.Contains(sdk, "run_code(") || strings.Contains(sdk, "RunCode") {
		t.Errorf("run_code is declared:\n%s", sdk)
	}
}
