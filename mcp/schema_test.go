package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// schemaTool is a tool of schemaServer: its input schema as JSON text, and
// what importing it must give.
type schemaTool struct {
	name, schema string
	output       string // its output schema, if any
	// diag is the diagnostic's reason when the tool is not imported.
	diag string
	// bad are arguments the schema refuses, and want the INVALID_ARGS
	// message they get; good are arguments it takes.
	bad, want, good string
}

// deepSchema nests properties until the schema's JSON is depth deep.
func deepSchema(depth int) string {
	s := `{"type":"string"}`
	for d := 2; d < depth; d += 2 {
		s = `{"type":"object","properties":{"a":` + s + `}}`
	}
	return s
}

// fanoutSchema is n definitions, each "allOf" two "$ref"s to the next: 2^n
// checks of a value that passes.
func fanoutSchema(n int) string {
	var defs []string
	for i := range n {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n))
	return `{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
}

var schemaTools = []schemaTool{
	{name: "range",
		schema: `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":10},"x":{"type":"number","exclusiveMinimum":0}},"required":["n"]}`,
		bad:    `{"n":11,"x":0}`,
		want:   `invalid arguments: arguments/n: maximum: got 11, want 10; arguments/x: exclusiveMinimum: got 0, want 0`,
		good:   `{"n":3,"x":0.5}`},
	{name: "list",
		schema: `{"type":"object","properties":{"paths":{"type":"array","items":{"type":"string"},"minItems":1}},"required":["paths"],"additionalProperties":false}`,
		bad:    `{"paths":[]}`,
		want:   `invalid arguments: arguments/paths: minItems: got 0, want 1`,
		good:   `{"paths":["a"]}`},
	{name: "when", // 2020-12: format is an annotation
		schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"at":{"type":"string","format":"date-time"}}}`,
		bad:    `{"at":1}`,
		want:   `invalid arguments: arguments/at: got number, want string`,
		good:   `{"at":"not a date"}`},
	{name: "union",
		schema: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`,
		bad:    `{"v":3}`,
		want:   `invalid arguments: arguments/v: got number, want string; arguments/v: got number, want null`,
		good:   `{"v":null}`},
	{name: "defs",
		schema: `{"type":"object","properties":{"p":{"$ref":"#/$defs/point"}},"$defs":{"point":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}}}`,
		bad:    `{"p":{"y":1}}`,
		want:   `invalid arguments: arguments/p: missing property 'x'`,
		good:   `{"p":{"x":1}}`},
	{name: "names",
		schema: `{"type":"object","propertyNames":{"pattern":"^[a-z]+$"}}`,
		bad:    `{"Bad":1}`,
		want:   `invalid arguments: arguments: 'Bad' does not match pattern '^[a-z]+$'`,
		good:   `{"good":1}`},
	{name: "map",
		schema: `{"type":"object","additionalProperties":{"type":"string","maxLength":3}}`,
		bad:    `{"a":"long","b":2}`,
		want:   `invalid arguments: arguments/a: maxLength: got 4, want 3; arguments/b: got number, want string`,
		good:   `{"a":"abc"}`},
	{name: "old", // draft-07: format is asserted, definitions are $ref's targets
		schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"to":{"$ref":"#/definitions/email"}},"definitions":{"email":{"type":"string","format":"email"}}}`,
		bad:    `{"to":"nobody"}`,
		want:   `invalid arguments: arguments/to: 'nobody' is not valid email: missing @`,
		good:   `{"to":"a@b.example"}`},
	{name: "ecma", // a lookahead Go's regexp lacks: left to the server
		schema: `{"type":"object","properties":{"e":{"type":"string","pattern":"^(?!\\.)[a-z.]+$"}}}`,
		bad:    `{"e":5}`,
		want:   `invalid arguments: arguments/e: got number, want string`,
		good:   `{"e":".starts with a dot"}`},
	{name: "many", // at most 8 violations, then a count
		schema: `{"type":"object","additionalProperties":{"type":"string"}}`,
		bad:    `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10}`,
		want:   `invalid arguments: arguments/a: got number, want string; arguments/b: got number, want string; arguments/c: got number, want string; arguments/d: got number, want string; arguments/e: got number, want string; arguments/f: got number, want string; arguments/g: got number, want string; arguments/h: got number, want string; and 2 more`,
		good:   `{}`},
	{name: "shaped", // an output schema outside the subset is kept for serving
		schema: `{"type":"object"}`,
		output: `{"type":"object","properties":{"items":{"type":"array","minItems":1}}}`,
		bad:    `[]`,
		want:   `invalid arguments: arguments: got array, want object`,
		good:   `{}`},
	{name: "tree", // a recursive $ref is paid per level of the value
		schema: `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["name"]}}}`,
		bad:    `{"root":{"name":"a","children":[{"name":"b","children":[{"children":[]}]}]}}`,
		want:   `invalid arguments: arguments/root/children/0/children/0: missing property 'name'`,
		good:   `{"root":{"name":"a","children":[{"name":"b","children":[]}]}}`},
	{name: "fanout",
		schema: fanoutSchema(30),
		diag:   `input schema: its $refs expand it to more than 50000 subschemas, which validating one value could apply`},
	{name: "remote",
		schema: `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
		diag:   `input schema: it refers to "https://example.com/a.json", outside the schema: dsh loads no schema from a network or a file`},
	{name: "file",
		schema: `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`,
		diag:   `input schema: it refers to "file:///etc/passwd", outside the schema: dsh loads no schema from a network or a file`},
	{name: "relative",
		schema: `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`,
		diag:   `input schema: it refers to "mem:///other.json", outside the schema: dsh loads no schema from a network or a file`},
	{name: "deep",
		schema: deepSchema(66),
		diag:   `input schema: the schema nests 65 deep, more than the 64 dsh compiles`},
	{name: "big",
		schema: `{"type":"object","description":"` + strings.Repeat("x", 1<<20) + `"}`,
		diag:   `input schema: the schema is 1048610 bytes of JSON, more than the 1048576 dsh compiles`},
	{name: "invalid",
		schema: `{"type":"object","properties":{"a":{"type":"strange","minimum":"one"}}}`,
		diag:   `input schema: not a valid JSON Schema: schema/properties/a/minimum: got string, want number; schema/properties/a/type: value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'; schema/properties/a/type: got string, want array`},
	{name: "badout",
		schema: `{"type":"object"}`,
		output: `{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}},"description":"` + strings.Repeat("x", 1<<20) + `"}`,
		diag:   `output schema: the schema is 1048667 bytes of JSON, more than the 1048576 dsh compiles`},
}

