package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/display"
)

// ToolOptions describes a Go-native tool for [DefineTool]: its schemas in the
// author DSL and typed callbacks. Args is the Go type the validated arguments
// are decoded into and Out the Go type of the body's value; either may be
// `any` to work on the JSON values themselves (*dsl.Object, []any, float64,
// string, bool, nil).
//
// Arguments are decoded with encoding/json from their canonical JSON text, so
// struct fields follow json tags (matching is encoding/json's: exact tag
// first, then case-insensitive). Values are encoded with encoding/json and
// read back with [dsl.Unmarshal], so an object's keys follow struct field
// order. A *dsl.Object field reads and writes its members in order.
type ToolOptions[Args, Out any] struct {
	Name        string
	Description string
	// Parameters is the parameter map, compiled with dsl.CompileParameterSpec
	// into the definition's raw parameters schema.
	Parameters dsl.ParamSpec
	// Output is the value spec, compiled with dsl.CompileValueSpec into the
	// output schema the pipeline enforces.
	Output dsl.Spec
	// Render turns a success's value into the content the model sees.
	Render func(args Args, out Out) ([]Block, error)
	// PresentationMeta, when set, projects the value into the result's meta.
	PresentationMeta func(args Args, out Out) (any, error)
	// Execute runs the call with arguments that passed the parameter schema.
	Execute func(ctx context.Context, args Args, run *Run) (Out, error)
	// Timeout, when set, must be positive; the timeout policy enforces it.
	Timeout time.Duration
	// IsConcurrencySafe classifies valid arguments; invalid ones are exclusive.
	IsConcurrencySafe func(args Args) bool
	// PresentCall presents valid arguments; invalid ones have no view.
	PresentCall func(args Args) *CallView
	// PresentResult presents a result of valid arguments; invalid ones have no view.
	PresentResult func(args Args, r ResultSummary) *ResultView
	// FinalizeContent and ProjectContent are passed through unchanged: they
	// receive the raw execution and result, invalid-argument failures included.
	FinalizeContent func(exec *Execution, r *Result) ([]Block, error)
	ProjectContent  func(exec *Execution, r *Result) ([]Block, error)
}

// DefineTool builds a registrable definition from typed options (§4.7).
//
// It fails when Timeout is negative (`defineTool(<name>): timeoutMs must be a
// positive finite number`) or a spec does not compile: a *dsl.JsonSchemaError
// wrapped with the schema it is in (`tool "x": output.schema: unsupported
// JSON schema: …`, see [SchemaError]).
// In the definition:
//   - Execute validates the arguments against the parameter schema (an
//     [ArgsError] with every violation when they fail: the call's failure is
//     INVALID_ARGS), decodes them into Args, runs the body and encodes its Out
//     as the JSON value the pipeline then validates against the output schema.
//   - Render and PresentationMeta receive the arguments decoded into Args and
//     the value decoded into Out. Arguments that do not validate (a success a
//     tools/execute wrapper made up) make them fail with the ArgsError.
//   - IsConcurrencySafe, PresentCall and PresentResult are nil unless given;
//     for arguments that fail validation or decoding they return false or nil
//     without calling the typed callback.
//
// Every typed callback thus sees arguments that passed the parameter schema.
func DefineTool[Args, Out any](opts ToolOptions[Args, Out]) (*Definition, error) {
	if opts.Timeout < 0 {
		return nil, fmt.Errorf("defineTool(%s): timeoutMs must be a positive finite number", display.Line(opts.Name, display.MaxName))
	}
	params, err := dsl.CompileParameterSpec(opts.Parameters.Value())
	if err != nil {
		return nil, SchemaError(opts.Name, "parameters", err)
	}
	output, err := dsl.CompileValueSpec(opts.Output.Value())
	if err != nil {
		return nil, SchemaError(opts.Name, "output.schema", err)
	}
	schema, err := dsl.Compile(params)
	if err != nil {
		return nil, SchemaError(opts.Name, "parameters", err)
	}
	t := &typedTool[Args, Out]{name: opts.Name, schema: schema, anyArgs: isAny[Args](), anyOut: isAny[Out]()}
	def := &Definition{
		Name:            opts.Name,
		Description:     opts.Description,
		Parameters:      params,
		Output:          Output{Schema: output},
		Timeout:         opts.Timeout,
		FinalizeContent: opts.FinalizeContent,
		ProjectContent:  opts.ProjectContent,
	}
	def.ValidateArgs = func(args any) []string {
		var ae *ArgsError
		if _, err := t.args(args); errors.As(err, &ae) {
			return ae.Violations
		}
		return nil
	}
	if render := opts.Render; render != nil {
		def.Output.Render = func(args, value any) ([]Block, error) {
			a, o, err := t.argsAndOut(args, value)
			if err != nil {
				return nil, err
			}
			return render(a, o)
		}
	}
	if meta := opts.PresentationMeta; meta != nil {
		def.Output.PresentationMeta = func(args, value any) (any, error) {
			a, o, err := t.argsAndOut(args, value)
			if err != nil {
				return nil, err
			}
			return meta(a, o)
		}
	}
	if body := opts.Execute; body != nil {
		def.Execute = func(ctx context.Context, args any, run *Run) (any, error) {
			a, err := t.args(args)
			if err != nil {
				return nil, err
			}
			out, err := body(ctx, a, run)
			if err != nil {
				return nil, err
			}
			return t.encode(out)
		}
	}
	if classify := opts.IsConcurrencySafe; classify != nil {
		def.IsConcurrencySafe = func(args any) bool {
			a, err := t.args(args)
			return err == nil && classify(a)
		}
	}
	if present := opts.PresentCall; present != nil {
		def.PresentCall = func(args any) *CallView {
			a, err := t.args(args)
			if err != nil {
				return nil
			}
			return present(a)
		}
	}
	if present := opts.PresentResult; present != nil {
		def.PresentResult = func(args any, r ResultSummary) *ResultView {
			a, err := t.args(args)
			if err != nil {
				return nil
			}
			return present(a, r)
		}
	}
	return def, nil
}

