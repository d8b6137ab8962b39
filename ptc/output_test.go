package ptc

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// outJSON reads JSON text as dsl's Go form.
func outJSON(t testing.TB, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatalf("unmarshal %s: %v", text, err)
	}
	return v
}

// marshal writes v as canonical JSON.
func outMarshal(t testing.TB, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func TestDescriptionFlavors(t *testing.T) {
	tests := []struct {
		name        string
		lang        Language
		contains    []string
		notContains []string
	}{
		{"the TypeScript flavor names both arguments, BODY, ToolCallError and Promise.all", TypeScript,
			[]string{"Execute a TypeScript program", "BODY of an", "`code`", "`description`", "`ToolCallError`", "`Promise.all`", "Only what you print or return", "attached after the run"}, nil},
		{"the Lua flavor names both arguments, return, pcall and tools.gather, never TypeScript or JavaScript", Lua,
			[]string{"Execute a Lua program", "`code`", "`return`", "`description`", "pcall", "`ToolCallError`", "tools.gather", "`print(...)`", "attached after the run"},
			[]string{"TypeScript", "JavaScript", "await"}},
		{"a call without a runtime language gets the TypeScript flavor", "",
			[]string{"Execute a TypeScript program"}, []string{"Lua"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Description(tt.lang)
			for _, s := range tt.contains {
				if !strings.Contains(d, s) {
					t.Errorf("description lacks %q:\n%s", s, d)
				}
			}
			for _, s := range tt.notContains {
				if strings.Contains(d, s) {
					t.Errorf("description contains %q:\n%s", s, d)
				}
			}
		})
	}
}

func TestParameters(t *testing.T) {
	const label = `Clear, concise description of what this program does in active voice, 5-10 words (shown in the UI). Examples: \"Count TODO markers across packages\"; \"Read failing test and its fixture\"; \"Rename config key in every cordis.yml\".`
	tests := []struct {
		name string
		lang Language
		want string
	}{
		{"the TypeScript schema has code then description, both required, and no additionalProperties", TypeScript,
			`{"type":"object","properties":{"code":{"type":"string","description":"The program: the body of an async TypeScript function."},"description":{"type":"string","description":"` + label + `"}},"required":["code","description"]}`},
		{"the Lua schema differs only in the code text", Lua,
			`{"type":"object","properties":{"code":{"type":"string","description":"The program: the body of a Lua function."},"description":{"type":"string","description":"` + label + `"}},"required":["code","description"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Parameters(tt.lang)
			if s := outMarshal(t, got); s != tt.want {
				t.Errorf("schema\n got %s\nwant %s", s, tt.want)
			}
			// It is what the author DSL compiles, and in the enforced subset.
			compiled, err := dsl.Params(
				dsl.Prop("code", dsl.String().Describe(codeDescription(tt.lang)).Required()),
				dsl.Prop("description", dsl.String().Describe(labelDescription).Required()),
			).Compile()
			if err != nil {
				t.Fatal(err)
			}
			if outMarshal(t, compiled) != tt.want {
				t.Errorf("the author DSL compiles to %s", outMarshal(t, compiled))
			}
			if err := dsl.AssertObjectSchema(got); err != nil {
				t.Errorf("not in the enforced subset: %v", err)
			}
		})
	}
	t.Run("each call returns a fresh value", func(t *testing.T) {
		a := Parameters(Lua).(*dsl.Object)
		a.Set("type", "mutated")
		if s := outMarshal(t, Parameters(Lua)); strings.Contains(s, "mutated") {
			t.Errorf("a caller's change leaked: %s", s)
		}
	})
}

func TestParametersValidation(t *testing.T) {
	schema := dsl.MustCompile(Parameters(TypeScript))
	tests := []struct {
		name, args string
		want       []string
	}{
		{"both strings pass", `{"code":"return 1","description":"Return one"}`, nil},
		{"extra arguments pass: the root is open", `{"code":"","description":"x","extra":1}`, nil},
		{"a missing description is INVALID_ARGS material", `{"code":"return 1"}`, []string{`missing required property "description"`}},
		{"a non-string code is refused", `{"code":1,"description":"x"}`, []string{`"code" must be a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schema.ValidateArgs(outJSON(t, tt.args))
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("violations %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutputSchema(t *testing.T) {
	const want = `{"type":"object","additionalProperties":false,"properties":{"logs":{"type":"array","items":{"type":"string"}},"result":{}},"required":["logs"]}`
	if s := outMarshal(t, OutputSchema()); s != want {
		t.Fatalf("schema\n got %s\nwant %s", s, want)
	}
	compiled, err := dsl.ObjectOf(false,
		dsl.Prop("logs", dsl.ArrayOf(dsl.String()).Required()),
		dsl.Prop("result", dsl.JSON()),
	).Compile()
	if err != nil {
		t.Fatal(err)
	}
	if s := outMarshal(t, compiled); s != want {
		t.Errorf("the author form compiles to %s", s)
	}
	schema, err := dsl.Compile(OutputSchema())
	if err != nil {
		t.Fatalf("not in the enforced subset: %v", err)
	}
	tests := []struct {
		name, value string
		want        []string
	}{
		{"logs alone pass", `{"logs":[]}`, nil},
		{"a null result passes", `{"logs":["a"],"result":null}`, nil},
		{"any JSON result passes", `{"logs":[],"result":{"a":[1,"b"]}}`, nil},
		{"missing logs are refused", `{}`, []string{`missing required property "value.logs"`}},
		{"a log that is not a string is refused", `{"logs":[1]}`, []string{`"value.logs[0]" must be a string`}},
		{"an undeclared key is refused: the object is closed", `{"logs":[],"extra":1}`, []string{`"value.extra" is not a declared property (additionalProperties: false)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := schema.Validate(outJSON(t, tt.value))
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("violations %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPresentCall(t *testing.T) {
	tests := []struct {
		name, args string
		want       string // the view's JSON; "" for no view
	}{
		{"the description titles a generic execute card over the program",
			`{"code":"return 1","description":"Return the constant one"}`,
			`{"card":"generic","title":"Return the constant one","kind":"execute","rawInput":"return 1"}`},
		{"an empty program is still the raw input", `{"code":"","description":"Nothing"}`,
			`{"card":"generic","title":"Nothing","kind":"execute","rawInput":""}`},
		{"arguments without a description have no view", `{"code":"return 1"}`, ""},
		{"a non-string code has no view", `{"code":1,"description":"x"}`, ""},
		{"arguments that are not an object have no view", `"return 1"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view := PresentCall(outJSON(t, tt.args))
			if tt.want == "" {
				if view != nil {
					t.Errorf("view %+v, want none", view)
				}
				return
			}
			if err := view.Validate(); err != nil {
				t.Fatal(err)
			}
			if s := outMarshal(t, view.JSON()); s != tt.want {
				t.Errorf("view\n got %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestCheckDescription(t *testing.T) {
	tests := []struct {
		name, args string
		ok         bool
	}{
		{"a plain label passes", `{"description":"Count files"}`, true},
		{"a label with surrounding spaces passes", `{"description":"  x  "}`, true},
		{"an empty label is refused", `{"description":""}`, false},
		{"a whitespace-only label is refused", `{"description":"   \t\n"}`, false},
		{"a label of Unicode spaces and a BOM is refused, as trim() trims them", `{"description":"\u00a0\u2028\u3000\ufeff"}`, false},
		{"NEL is not JavaScript whitespace, so it passes", `{"description":"\u0085"}`, true},
		{"a missing label is refused", `{"code":"x"}`, false},
		{"a label that is not a string is refused", `{"description":3}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDescription(outJSON(t, tt.args))
			if tt.ok {
				if err != nil {
					t.Errorf("err %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidDescription) || err.Error() != "invalid description: expected a non-empty string" {
				t.Fatalf("err %v, want the invalid description error", err)
			}
			var coded engine.CodedError
			if errors.As(err, &coded) {
				t.Errorf("the error is coded (%s), want a plain error", coded.Code())
			}
		})
	}
}

func TestOutputValue(t *testing.T) {
	tests := []struct {
		name string
		run  Result
		want string // the value's JSON, or the error's message
		err  bool
	}{
		{"a run without a value has logs only", Result{}, `{"logs":[]}`, false},
		{"an explicit null result is present", Result{HasValue: true, Logs: []string{"a"}}, `{"logs":["a"],"result":null}`, false},
		{"the value follows the logs", Result{HasValue: true, Value: outJSON(t, `{"n":1}`), Logs: []string{"a", "b"}},
			`{"logs":["a","b"],"result":{"n":1}}`, false},
		{"a failure with logs carries the captured output",
			Result{Logs: []string{"captured before failure"}, Err: &Failure{Kind: KindOutputLimit, Message: "outer output exceeded 8 bytes"}},
			"code run failed (output-limit): outer output exceeded 8 bytes\nCaptured output:\ncaptured before failure", true},
		{"several captured logs are joined with newlines",
			Result{Logs: []string{"one", "two"}, Err: &Failure{Kind: KindException, Message: "Error: boom"}},
			"code run failed (exception): Error: boom\nCaptured output:\none\ntwo", true},
		{"a failure without logs has no captured output section",
			Result{Logs: []string{}, Err: &Failure{Kind: KindTimeout, Message: "timed out after 30000ms"}},
			"code run failed (timeout): timed out after 30000ms", true},
		{"a failure ignores a value the runtime also gave",
			Result{HasValue: true, Value: "x", Err: &Failure{Kind: KindAbort, Message: "aborted"}},
			"code run failed (abort): aborted", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value, err := OutputValue(tt.run)
			if !tt.err {
				if err != nil {
					t.Fatal(err)
				}
				if s := outMarshal(t, value); s != tt.want {
					t.Errorf("value %s, want %s", s, tt.want)
				}
				if vs := dsl.MustCompile(OutputSchema()).Validate(value); vs != nil {
					t.Errorf("the value fails the output schema: %q", vs)
				}
				return
			}
			if value != nil {
				t.Errorf("value %v beside the error", value)
			}
			var failed *CodeRunFailedError
			if !errors.As(err, &failed) {
				t.Fatalf("err %T %v, want *CodeRunFailedError", err, err)
			}
			if err.Error() != tt.want {
				t.Errorf("message\n got %q\nwant %q", err.Error(), tt.want)
			}
			var coded engine.CodedError
			if !errors.As(err, &coded) || coded.Name() != "CodeRunFailedError" || coded.Code() != "CODE_RUN_FAILED" {
				t.Errorf("err is not the coded CodeRunFailedError/CODE_RUN_FAILED")
			}
		})
	}
	t.Run("the error keeps its own copy of the logs", func(t *testing.T) {
		logs := []string{"before"}
		_, err := OutputValue(Result{Logs: logs, Err: &Failure{Kind: KindException, Message: "x"}})
		logs[0] = "changed"
		if !strings.HasSuffix(err.Error(), "\nbefore") {
			t.Errorf("message %q follows the runtime's slice", err.Error())
		}
	})
}

// TestOutputThroughThePipeline runs a fixture tool built from this file's
// parts through the engine, as the executor will: the content the pipeline
// renders from the error and the value.
func TestOutputThroughThePipeline(t *testing.T) {
	var next Result
	def := &engine.Definition{
		Name:        "run_code_fixture",
		Description: Description(TypeScript),
		Parameters:  Parameters(TypeScript),
		Output: engine.Output{Schema: OutputSchema(), Render: func(_, value any) ([]engine.Block, error) {
			return RenderOutput(value), nil
		}},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			if err := CheckDescription(args); err != nil {
				return nil, err
			}
			return OutputValue(next)
		},
	}
	svc := engine.New()
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		description string
		run         Result
		content     string
		info        string // name/code of the failure, "" for none
	}{
		{"a run that failed with captured output",
			"Run the test program",
			Result{Logs: []string{"captured before failure"}, Err: &Failure{Kind: KindOutputLimit, Message: "outer output exceeded 8 bytes"}},
			"Error: code run failed (output-limit): outer output exceeded 8 bytes\nCaptured output:\ncaptured before failure",
			"CodeRunFailedError/CODE_RUN_FAILED"},
		{"a whitespace-only description fails without a code", "   ", Result{},
			"Error: invalid description: expected a non-empty string", ""},
		{"logs plus a string result", "Run the test program", Result{Logs: []string{"printed"}, HasValue: true, Value: "returned"},
			"printed\nreturned", ""},
		{"a run with no output", "Run the test program", Result{Logs: []string{}}, "(run_code completed with no output)", ""},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next = tt.run
			args := dsl.NewObject(dsl.Member{Key: "code", Value: "return 1"}, dsl.Member{Key: "description", Value: tt.description})
			r := svc.Call(context.Background(), engine.Input{CallID: "c" + string(rune('0'+i)), Name: def.Name, Arguments: args})
			if len(r.Content) != 1 || r.Content[0].(engine.TextBlock).Text != tt.content {
				t.Fatalf("content %+v, want %q", r.Content, tt.content)
			}
			info := ""
			if r.Error != nil && r.Error.Info != nil {
				info = r.Error.Info.Name + "/" + r.Error.Info.Code
			}
			if info != tt.info || r.IsError != (r.Error != nil) {
				t.Errorf("info %q (isError %v), want %q", info, r.IsError, tt.info)
			}
		})
	}
}

func TestRenderOutput(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"logs only", `{"logs":["printed"]}`, "printed"},
		{"result only", `{"logs":[],"result":"returned"}`, "returned"},
		{"logs plus result", `{"logs":["printed"],"result":"returned"}`, "printed\nreturned"},
		{"no output", `{"logs":[]}`, "(run_code completed with no output)"},
		{"several logs, joined with newlines", `{"logs":["a","b"],"result":"c"}`, "a\nb\nc"},
		{"a string result is verbatim, without quotes", `{"logs":[],"result":"say \"hi\"\n"}`, "say \"hi\"\n"},
		{"an empty string result and an empty log are dropped", `{"logs":[""],"result":""}`, "(run_code completed with no output)"},
		{"empty logs between others are kept by the join", `{"logs":["a","","b"]}`, "a\n\nb"},
		{"a null result is present", `{"logs":[],"result":null}`, "null"},
		{"a false result is present", `{"logs":["x"],"result":false}`, "x\nfalse"},
		{"an object result is pretty-printed", `{"logs":[],"result":{"n":42,"ok":true}}`, "{\n  \"n\": 42,\n  \"ok\": true\n}"},
		{"an array result after logs", `{"logs":["l"],"result":["x",2]}`, "l\n[\n  \"x\",\n  2\n]"},
		{"an empty object result", `{"logs":[],"result":{}}`, "{}"},
		{"an empty array result", `{"logs":[],"result":[]}`, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks := RenderOutput(outJSON(t, tt.value))
			if len(blocks) != 1 {
				t.Fatalf("%d blocks, want 1", len(blocks))
			}
			if got := blocks[0].(engine.TextBlock).Text; got != tt.want {
				t.Errorf("text\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestPrettyJSON(t *testing.T) {
	tests := []struct {
		name, value, want string
	}{
		{"an object has two-space indentation and one space after the colon", `{"n":42,"ok":true}`, "{\n  \"n\": 42,\n  \"ok\": true\n}"},
		{"nested containers match JSON.stringify(v, null, 2)", `{"outer":[{"inner":true}]}`,
			"{\n  \"outer\": [\n    {\n      \"inner\": true\n    }\n  ]\n}"},
		{"an array", `["x",2]`, "[\n  \"x\",\n  2\n]"},
		{"empty containers are inline at every depth", `{"a":[],"b":{},"c":[[],{}]}`,
			"{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    [],\n    {}\n  ]\n}"},
		{"keys keep their insertion order", `{"b":1,"a":2}`, "{\n  \"b\": 1,\n  \"a\": 2\n}"},
		{"scalars at the root", `null`, "null"},
		{"a string root is quoted", `"a\"b"`, `"a\"b"`},
		{"nested strings and keys are JSON-quoted", `{"k\n":"v\"\u2028\u0001"}`, "{\n  \"k\\n\": \"v\\\"\u2028\\u0001\"\n}"},
		{"numbers are written as String(n)", `[1e21,1e-7,0.1,-1.5,100000000000000000000,123456789012345680000,5e-324,1.7976931348623157e308,0.000001]`,
			"[\n  1e+21,\n  1e-7,\n  0.1,\n  -1.5,\n  100000000000000000000,\n  123456789012345680000,\n  5e-324,\n  1.7976931348623157e+308,\n  0.000001\n]"},
		{"a container at depth 5 is compact, depth 4 is not", `[[[[[[1,2],{"k":[3]}]]]]]`,
			"[\n  [\n    [\n      [\n        [\n          [1,2],\n          {\"k\":[3]}\n        ]\n      ]\n    ]\n  ]\n]"},
		{"an object at depth 5 is compact with no spaces", `{"a":{"b":{"c":{"d":{"e":{"f":1,"g":[2,{"h":null}]},"s":"x"}}}}}`,
			"{\n  \"a\": {\n    \"b\": {\n      \"c\": {\n        \"d\": {\n          \"e\": {\"f\":1,\"g\":[2,{\"h\":null}]},\n          \"s\": \"x\"\n        }\n      }\n    }\n  }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := outJSON(t, tt.value)
			if got := PrettyJSON(v); got != tt.want {
				t.Errorf("text\n got %q\nwant %q", got, tt.want)
			}
			if got, want := PrettyJSON(v), outUpstream(v); got != want {
				t.Errorf("differs from upstream's algorithm\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestPrettyJSONGoValues(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"a map is written with its keys sorted", map[string]any{"b": 1, "a": []string{"x"}}, "{\n  \"a\": [\n    \"x\"\n  ],\n  \"b\": 1\n}"},
		{"an int is a number", 3, "3"},
		{"an object holding Go values", dsl.NewObject(dsl.Member{Key: "n", Value: int64(7)}), "{\n  \"n\": 7\n}"},
		{"NaN has no JSON form", math.NaN(), "(unprintable value: value: NaN is not lossless JSON)"},
		{"invalid UTF-8 has no JSON form", []any{"\xff"}, "(unprintable value: value[0]: must be a lossless JSON value)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PrettyJSON(tt.v)
			if strings.HasPrefix(tt.want, "(unprintable value: ") {
				if !strings.HasPrefix(got, "(unprintable value: ") {
					t.Errorf("text %q, want the unprintable marker", got)
				}
				return
			}
			if got != tt.want {
				t.Errorf("text\n got %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("a value that contains itself is unprintable, not an endless walk", func(t *testing.T) {
		o := dsl.NewObject()
		o.Set("self", []any{o})
		if got := PrettyJSON(o); !strings.HasPrefix(got, "(unprintable value: ") {
			t.Errorf("text %q", got)
		}
	})
}

// outDeepValue nests upstream's fixture depth arrays deep.
func outDeepValue(t testing.TB, depth int) any {
	var v any = outJSON(t, `{"emptyArray":[],"emptyObject":{},"pair":["leaf",2],"record":{"first":true,"second":null}}`)
	for range depth {
		v = []any{v}
	}
	return v
}

func TestPrettyJSONDeep(t *testing.T) {
	tests := []struct {
		name  string
		depth int
		max   int
	}{
		{"5,000 levels stay under 11,000 characters (upstream's case)", 5_000, 11_000},
		{"90,000 levels stay linear in the input", 90_000, 200_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := PrettyJSON(outDeepValue(t, tt.depth))
			if !strings.HasPrefix(text, "[\n  [\n    [") || !strings.Contains(text, `"leaf"`) || !strings.HasSuffix(text, "]") {
				t.Errorf("text starts %q, ends %q", text[:min(40, len(text))], text[max(0, len(text)-40):])
			}
			if len(text) >= tt.max {
				t.Errorf("%d characters, want fewer than %d", len(text), tt.max)
			}
			// The pretty levels are indented, the rest is compact and valid JSON.
			lines := strings.Split(text, "\n")
			if len(lines) != 11 {
				t.Errorf("%d lines, want 11 (5 levels opened and closed around the compact one)", len(lines))
			}
			compact := strings.TrimLeft(lines[5], " ")
			if len(lines[5])-len(compact) != 10 {
				t.Errorf("the compact line is indented %d, want 10", len(lines[5])-len(compact))
			}
			if _, err := dsl.Unmarshal([]byte(compact)); err != nil {
				t.Errorf("the compact part is not JSON: %v", err)
			}
			if tt.depth == 5_000 && text != outUpstream(outDeepValue(t, tt.depth)) {
				t.Error("differs from upstream's algorithm")
			}
		})
	}
}

// outUpstream is upstream's renderJsonValue (code-mode.ts), task for
// task, with dsl.Marshal standing in for JSON.stringify and String(n). It is
// the reference the printer is compared with.
func outUpstream(v any) string {
	if s, ok := v.(string); ok {
		b, _ := dsl.Marshal(s)
		return string(b)
	}
	type task struct {
		text    string
		isText  bool
		value   any
		depth   int
		compact bool
	}
	quote := func(s string) string { b, _ := dsl.Marshal(s); return string(b) }
	var chunks strings.Builder
	tasks := []task{{value: v}}
	for len(tasks) > 0 {
		tk := tasks[len(tasks)-1]
		tasks = tasks[:len(tasks)-1]
		if tk.isText {
			chunks.WriteString(tk.text)
			continue
		}
		compact := tk.compact || (tk.depth+1)*2 > 10
		child := tk.depth + 1
		switch x := tk.value.(type) {
		case []any:
			chunks.WriteString("[")
			if len(x) == 0 {
				chunks.WriteString("]")
				continue
			}
			if compact {
				tasks = append(tasks, task{isText: true, text: "]"})
			} else {
				tasks = append(tasks, task{isText: true, text: "\n" + strings.Repeat("  ", tk.depth) + "]"})
			}
			for i := len(x) - 1; i >= 0; i-- {
				tasks = append(tasks, task{value: x[i], depth: child, compact: compact})
				var sep string
				switch {
				case compact && i > 0:
					sep = ","
				case compact:
				case i == 0:
					sep = "\n" + strings.Repeat("  ", child)
				default:
					sep = ",\n" + strings.Repeat("  ", child)
				}
				tasks = append(tasks, task{isText: true, text: sep})
			}
		case *dsl.Object:
			chunks.WriteString("{")
			if x.Len() == 0 {
				chunks.WriteString("}")
				continue
			}
			if compact {
				tasks = append(tasks, task{isText: true, text: "}"})
			} else {
				tasks = append(tasks, task{isText: true, text: "\n" + strings.Repeat("  ", tk.depth) + "}"})
			}
			for i := x.Len() - 1; i >= 0; i-- {
				key, item := x.At(i)
				tasks = append(tasks, task{value: item, depth: child, compact: compact})
				var sep string
				switch {
				case compact && i > 0:
					sep = "," + quote(key) + ":"
				case compact:
					sep = quote(key) + ":"
				case i == 0:
					sep = "\n" + strings.Repeat("  ", child) + quote(key) + ": "
				default:
					sep = ",\n" + strings.Repeat("  ", child) + quote(key) + ": "
				}
				tasks = append(tasks, task{isText: true, text: sep})
			}
		default:
			b, _ := dsl.Marshal(x)
			chunks.Write(b)
		}
	}
	return chunks.String()
}
