package engine_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// A pre-execute listener or a guard sees a call's arguments before the body
// validates them (§3.2). When one fails on a call whose arguments the tool's
// parameter schema rejects, the call reports the invalid arguments, not the
// policy's error; with valid arguments, or a tool without validation, the
// policy's error stays the call's (§3.2 "any throw in P2–P6").
func TestAPolicyThatFailsOnInvalidArgumentsReportsThem(t *testing.T) {
	const invalid = `invalid arguments: missing required property "path"`
	crash := errors.New("policy crashed on the arguments")
	coded := engine.NewError("HarnessError", "POLICY_FAILED", "policy store is down")
	preFails := func(err error) func(svc *engine.Service) {
		return func(svc *engine.Service) {
			svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.PreDecision{}, err }))
		}
	}
	prePanics := func(svc *engine.Service) {
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { panic("index out of range") }))
	}
	guardFails := func(svc *engine.Service) {
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { return "", crash })
	}
	preDenies := func(svc *engine.Service) {
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Deny("not here"), nil }))
	}
	read := func(t *testing.T) *engine.Definition {
		return dfReadTool(t, func(a dfReadArgs) string { return a.Path })
	}
	raw := func(t *testing.T) *engine.Definition {
		d := cfEchoDef("read")
		d.Parameters = dfParse(t, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
		return d
	}
	panicking := func(t *testing.T) *engine.Definition {
		d := read(t)
		d.ValidateArgs = func(any) []string { panic("validator broke") }
		return d
	}
	tests := []struct {
		name   string
		def    func(*testing.T) *engine.Definition
		policy func(*engine.Service)
		args   string
		want   string
	}{
		{"a pre-execute listener's error on invalid arguments gives way to INVALID_ARGS", read, preFails(crash), `{}`, cfCoded(t, invalid, "ToolArgsError", "INVALID_ARGS")},
		{"a pre-execute listener's coded error on invalid arguments gives way too", read, preFails(coded), `{"path":1}`, cfCoded(t, `invalid arguments: "path" must be a string`, "ToolArgsError", "INVALID_ARGS")},
		{"a pre-execute listener's panic on invalid arguments gives way too", read, prePanics, `{}`, cfCoded(t, invalid, "ToolArgsError", "INVALID_ARGS")},
		{"a guard's error on invalid arguments gives way to INVALID_ARGS", read, guardFails, `{}`, cfCoded(t, invalid, "ToolArgsError", "INVALID_ARGS")},
		{"a pre-execute listener's error on valid arguments is the call's", read, preFails(crash), `{"path":"a"}`, cfFail(t, "policy crashed on the arguments")},
		{"a coded error on valid arguments keeps its info", read, preFails(coded), `{"path":"a"}`, cfCoded(t, "policy store is down", "HarnessError", "POLICY_FAILED")},
		{"a guard's error on valid arguments is the call's", read, guardFails, `{"path":"a"}`, cfFail(t, "policy crashed on the arguments")},
		{"a denial on invalid arguments stays a denial", read, preDenies, `{}`, cfFail(t, "not here")},
		{"a raw definition has no validation, so the policy's error stays", raw, preFails(crash), `{}`, cfFail(t, "policy crashed on the arguments")},
		{"a validator that panics leaves the policy's error", panicking, preFails(crash), `{}`, cfFail(t, "policy crashed on the arguments")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc := engine.New()
			def := tt.def(t)
			var ran atomic.Bool
			body := def.Execute
			def.Execute = func(ctx context.Context, args any, run *engine.Run) (any, error) {
				ran.Store(true)
				return body(ctx, args, run)
			}
			dfRegister(t, svc, def)
			tt.policy(svc)
			cfExpect(t, dfCall(svc, "read", dfParse(t, tt.args)), tt.want)
			if ran.Load() {
				t.Error("the body ran")
			}
		})
	}
}

// The policies still see the arguments as the caller gave them.
func TestAPolicyStillSeesTheUnvalidatedArguments(t *testing.T) {
	svc := engine.New()
	dfRegister(t, svc, dfReadTool(t, func(a dfReadArgs) string { return a.Path }))
	var saw string
	svc.Global().OnPreExecute(cfPre(func(exec *engine.Execution) (engine.PreDecision, error) {
		saw = dfMustJSON(t, exec.Arguments())
		return engine.PreDecision{}, errors.New("crash")
	}))
	r := dfCall(svc, "read", dfParse(t, `{"path":7,"extra":true}`))
	if saw != `{"path":7,"extra":true}` {
		t.Errorf("the listener saw %s", saw)
	}
	cfExpect(t, r, cfCoded(t, `invalid arguments: "path" must be a string`, "ToolArgsError", "INVALID_ARGS"))
}

// DefineTool's ValidateArgs reports what its Execute would.
func TestDefineToolValidateArgs(t *testing.T) {
	def := dfReadTool(t, func(a dfReadArgs) string { return a.Path })
	tests := []struct {
		name, args string
		want       []string
	}{
		{"valid arguments have no violations", `{"path":"a"}`, nil},
		{"a missing required property is a violation", `{}`, []string{`missing required property "path"`}},
		{"a wrong type is a violation", `{"path":true}`, []string{`"path" must be a string`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := def.ValidateArgs(dfParse(t, tt.args))
			if dfMustJSON(t, toAny(got)) != dfMustJSON(t, toAny(tt.want)) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func toAny(ss []string) []any {
	out := []any{}
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}

// A bad spec is a *dsl.JsonSchemaError whose text says which schema it is in.
func TestDefineToolBadSpecsNameTheirSchema(t *testing.T) {
	tests := []struct {
		name string
		opts engine.ToolOptions[any, any]
		want string
	}{
		{"bad parameters are the parameters'", engine.ToolOptions[any, any]{Name: "p", Parameters: dsl.Params(dsl.Prop("p", dsl.String().Enum(1))), Output: dsl.JSON()},
			`tool "p": parameters: unsupported JSON schema: schema.properties.p.enum must be a non-empty array of string values`},
		{"a bad output spec is the output.schema's", engine.ToolOptions[any, any]{Name: "o", Output: dsl.ArrayOf(dsl.String().Required())},
			`tool "o": output.schema: unsupported JSON schema: schema.items.required is not supported by the value schema DSL`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.DefineTool(tt.opts)
			var se *dsl.JsonSchemaError
			if !errors.As(err, &se) {
				t.Fatalf("want a *dsl.JsonSchemaError, got %T %v", err, err)
			}
			cfExpectErr(t, err, tt.want)
		})
	}
}