// schemaServer is an MCP server with a tool per schemaTools entry, each
// answering "ok", with the structured content {"items": [1]} when it
// declares an output schema.
func schemaServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "schemas", Version: "v1"}, nil)
	for _, tt := range schemaTools {
		tool := &sdk.Tool{Name: tt.name, InputSchema: json.RawMessage(tt.schema)}
		if tt.output != "" {
			tool.OutputSchema = json.RawMessage(tt.output)
		}
		srv.AddTool(tool, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}
			if tool.OutputSchema != nil {
				res.StructuredContent = json.RawMessage(`{"items":[1]}`)
			}
			return res, nil
		})
	}
	return srv
}

func schemaToolNamed(t *testing.T, name string) schemaTool {
	t.Helper()
	for _, tt := range schemaTools {
		if tt.name == name {
			return tt
		}
	}
	t.Fatalf("no schema tool %q", name)
	return schemaTool{}
}

// importSchemas imports schemaServer as "s" into a new engine.
func importSchemas(t *testing.T) (*engine.Service, []mcp.Diagnostic) {
	t.Helper()
	mem := newImpMemServer(schemaServer())
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "s", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	t.Cleanup(func() {
		client.Close()
		mem.closeAll()
	})
	return svc, diags
}

// sameJSON reports whether two JSON texts hold equal values.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func TestImportedSchemas(t *testing.T) {
	svc, diags := importSchemas(t)

	t.Run("a schema dsh cannot compile within its bounds is a diagnostic with the reason", func(t *testing.T) {
		var want []mcp.Diagnostic
		for _, tt := range schemaTools {
			if tt.diag != "" {
				want = append(want, mcp.Diagnostic{Server: "s", Tool: tt.name, Reason: tt.diag})
			}
		}
		slices.SortFunc(diags, func(a, b mcp.Diagnostic) int { return strings.Compare(a.Tool, b.Tool) })
		slices.SortFunc(want, func(a, b mcp.Diagnostic) int { return strings.Compare(a.Tool, b.Tool) })
		if !slices.Equal(diags, want) {
			t.Errorf("diagnostics:\n%v\nwant\n%v", diags, want)
		}
	})

	for _, tt := range schemaTools {
		if tt.diag != "" {
			continue
		}
		name := "s__" + tt.name
		t.Run(tt.name+" imports with its schema unchanged, $schema included", func(t *testing.T) {
			def := svc.Global().Get(name)
			if def == nil {
				t.Fatalf("%s is not registered", name)
			}
			got, err := dsl.Marshal(def.Parameters)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(tt.schema)) {
				t.Errorf("parameters %s\nwant %s", got, tt.schema)
			}
		})
		t.Run(tt.name+" refuses bad arguments with the validator's location and reason", func(t *testing.T) {
			r := impCall(svc, context.Background(), name, impObj(t, tt.bad))
			if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeInvalidArgs || r.Error.Message != tt.want {
				t.Errorf("result %s\nwant INVALID_ARGS %q", impJSON(t, r), tt.want)
			}
			def := svc.Global().Get(name)
			if def.ValidateArgs == nil {
				t.Fatal("ValidateArgs is not set")
			}
			if got := "invalid arguments: " + strings.Join(def.ValidateArgs(impObj(t, tt.bad)), "; "); got != tt.want {
				t.Errorf("ValidateArgs: %q, want %q", got, tt.want)
			}
		})
		t.Run(tt.name+" passes good arguments to the server", func(t *testing.T) {
			r := impCall(svc, context.Background(), name, impObj(t, tt.good))
			want := `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`
			if tt.output != "" {
				want = `{"isError":false,"value":{"items":[1]},"content":[{"type":"text","text":"ok"}]}`
			}
			if got := impJSON(t, r); got != want {
				t.Errorf("result %s\nwant %s", got, want)
			}
		})
	}

	t.Run("an object output schema outside the subset is checked as an object and declared whole", func(t *testing.T) {
		def := svc.Global().Get("s__shaped")
		checked, _ := dsl.Marshal(def.Output.Schema)
		declared, _ := dsl.Marshal(def.Output.Declared)
		if string(checked) != `{"type":"object"}` || !sameJSON(t, declared, []byte(schemaToolNamed(t, "shaped").output)) {
			t.Errorf("output schema %s, declared %s", checked, declared)
		}
	})
}