// SchemaError wraps err, a *dsl.JsonSchemaError of the schema of tool
// name's definition at field ("parameters" or "output.schema"), so that its
// text says which schema it is: `tool "x": output.schema: unsupported JSON
// schema: schema.pattern is not a supported keyword …`. errors.As still
// finds the *dsl.JsonSchemaError, with the spec's message.
func SchemaError(name, field string, err error) error {
	return fmt.Errorf("tool %s: %s: %w", display.Quote(name), field, err)
}

// MustDefineTool is [DefineTool] for package-level tools: it panics when the
// options are invalid.
func MustDefineTool[Args, Out any](opts ToolOptions[Args, Out]) *Definition {
	def, err := DefineTool(opts)
	if err != nil {
		panic(err)
	}
	return def
}

// typedTool converts between a tool's JSON values and its Go types.
type typedTool[Args, Out any] struct {
	name    string
	schema  *dsl.Schema // the compiled parameters schema
	anyArgs bool        // Args is an interface type: pass the JSON value
	anyOut  bool
}

func isAny[T any]() bool { return reflect.TypeFor[T]().Kind() == reflect.Interface }

// args validates raw arguments and decodes them into Args. Its errors are
// *ArgsError.
func (t *typedTool[Args, Out]) args(raw any) (Args, error) {
	var a Args
	// The pipeline hands bodies a snapshot already; classifiers and presenters
	// may be called with anything.
	snap, err := dsl.SnapshotAt("arguments", raw)
	if err != nil {
		return a, &ArgsError{Violations: []string{err.Error()}}
	}
	if vs := t.schema.ValidateArgs(snap); vs != nil {
		return a, &ArgsError{Violations: vs}
	}
	if t.anyArgs {
		if v, ok := snap.(Args); ok {
			return v, nil
		}
	}
	if err := decode(snap, &a); err != nil {
		return a, &ArgsError{Violations: []string{fmt.Sprintf("arguments do not fit %s: %v", reflect.TypeFor[Args](), err)}}
	}
	return a, nil
}

// argsAndOut decodes a success's arguments and value.
func (t *typedTool[Args, Out]) argsAndOut(args, value any) (Args, Out, error) {
	var o Out
	a, err := t.args(args)
	if err != nil {
		return a, o, err
	}
	if t.anyOut {
		if v, ok := value.(Out); ok {
			return a, v, nil
		}
	}
	if err := decode(value, &o); err != nil {
		return a, o, fmt.Errorf("the value does not fit %s: %w", reflect.TypeFor[Out](), err)
	}
	return a, o, nil
}

// encode turns the body's Out into a JSON value. An interface-typed Out that
// already holds lossless JSON is passed through as it is. A value that does
// not encode is the pipeline's own output failure, with the reason.
func (t *typedTool[Args, Out]) encode(out Out) (any, error) {
	if t.anyOut && dsl.IsLossless(any(out)) {
		return any(out), nil
	}
	text, err := json.Marshal(out)
	var v any
	if err == nil {
		v, err = dsl.Unmarshal(text)
	}
	if err != nil {
		return nil, &OutputError{Tool: t.name, Violations: []string{"value is not lossless JSON: " + err.Error()}}
	}
	return v, nil
}

// decode reads a JSON value into a Go value through its canonical text.
func decode(v any, into any) error {
	text, err := dsl.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(text, into)
}
