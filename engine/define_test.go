package engine_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// dfTextOf joins a result's text blocks.
func dfTextOf(r *engine.Result) string {
	var parts []string
	for _, b := range r.Content {
		if t, ok := b.(engine.TextBlock); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func dfMustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func dfParse(t *testing.T, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatalf("unmarshal %s: %v", text, err)
	}
	return v
}

func dfRegister(t *testing.T, svc *engine.Service, def *engine.Definition) {
	t.Helper()
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatalf("dfRegister %s: %v", def.Name, err)
	}
}

func dfCall(svc *engine.Service, name string, args any) *engine.Result {
	return svc.Call(context.Background(), engine.Input{CallID: "c1", Name: name, Arguments: args})
}

func dfTextRender[A, O any](f func(A, O) string) func(A, O) ([]engine.Block, error) {
	return func(a A, o O) ([]engine.Block, error) { return []engine.Block{engine.Text(f(a, o))}, nil }
}

type dfReadArgs struct {
	Path string `json:"path"`
}

func dfReadTool(t *testing.T, body func(dfReadArgs) string) *engine.Definition {
	t.Helper()
	def, err := engine.DefineTool(engine.ToolOptions[dfReadArgs, string]{
		Name:        "read",
		Description: "Read a file.",
		Parameters:  dsl.Params(dsl.Prop("path", dsl.String().Required())),
		Output:      dsl.String(),
		Render:      dfTextRender(func(_ dfReadArgs, s string) string { return s }),
		Execute: func(_ context.Context, a dfReadArgs, _ *engine.Run) (string, error) {
			return body(a), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// §6 34: a defineTool with a required path called with {} fails as INVALID_ARGS.
func TestDefineToolInvalidArgs(t *testing.T) {
	svc := engine.New()
	var ran atomic.Bool
	dfRegister(t, svc, dfReadTool(t, func(dfReadArgs) string { ran.Store(true); return "" }))
	r := dfCall(svc, "read", dsl.NewObject())
	if !r.IsError || ran.Load() {
		t.Fatalf("want a failure without running the body, got %s (ran %v)", dfMustJSON(t, r.JSON()), ran.Load())
	}
	if got, want := dfTextOf(r), `Error: invalid arguments: missing required property "path"`; got != want {
		t.Errorf("content %q, want %q", got, want)
	}
	if i := r.Error.Info; i == nil || i.Name != "ToolArgsError" || i.Code != engine.CodeInvalidArgs {
		t.Errorf("info %+v, want ToolArgsError INVALID_ARGS", i)
	}
	if got := r.Error.Message; got != `invalid arguments: missing required property "path"` {
		t.Errorf("message %q", got)
	}
}

// §6 35: a raw definition gets no argument validation.
func TestRawDefinitionHasNoArgsValidation(t *testing.T) {
	svc := engine.New()
	dfRegister(t, svc, &engine.Definition{
		Name:       "raw",
		Parameters: dfParse(t, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Output: engine.Output{Schema: dfParse(t, `{"type":"string"}`), Render: func(_, v any) ([]engine.Block, error) {
			return []engine.Block{engine.Text(v.(string))}, nil
		}},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			return "reached with " + dfMustJSON(t, args), nil
		},
	})
	r := dfCall(svc, "raw", dsl.NewObject())
	if r.IsError || r.Value != "reached with {}" {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
}

type dfEchoArgs struct {
	Text      string `json:"text"`
	Uppercase bool   `json:"uppercase"`
}

func dfEchoTool() *engine.Definition {
	return engine.MustDefineTool(engine.ToolOptions[dfEchoArgs, string]{
		Name:        "echo",
		Description: "Echo text.",
		Parameters: dsl.Params(
			dsl.Prop("text", dsl.String().Required()),
			dsl.Prop("uppercase", dsl.Boolean()),
		),
		Output: dsl.String(),
		Render: dfTextRender(func(_ dfEchoArgs, s string) string { return s }),
		Execute: func(_ context.Context, a dfEchoArgs, _ *engine.Run) (string, error) {
			if a.Uppercase {
				return strings.ToUpper(a.Text), nil
			}
			return a.Text, nil
		},
	})
}

// §6 36: the typed echo.
func TestDefineToolTypedEcho(t *testing.T) {
	svc := engine.New()
	dfRegister(t, svc, dfEchoTool())
	r := dfCall(svc, "echo", dfParse(t, `{"text":"hello","uppercase":true}`))
	if r.IsError || r.Value != "HELLO" {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
	if got := dfMustJSON(t, engine.ContentJSON(r.Content)); got != `[{"type":"text","text":"HELLO"}]` {
		t.Errorf("content %s", got)
	}
	schemas, err := svc.Global().Schemas()
	if err != nil || len(schemas) != 1 {
		t.Fatalf("schemas %v %v", schemas, err)
	}
	want := `{"name":"echo","description":"Echo text.","parameters":{"type":"object","properties":` +
		`{"text":{"type":"string"},"uppercase":{"type":"boolean"}},"required":["text"]}}`
	if got := dfMustJSON(t, schemas[0].JSON()); got != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
	// The definition is a plain one: its output schema is the compiled spec.
	if got := dfMustJSON(t, dfEchoTool().Output.Schema); got != `{"type":"string"}` {
		t.Errorf("output schema %s", got)
	}
}

type dfServer struct {
	Host string `json:"host"`
	Port *int   `json:"port,omitempty"`
}

type dfDeployArgs struct {
	Name    string         `json:"name"`
	Tags    []string       `json:"tags"`
	Servers []dfServer     `json:"servers"`
	Extra   map[string]any `json:"extra"`
	Ignored string         `json:"-"`
}

// Arguments are decoded into structs by their json tags.
func TestDefineToolDecodesArgsIntoStructs(t *testing.T) {
	var got dfDeployArgs
	def, err := engine.DefineTool(engine.ToolOptions[dfDeployArgs, bool]{
		Name: "deploy",
		Parameters: dsl.Params(
			dsl.Prop("name", dsl.String().Required()),
			dsl.Prop("tags", dsl.ArrayOf(dsl.String())),
			dsl.Prop("servers", dsl.ArrayOf(dsl.ObjectOf(false,
				dsl.Prop("host", dsl.String().Required()),
				dsl.Prop("port", dsl.Integer()),
			))),
			dsl.Prop("extra", dsl.OpenObject()),
		),
		Output: dsl.Boolean(),
		Render: dfTextRender(func(dfDeployArgs, bool) string { return "ok" }),
		Execute: func(_ context.Context, a dfDeployArgs, _ *engine.Run) (bool, error) {
			got = a
			return true, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := engine.New()
	dfRegister(t, svc, def)
	r := dfCall(svc, "deploy", dfParse(t, `{"name":"web","tags":["a","b"],"servers":[{"host":"h1","port":80},{"host":"h2"}],`+
		`"extra":{"z":1,"a":[true]},"undeclared":"kept out"}`))
	if r.IsError {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
	port := 80
	want := dfDeployArgs{Name: "web", Tags: []string{"a", "b"}, Servers: []dfServer{{"h1", &port}, {"h2", nil}},
		Extra: map[string]any{"z": 1.0, "a": []any{true}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("args %+v, want %+v", got, want)
	}

	// Nested violations are reported with their paths.
	r = dfCall(svc, "deploy", dfParse(t, `{"name":"web","tags":["a",2],"servers":[{"port":1}]}`))
	if want := `invalid arguments: "tags[1]" must be a string; missing required property "servers[0].host"`; !r.IsError || r.Error.Message != want {
		t.Errorf("got %s, want %s", dfMustJSON(t, r.JSON()), want)
	}
}

// Arguments that pass the schema but not the Go type are invalid arguments too.
func TestDefineToolArgsThatDoNotFitTheGoType(t *testing.T) {
	type intArgs struct {
		N int `json:"n"`
	}
	def := engine.MustDefineTool(engine.ToolOptions[intArgs, float64]{
		Name:       "n",
		Parameters: dsl.Params(dsl.Prop("n", dsl.Number())),
		Output:     dsl.Number(),
		Render:     dfTextRender(func(intArgs, float64) string { return "" }),
		Execute:    func(_ context.Context, a intArgs, _ *engine.Run) (float64, error) { return float64(a.N), nil },
		IsConcurrencySafe: func(intArgs) bool {
			return true
		},
	})
	svc := engine.New()
	dfRegister(t, svc, def)
	r := dfCall(svc, "n", dfParse(t, `{"n":1.5}`))
	if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeInvalidArgs ||
		!strings.HasPrefix(r.Error.Message, "invalid arguments: arguments do not fit engine_test.intArgs: ") {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
	if def.IsConcurrencySafe(dfParse(t, `{"n":1.5}`)) || !def.IsConcurrencySafe(dfParse(t, `{"n":2}`)) {
		t.Error("the classifier must be false for arguments that do not decode, and the user's otherwise")
	}
}

// With Args = any the body gets the snapshot itself, key order kept; a map
// gets the decoded members.
func TestDefineToolUntypedArgs(t *testing.T) {
	var gotAny any
	var gotMap map[string]any
	anyTool := engine.MustDefineTool(engine.ToolOptions[any, any]{
		Name:       "any",
		Parameters: dsl.Params(dsl.Prop("b", dsl.Number()), dsl.Prop("a", dsl.JSON())),
		Output:     dsl.JSON(),
		Render:     dfTextRender(func(_ any, v any) string { return dfMustJSON(t, v) }),
		Execute: func(_ context.Context, a any, _ *engine.Run) (any, error) {
			gotAny = a
			return a, nil
		},
	})
	mapTool := engine.MustDefineTool(engine.ToolOptions[map[string]any, string]{
		Name:       "map",
		Parameters: dsl.Params(),
		Output:     dsl.String(),
		Render:     dfTextRender(func(map[string]any, string) string { return "" }),
		Execute: func(_ context.Context, a map[string]any, _ *engine.Run) (string, error) {
			gotMap = a
			return "ok", nil
		},
	})
	svc := engine.New()
	dfRegister(t, svc, anyTool)
	dfRegister(t, svc, mapTool)
	r := dfCall(svc, "any", dfParse(t, `{"z":true,"b":2,"a":{"y":1,"x":null}}`))
	if r.IsError {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
	if _, ok := gotAny.(*dsl.Object); !ok || dfMustJSON(t, gotAny) != `{"z":true,"b":2,"a":{"y":1,"x":null}}` {
		t.Errorf("args %T %v", gotAny, gotAny)
	}
	if got := dfTextOf(r); got != `{"z":true,"b":2,"a":{"y":1,"x":null}}` {
		t.Errorf("render saw %s", got)
	}
	if r = dfCall(svc, "map", dfParse(t, `{"k":[1,"s"]}`)); r.IsError || !reflect.DeepEqual(gotMap, map[string]any{"k": []any{1.0, "s"}}) {
		t.Errorf("got %s, map %v", dfMustJSON(t, r.JSON()), gotMap)
	}
	if r = dfCall(svc, "any", dfParse(t, `[]`)); !r.IsError || r.Error.Message != `invalid arguments: "arguments" must be an object` {
		t.Errorf("non-object arguments: %s", dfMustJSON(t, r.JSON()))
	}
}

type dfReport struct {
	Zeta   string    `json:"zeta"`
	Alpha  int       `json:"alpha"`
	Middle *string   `json:"middle,omitempty"`
	List   []dfInner `json:"list"`
	Skip   struct{}  `json:"-"`
}

type dfInner struct {
	Y bool `json:"y"`
	X bool `json:"x"`
}

// Out is encoded in struct field order, and Render and PresentationMeta get
// it back typed.
func TestDefineToolOutEncodingOrder(t *testing.T) {
	var rendered dfReport
	def := engine.MustDefineTool(engine.ToolOptions[struct{}, dfReport]{
		Name:       "report",
		Parameters: dsl.Params(),
		Output: dsl.ObjectOf(false,
			dsl.Prop("alpha", dsl.Integer().Required()),
			dsl.Prop("zeta", dsl.String().Required()),
			dsl.Prop("middle", dsl.String()),
			dsl.Prop("list", dsl.ArrayOf(dsl.ObjectOf(false, dsl.Prop("x", dsl.Boolean()), dsl.Prop("y", dsl.Boolean())))),
		),
		Render: func(_ struct{}, out dfReport) ([]engine.Block, error) {
			rendered = out
			return []engine.Block{engine.Text(out.Zeta)}, nil
		},
		PresentationMeta: func(_ struct{}, out dfReport) (any, error) {
			return map[string]any{"count": len(out.List)}, nil
		},
		Execute: func(context.Context, struct{}, *engine.Run) (dfReport, error) {
			return dfReport{Zeta: "z", Alpha: 7, List: []dfInner{{Y: true}}}, nil
		},
	})
	svc := engine.New()
	dfRegister(t, svc, def)
	r := dfCall(svc, "report", dsl.NewObject())
	if r.IsError {
		t.Fatalf("got %s", dfMustJSON(t, r.JSON()))
	}
	if got, want := dfMustJSON(t, r.Value), `{"zeta":"z","alpha":7,"list":[{"y":true,"x":false}]}`; got != want {
		t.Errorf("value %s, want %s", got, want)
	}
	if want := (dfReport{Zeta: "z", Alpha: 7, List: []dfInner{{Y: true}}}); !reflect.DeepEqual(rendered, want) {
		t.Errorf("render got %+v", rendered)
	}
	if !r.HasMeta || dfMustJSON(t, r.Meta) != `{"count":1}` {
		t.Errorf("meta %v %v", r.HasMeta, r.Meta)
	}
}

// The pipeline, not the typed wrapper, validates the output; a value that
// does not encode fails as the pipeline's own output failure.
func TestDefineToolOutputFailures(t *testing.T) {
	svc := engine.New()
	dfRegister(t, svc, engine.MustDefineTool(engine.ToolOptions[struct{}, float64]{
		Name: "nan", Output: dsl.Number(),
		Render:  dfTextRender(func(struct{}, float64) string { return "" }),
		Execute: func(context.Context, struct{}, *engine.Run) (float64, error) { return math.NaN(), nil },
	}))
	dfRegister(t, svc, engine.MustDefineTool(engine.ToolOptions[struct{}, any]{
		Name: "wrong", Output: dsl.String(),
		Render:  dfTextRender(func(struct{}, any) string { return "" }),
		Execute: func(context.Context, struct{}, *engine.Run) (any, error) { return 12, nil },
	}))
	r := dfCall(svc, "nan", dsl.NewObject())
	if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeInvalidToolOutput ||
		!strings.HasPrefix(r.Error.Message, `tool "nan" returned invalid output: value is not lossless JSON: `) {
		t.Errorf("nan: %s", dfMustJSON(t, r.JSON()))
	}
	r = dfCall(svc, "wrong", dsl.NewObject())
	if !r.IsError || r.Error.Message != `tool "wrong" returned invalid output: "value" must be a string` {
		t.Errorf("wrong: %s", dfMustJSON(t, r.JSON()))
	}
}

// An interface-typed Out holding lossless JSON is passed through (object key
// order kept); anything else is encoded.
func TestDefineToolAnyOut(t *testing.T) {
	outs := []any{
		dsl.NewObject(dsl.Member{Key: "b", Value: 1.0}, dsl.Member{Key: "a", Value: 2.0}),
		struct {
			B int `json:"b"`
			A int `json:"a"`
		}{1, 2},
		map[string]int{"b": 1, "a": 2},
	}
	wants := []string{`{"b":1,"a":2}`, `{"b":1,"a":2}`, `{"a":2,"b":1}`}
	for i, out := range outs {
		svc := engine.New()
		dfRegister(t, svc, engine.MustDefineTool(engine.ToolOptions[any, any]{
			Name: "t", Output: dsl.OpenObject(),
			Render:  dfTextRender(func(any, any) string { return "" }),
			Execute: func(context.Context, any, *engine.Run) (any, error) { return out, nil },
		}))
		if r := dfCall(svc, "t", dsl.NewObject()); r.IsError || dfMustJSON(t, r.Value) != wants[i] {
			t.Errorf("%d: got %s, want value %s", i, dfMustJSON(t, r.JSON()), wants[i])
		}
	}
}

// A success a tools/execute wrapper makes up for invalid arguments cannot be
// rendered with typed arguments: it fails as invalid output.
func TestDefineToolRenderWithInvalidArgs(t *testing.T) {
	svc := engine.New()
	dfRegister(t, svc, dfReadTool(t, func(dfReadArgs) string { return "body" }))
	svc.Global().OnExecute(func(_ context.Context, _ *engine.Execution, _ func(context.Context) *engine.Result) (*engine.Result, error) {
		return &engine.Result{Value: "cached"}, nil
	})
	r := dfCall(svc, "read", dsl.NewObject())
	want := `tool "read" returned invalid output: output.render failed: invalid arguments: missing required property "path"`
	if !r.IsError || r.Error.Message != want {
		t.Errorf("got %s\nwant %s", dfMustJSON(t, r.JSON()), want)
	}
	if r = dfCall(svc, "read", dfParse(t, `{"path":"a"}`)); r.IsError || dfTextOf(r) != "cached" {
		t.Errorf("valid arguments: %s", dfMustJSON(t, r.JSON()))
	}
}

// The classifier sees typed arguments; invalid ones are exclusive (§2.6).
func TestDefineToolClassifier(t *testing.T) {
	var saw []dfReadArgs
	def := engine.MustDefineTool(engine.ToolOptions[dfReadArgs, string]{
		Name:       "read",
		Parameters: dsl.Params(dsl.Prop("path", dsl.String().Required())),
		Output:     dsl.String(),
		Render:     dfTextRender(func(dfReadArgs, string) string { return "" }),
		Execute:    func(context.Context, dfReadArgs, *engine.Run) (string, error) { return "", nil },
		IsConcurrencySafe: func(a dfReadArgs) bool {
			saw = append(saw, a)
			return !strings.HasPrefix(a.Path, "/dev/")
		},
	})
	svc := engine.New()
	dfRegister(t, svc, def)
	g := svc.Global()
	mode := func(args any) engine.Mode {
		return g.ExecutionMode(engine.Input{CallID: "c", Name: "read", Arguments: args})
	}
	if m := mode(dfParse(t, `{"path":"a.txt"}`)); m != engine.Parallel {
		t.Errorf("valid safe args: %s", m)
	}
	if m := mode(dfParse(t, `{"path":"/dev/tty"}`)); m != engine.Exclusive {
		t.Errorf("valid unsafe args: %s", m)
	}
	if m := mode(map[string]any{"path": "b.txt"}); m != engine.Parallel {
		t.Errorf("unsnapshotted valid args: %s", m)
	}
	for _, bad := range []any{dsl.NewObject(), dfParse(t, `{"path":1}`), nil, "text", []any{}, math.Inf(1), map[string]any{"path": math.NaN()}} {
		if m := mode(bad); m != engine.Exclusive {
			t.Errorf("invalid args %v: %s", bad, m)
		}
		if def.IsConcurrencySafe(bad) {
			t.Errorf("invalid args %v classified safe", bad)
		}
	}
	if want := []dfReadArgs{{"a.txt"}, {"/dev/tty"}, {"b.txt"}}; !reflect.DeepEqual(saw, want) {
		t.Errorf("the classifier saw %v, want %v (never invalid arguments)", saw, want)
	}
}

// §6 133: presenters get typed arguments when they are valid, return nil for
// invalid ones, and are absent when not declared.
func TestDefineToolPresenters(t *testing.T) {
	def := engine.MustDefineTool(engine.ToolOptions[dfReadArgs, string]{
		Name:       "read",
		Parameters: dsl.Params(dsl.Prop("path", dsl.String().Required())),
		Output:     dsl.String(),
		Render:     dfTextRender(func(dfReadArgs, string) string { return "" }),
		Execute:    func(context.Context, dfReadArgs, *engine.Run) (string, error) { return "", nil },
		PresentCall: func(a dfReadArgs) *engine.CallView {
			return &engine.CallView{Card: engine.CardGeneric, Title: "Read " + a.Path, Kind: engine.KindRead,
				Locations: []engine.FileLocation{{Path: a.Path}}}
		},
		PresentResult: func(a dfReadArgs, r engine.ResultSummary) *engine.ResultView {
			if r.IsError {
				return nil
			}
			return &engine.ResultView{Card: engine.CardRead, Path: a.Path, Offset: 1, TotalLines: 1,
				Lines: []engine.ReadFileLine{{Number: 1, Text: dfTextOfBlocks(r.Content)}}}
		},
	})
	valid := dfParse(t, `{"path":"a.go"}`)
	if got := dfMustJSON(t, def.PresentCall(valid).JSON()); got != `{"card":"generic","title":"Read a.go","kind":"read","locations":[{"path":"a.go"}]}` {
		t.Errorf("presentCall: %s", got)
	}
	summary := engine.ResultSummary{Content: []engine.Block{engine.Text("package a")}}
	if got := dfMustJSON(t, def.PresentResult(valid, summary).JSON()); got != `{"card":"read","path":"a.go","offset":1,"lines":[{"number":1,"text":"package a"}],"totalLines":1}` {
		t.Errorf("presentResult: %s", got)
	}
	for _, bad := range []any{dsl.NewObject(), dfParse(t, `{"path":false}`), nil, dsl.Undefined{}, "a.go"} {
		if v := def.PresentCall(bad); v != nil {
			t.Errorf("presentCall(%v) = %+v, want nil", bad, v)
		}
		if v := def.PresentResult(bad, summary); v != nil {
			t.Errorf("presentResult(%v) = %+v, want nil", bad, v)
		}
	}

	bare := dfEchoTool()
	if bare.PresentCall != nil || bare.PresentResult != nil || bare.IsConcurrencySafe != nil ||
		bare.FinalizeContent != nil || bare.ProjectContent != nil || bare.Output.PresentationMeta != nil || bare.Timeout != 0 {
		t.Error("undeclared optional callbacks must stay nil")
	}
}

func dfTextOfBlocks(bs []engine.Block) string { return dfTextOf(&engine.Result{Content: bs}) }

// §6 132: the timeout is attached when set, absent when omitted, and a
// negative one is refused; ToolArgsError's fields.
func TestDefineToolTimeoutAndArgsError(t *testing.T) {
	opts := engine.ToolOptions[any, any]{
		Name:   "slow",
		Output: dsl.JSON(),
		Render: dfTextRender(func(any, any) string { return "" }),
	}
	opts.Timeout = 30000 * time.Millisecond
	def, err := engine.DefineTool(opts)
	if err != nil || def.Timeout != 30*time.Second {
		t.Fatalf("timeout attached: %v %v", def, err)
	}
	opts.Timeout = 0
	if def, err = engine.DefineTool(opts); err != nil || def.Timeout != 0 {
		t.Fatalf("timeout omitted: %v %v", def, err)
	}
	for _, d := range []time.Duration{-5 * time.Millisecond, -1} {
		opts.Timeout = d
		def, err = engine.DefineTool(opts)
		if def != nil || err == nil || err.Error() != "defineTool(slow): timeoutMs must be a positive finite number" {
			t.Errorf("timeout %v: %v %v", d, def, err)
		}
	}
	func() {
		defer func() {
			if v := recover(); v == nil || !strings.Contains(dfErrText(v), "timeoutMs must be a positive finite number") {
				t.Errorf("MustDefineTool panicked with %v", v)
			}
		}()
		engine.MustDefineTool(opts)
	}()

	// ToolArgsError: name, code, violations, message joined by "; ".
	svc := engine.New()
	var caught error
	dfRegister(t, svc, engine.MustDefineTool(engine.ToolOptions[any, any]{
		Name:       "two",
		Parameters: dsl.Params(dsl.Prop("a", dsl.String().Required()), dsl.Prop("b", dsl.Number().Required())),
		Output:     dsl.JSON(),
		Render:     dfTextRender(func(any, any) string { return "" }),
		Execute:    func(context.Context, any, *engine.Run) (any, error) { return nil, nil },
		FinalizeContent: func(_ *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			caught = errors.New(r.Error.Message) // the raw invalid-input failure reaches the finalizer
			return nil, nil
		},
	}))
	r := dfCall(svc, "two", dfParse(t, `{"b":"x"}`))
	want := `invalid arguments: missing required property "a"; "b" must be a number`
	if !r.IsError || r.Error.Message != want || caught == nil || caught.Error() != want {
		t.Errorf("got %s (finalizer saw %v)", dfMustJSON(t, r.JSON()), caught)
	}
	_, err = engine.MustDefineTool(engine.ToolOptions[dfReadArgs, any]{
		Name: "x", Parameters: dsl.Params(dsl.Prop("path", dsl.String().Required())), Output: dsl.JSON(),
		Render: dfTextRender(func(dfReadArgs, any) string { return "" }),
		Execute: func(context.Context, dfReadArgs, *engine.Run) (any, error) {
			return nil, nil
		},
	}).Execute(context.Background(), dfParse(t, `{"path":1,"n":2}`), nil)
	var ae *engine.ArgsError
	if !errors.As(err, &ae) || ae.Name() != "ToolArgsError" || ae.Code() != "INVALID_ARGS" ||
		!reflect.DeepEqual(ae.Violations, []string{`"path" must be a string`}) || ae.Error() != `invalid arguments: "path" must be a string` {
		t.Errorf("ArgsError %#v", err)
	}
}

func dfErrText(v any) string {
	if err, ok := v.(error); ok {
		return err.Error()
	}
	return ""
}

// Bad specs are JsonSchemaErrors, as from the dsl.
func TestDefineToolBadSpecs(t *testing.T) {
	var se *dsl.JsonSchemaError
	_, err := engine.DefineTool(engine.ToolOptions[any, any]{Name: "p", Parameters: dsl.Params(dsl.Prop("p", dsl.String().Enum(1))), Output: dsl.JSON()})
	if !errors.As(err, &se) {
		t.Errorf("bad parameters: %v", err)
	}
	_, err = engine.DefineTool(engine.ToolOptions[any, any]{Name: "o", Output: dsl.ArrayOf(dsl.String().Required())})
	if !errors.As(err, &se) {
		t.Errorf("bad output: %v", err)
	}
	_, err = engine.DefineTool(engine.ToolOptions[any, any]{Name: "none"})
	if !errors.As(err, &se) {
		t.Errorf("no output spec: %v", err)
	}
}

// The body gets the caller's ctx and the run, and the run's effects reach
// the result.
func TestDefineToolRun(t *testing.T) {
	type key struct{}
	svc := engine.New()
	dfRegister(t, svc, engine.MustDefineTool(engine.ToolOptions[struct{}, string]{
		Name: "finish", Output: dsl.String(),
		Render: dfTextRender(func(_ struct{}, s string) string { return s }),
		Execute: func(ctx context.Context, _ struct{}, run *engine.Run) (string, error) {
			run.ConcludeTurn()
			run.DeferContext(engine.NewUserMessage([]engine.Block{engine.Text("note")}, dsl.NewObject(dsl.Member{Key: "kind", Value: "user"})))
			return ctx.Value(key{}).(string) + " " + run.CallID(), nil
		},
	}))
	ctx := context.WithValue(context.Background(), key{}, "from ctx")
	r := svc.Call(ctx, engine.Input{CallID: "c9", Name: "finish", Arguments: dsl.NewObject()})
	if r.IsError || r.Value != "from ctx c9" || !r.ConcludesTurn || len(r.AdditionalContexts) != 1 {
		t.Errorf("got %s", dfMustJSON(t, r.JSON()))
	}
}
