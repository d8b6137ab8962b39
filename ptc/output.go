package ptc

import (
	"errors"
	"strings"
	"unicode"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// ToolName is the model-facing name of the run_code tool (§1), the name the
// engine reserves for its transport.
const ToolName = engine.TransportName

// The run_code flavors (§1, §1.2): the tool description and the code
// parameter's description of each language.
const (
	typeScriptDescription = "Execute a TypeScript program against the available tools. Takes two required " +
		"arguments: `code`, the BODY of an async function (erasable syntax only; top-level " +
		"`await` and `return` work), and `description`, a short summary of what the program " +
		"does. Call tools as `await tools.name(args)` per the declarations in the system " +
		"prompt. A failed call throws `ToolCallError`; run independent calls together with " +
		"`Promise.all`. Only what you print or return is program output — curate it. Image-bearing " +
		"subtool results are attached after the run."
	typeScriptCodeDescription = "The program: the body of an async TypeScript function."

	luaDescription = "Execute a Lua program against the available tools. Takes two required " +
		"arguments: `code`, the BODY of a function (`return` gives the program's result), and " +
		"`description`, a short summary of what the program does. Call tools as " +
		"`tools.name{key = value}` per the declarations in the system prompt. A failed call " +
		"raises a `ToolCallError`: catch it with `local ok, e = pcall(tools.name, args)`. Run " +
		"independent calls together with `tools.gather(f1, f2, ...)`, which returns an array " +
		"table of their results in order. Only what you `print(...)` " +
		"or `return` is program output — curate it. Image-bearing subtool results are attached " +
		"after the run."
	luaCodeDescription = "The program: the body of a Lua function."

	// labelDescription is the description parameter's text, the same in
	// every language.
	labelDescription = "Clear, concise description of what this program does in active voice, " +
		"5-10 words (shown in the UI). Examples: \"Count TODO markers across packages\"; " +
		"\"Read failing test and its fixture\"; \"Rename config key in every cordis.yml\"."
)

// Description returns the run_code tool description for programs in lang.
// Lua gets the Lua flavor; every other language, "" (no runtime) included,
// gets the TypeScript one, as upstream degrades without a runtime.
func Description(lang Language) string {
	if lang == Lua {
		return luaDescription
	}
	return typeScriptDescription
}

// codeDescription returns the code parameter's description for lang, with
// Description's fallback.
func codeDescription(lang Language) string {
	if lang == Lua {
		return luaCodeDescription
	}
	return typeScriptCodeDescription
}

// Parameters returns run_code's raw parameter schema for lang (§1.2): an
// open object of two required strings, code then description. Each call
// returns a fresh value.
func Parameters(lang Language) any {
	return dsl.NewObject(
		dsl.Member{Key: "type", Value: "object"},
		dsl.Member{Key: "properties", Value: dsl.NewObject(
			dsl.Member{Key: "code", Value: stringSchema(codeDescription(lang))},
			dsl.Member{Key: "description", Value: stringSchema(labelDescription)},
		)},
		dsl.Member{Key: "required", Value: []any{"code", "description"}},
	)
}

func stringSchema(description string) *dsl.Object {
	return dsl.NewObject(dsl.Member{Key: "type", Value: "string"}, dsl.Member{Key: "description", Value: description})
}

// OutputSchema returns run_code's raw output schema (§1.4): the closed object
// {logs: string[], result?: any JSON}, as the author form
// {logs: {type: array, items: string, required: true}, result: {type: json}}
// compiles. Each call returns a fresh value.
func OutputSchema() any {
	return dsl.NewObject(
		dsl.Member{Key: "type", Value: "object"},
		dsl.Member{Key: "additionalProperties", Value: false},
		dsl.Member{Key: "properties", Value: dsl.NewObject(
			dsl.Member{Key: "logs", Value: dsl.NewObject(
				dsl.Member{Key: "type", Value: "array"},
				dsl.Member{Key: "items", Value: dsl.NewObject(dsl.Member{Key: "type", Value: "string"})},
			)},
			dsl.Member{Key: "result", Value: dsl.NewObject()},
		)},
		dsl.Member{Key: "required", Value: []any{"logs"}},
	)
}

// PresentCall presents a run_code call (§1.5): a generic card titled with the
// model's description, kind execute, the program as raw input. Arguments
// without a string code and description have no view (nil).
func PresentCall(args any) *engine.CallView {
	code, okCode := stringArg(args, "code")
	description, okDescription := stringArg(args, "description")
	if !okCode || !okDescription {
		return nil
	}
	return &engine.CallView{Card: engine.CardGeneric, Title: description, Kind: engine.KindExecute, RawInput: code}
}

// ErrInvalidDescription is CheckDescription's error: a plain error, with no
// name or code.
var ErrInvalidDescription = errors.New("invalid description: expected a non-empty string")

// CheckDescription returns ErrInvalidDescription when the arguments'
// description is not a string that is non-empty once trimmed of whitespace
// as JavaScript's String.prototype.trim trims it (§1.2).
func CheckDescription(args any) error {
	description, ok := stringArg(args, "description")
	if !ok || strings.TrimFunc(description, isJSSpace) == "" {
		return ErrInvalidDescription
	}
	return nil
}

// isJSSpace reports whether r is WhiteSpace or LineTerminator in
// ECMAScript: Unicode's spaces without NEL (U+0085), plus the BOM (U+FEFF).
func isJSSpace(r rune) bool {
	return r == '\uFEFF' || (r != '\u0085' && unicode.IsSpace(r))
}

// stringArg returns the string member key of the arguments object args.
func stringArg(args any, key string) (string, bool) {
	o, ok := args.(*dsl.Object)
	if !ok {
		return "", false
	}
	v, _ := o.Get(key)
	s, ok := v.(string)
	return s, ok
}

// CodeRunFailedError is run_code's error for a failed run (§1.4): a program
// exception, an exceeded budget, an abort or a runtime's death. It is an
// [engine.CodedError], so the failure keeps its name and code.
type CodeRunFailedError struct {
	Failure Failure
	Logs    []string // the log entries captured before the failure
}

// Error returns "code run failed (<kind>): <message>", followed, when logs
// were captured, by "\nCaptured output:\n" and the logs joined with "\n".
func (e *CodeRunFailedError) Error() string {
	var b strings.Builder
	b.WriteString("code run failed (")
	b.WriteString(string(e.Failure.Kind))
	b.WriteString("): ")
	b.WriteString(e.Failure.Message)
	if len(e.Logs) > 0 {
		b.WriteString("\nCaptured output:\n")
		b.WriteString(strings.Join(e.Logs, "\n"))
	}
	return b.String()
}

// Name returns CodeRunFailedError.
func (e *CodeRunFailedError) Name() string { return "CodeRunFailedError" }

// Code returns CODE_RUN_FAILED.
func (e *CodeRunFailedError) Code() string { return "CODE_RUN_FAILED" }

// OutputValue returns run_code's canonical value for a run (§1.4): for a
// success {logs, result?}, result present iff the run had a value (an
// explicit null is one); for a failure a *CodeRunFailedError.
func OutputValue(r Result) (any, error) {
	if r.Err != nil {
		return nil, &CodeRunFailedError{Failure: *r.Err, Logs: append([]string(nil), r.Logs...)}
	}
	logs := make([]any, len(r.Logs))
	for i, l := range r.Logs {
		logs[i] = l
	}
	out := dsl.NewObject(dsl.Member{Key: "logs", Value: logs})
	if r.HasValue {
		out.Set("result", r.Value)
	}
	return out, nil
}

// noOutput is the content of a run that printed and returned nothing.
const noOutput = "(run_code completed with no output)"

// RenderOutput returns the content the model sees for run_code's canonical
// value (§1.4): one text block of the logs joined with "\n", then the result
// (a string as it is, any other value by [PrettyJSON]), the empty parts
// dropped and the rest joined with "\n"; with nothing left,
// "(run_code completed with no output)".
func RenderOutput(value any) []engine.Block {
	var logs []string
	var result any
	hasResult := false
	if o, ok := value.(*dsl.Object); ok {
		v, _ := o.Get("logs")
		switch x := v.(type) {
		case []any:
			for _, l := range x {
				if s, ok := l.(string); ok {
					logs = append(logs, s)
				}
			}
		case []string:
			logs = x
		}
		result, hasResult = o.Get("result")
	}
	parts := make([]string, 0, 2)
	if s := strings.Join(logs, "\n"); s != "" {
		parts = append(parts, s)
	}
	if hasResult {
		s, ok := result.(string)
		if !ok {
			s = PrettyJSON(result)
		}
		if s != "" {
			parts = append(parts, s)
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = noOutput
	}
	return []engine.Block{engine.TextBlock{Text: text}}
}

// The pretty printer's indentation: two spaces a level, at most maxIndent
// characters in all. A container whose items would be indented further, one
// at compactDepth or deeper, is written compact.
const (
	indentUnit   = "  "
	maxIndent    = 10
	compactDepth = maxIndent / len(indentUnit)
	indents      = "          " // maxIndent spaces
)

// prettyFrame is an open container of the pretty printer.
type prettyFrame struct {
	list  []any
	obj   *dsl.Object
	n, i  int // item count, next item
	depth int // the container's depth (the root is 0)
}

// PrettyJSON writes the lossless JSON value v as run_code presents a result
// that is not a string (§1.4): two-space indentation, "key": value, object
// keys in their order, numbers as JavaScript's String(n) writes them, strings
// quoted, empty containers inline. A container at depth 5 or more (the root
// is at depth 0) is written compact, as canonical JSON, so the output stays
// linear in the size of v. The walk keeps its own stack: however deep v is,
// PrettyJSON does not recurse.
//
// A value that is not lossless JSON (dsl.CheckLossless) has no JSON form;
// PrettyJSON then writes "(unprintable value: <reason>)".
func PrettyJSON(v any) string {
	if err := dsl.CheckLossless(v); err != nil {
		return "(unprintable value: " + err.Error() + ")"
	}
	var b []byte
	var stack []prettyFrame
	depth := 0
	for {
		// Write v, at depth, or open it when it is a pretty container.
		switch x := v.(type) {
		case []any:
			if len(x) > 0 && depth < compactDepth {
				stack = append(stack, prettyFrame{list: x, n: len(x), depth: depth})
				b = append(b, '[')
			} else {
				b, _ = dsl.AppendJSON(b, x)
			}
		case *dsl.Object:
			if x.Len() > 0 && depth < compactDepth {
				stack = append(stack, prettyFrame{obj: x, n: x.Len(), depth: depth})
				b = append(b, '{')
			} else {
				b, _ = dsl.AppendJSON(b, x)
			}
		case nil, bool, float64, string:
			b, _ = dsl.AppendJSON(b, x)
		default:
			// Lossless but not in dsl's Go form (a map, a typed slice, an
			// int): its snapshot is, and is written in its place.
			s, err := dsl.Snapshot(x)
			if err != nil { // not reached: v is lossless
				return "(unprintable value: " + err.Error() + ")"
			}
			v = s
			continue
		}

		// Move to the next item of the innermost open container, closing
		// the containers that are done.
		for {
			if len(stack) == 0 {
				return string(b)
			}
			f := &stack[len(stack)-1]
			if f.i < f.n {
				if f.i > 0 {
					b = append(b, ',')
				}
				b = append(b, '\n')
				b = append(b, indents[:len(indentUnit)*(f.depth+1)]...)
				if f.obj != nil {
					var key string
					key, v = f.obj.At(f.i)
					b, _ = dsl.AppendJSON(b, key)
					b = append(b, ':', ' ')
				} else {
					v = f.list[f.i]
				}
				f.i++
				depth = f.depth + 1
				break
			}
			b = append(b, '\n')
			b = append(b, indents[:len(indentUnit)*f.depth]...)
			if f.obj != nil {
				b = append(b, '}')
			} else {
				b = append(b, ']')
			}
			stack = stack[:len(stack)-1]
		}
	}
}