func TestImportedSchemasAreServedUnchanged(t *testing.T) {
	svc, _ := importSchemas(t)
	cs := serveEngine(t, svc).connect(t, multiRoundTrip, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		served[tl.Name] = tl
	}
	for _, tt := range schemaTools {
		if tt.diag != "" {
			continue
		}
		t.Run(tt.name+"'s input and output schemas are the server's", func(t *testing.T) {
			tl := served["s__"+tt.name]
			if tl == nil {
				t.Fatalf("s__%s is not served", tt.name)
			}
			in, _ := json.Marshal(tl.InputSchema)
			if !sameJSON(t, in, []byte(tt.schema)) {
				t.Errorf("inputSchema %s\nwant %s", in, tt.schema)
			}
			if tt.output == "" {
				if tl.OutputSchema != nil {
					t.Errorf("outputSchema %v, want none", tl.OutputSchema)
				}
				return
			}
			out, _ := json.Marshal(tl.OutputSchema)
			if !sameJSON(t, out, []byte(tt.output)) {
				t.Errorf("outputSchema %s\nwant %s", out, tt.output)
			}
		})
	}
	t.Run("a tool whose output schema leaves the subset still gives its structured content", func(t *testing.T) {
		r := call(t, cs, "s__shaped", `{}`)
		b, _ := json.Marshal(r.StructuredContent)
		if r.IsError || string(b) != `{"items":[1]}` {
			t.Errorf("result isError=%v %q structured %s, want {\"items\":[1]}", r.IsError, text(r), b)
		}
	})
	t.Run("a call through dsh serve with bad arguments is refused as INVALID_ARGS", func(t *testing.T) {
		r := call(t, cs, "s__list", `{"paths":[]}`)
		if want := "Error: invalid arguments: arguments/paths: minItems: got 0, want 1"; !r.IsError || text(r) != want {
			t.Errorf("result isError=%v %q, want %q", r.IsError, text(r), want)
		}
	})
}
