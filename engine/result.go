package engine

import (
	"errors"
	"fmt"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/display"
)

// Result is the outcome of one tool call. A success has Value and never
// Error; a failure has Error and never Value nor ConcludesTurn. Results the
// engine returns are shared with observers and must not be modified.
type Result struct {
	IsError bool
	Value   any      // the canonical JSON value (successes only)
	Error   *Failure // failures only
	Content []Block  // what the model sees
	// Meta is the tool's presentation metadata; HasMeta says whether the
	// tool has a projector (a null Meta is kept).
	Meta               any
	HasMeta            bool
	AdditionalContexts []Message // nil when there are none
	ConcludesTurn      bool

	canonical *Token // set on a success built by the pipeline for this token
}

// Failure is why a call failed. Message carries no "Error: " prefix.
type Failure struct {
	Message string
	Info    *ErrorInfo // nil for errors without a name and code
}

// ErrorInfo names a coded failure.
type ErrorInfo struct {
	Name   string
	Code   string
	Reason string // optional
}

// JSON returns the result in the design's shape:
// {isError, value?, error?, content, meta?, additionalContexts?, concludesTurn?},
// absent keys absent.
func (r *Result) JSON() *dsl.Object {
	o := dsl.NewObject(dsl.Member{Key: "isError", Value: r.IsError})
	if !r.IsError {
		o.Set("value", r.Value)
	}
	if r.Error != nil {
		o.Set("error", r.Error.JSON())
	}
	o.Set("content", ContentJSON(r.Content))
	if r.HasMeta {
		o.Set("meta", r.Meta)
	}
	if len(r.AdditionalContexts) > 0 {
		list := make([]any, len(r.AdditionalContexts))
		for i, m := range r.AdditionalContexts {
			list[i] = m.JSON()
		}
		o.Set("additionalContexts", list)
	}
	if r.ConcludesTurn {
		o.Set("concludesTurn", true)
	}
	return o
}

// MarshalJSON writes the result's JSON form as canonical JSON.
func (r *Result) MarshalJSON() ([]byte, error) { return dsl.Marshal(r.JSON()) }

// JSON returns {message, info?}.
func (f *Failure) JSON() *dsl.Object {
	o := dsl.NewObject(dsl.Member{Key: "message", Value: f.Message})
	if f.Info != nil {
		o.Set("info", f.Info.JSON())
	}
	return o
}

// JSON returns {name, code, reason?}.
func (i *ErrorInfo) JSON() *dsl.Object {
	o := dsl.NewObject(dsl.Member{Key: "name", Value: i.Name}, dsl.Member{Key: "code", Value: i.Code})
	if i.Reason != "" {
		o.Set("reason", i.Reason)
	}
	return o
}

// CodedError is an error with a catalogue name and code; a failure built from
// one keeps them as its ErrorInfo. dsl.JsonSchemaError is one.
type CodedError interface {
	error
	Name() string
	Code() string
}

// ToolError is a coded error a tool, a policy or the engine raises.
type ToolError struct {
	Message string
	Info    ErrorInfo
}

// NewError returns a coded error.
func NewError(name, code, message string) *ToolError {
	return &ToolError{Message: message, Info: ErrorInfo{Name: name, Code: code}}
}

func (e *ToolError) Error() string { return e.Message }

// Name returns the error's name, e.g. ToolNotFoundError.
func (e *ToolError) Name() string { return e.Info.Name }

// Code returns the error's code, e.g. UNKNOWN_TOOL.
func (e *ToolError) Code() string { return e.Info.Code }

// ErrorReason returns the optional reason.
func (e *ToolError) ErrorReason() string { return e.Info.Reason }

// The catalogue's codes (§1.9).
const (
	CodeUnknownTool           = "UNKNOWN_TOOL"
	CodeInvalidArgs           = "INVALID_ARGS"
	CodeInvalidToolOutput     = "INVALID_TOOL_OUTPUT"
	CodeAborted               = "ABORTED"
	CodeAbortedBeforeDispatch = "ABORTED_BEFORE_DISPATCH"
	CodeUnsupportedSchema     = "UNSUPPORTED_SCHEMA"
	CodeToolTimeout           = "TOOL_TIMEOUT"
	// CodeNestingLimit is dsh's own: a nested call past the nesting depth
	// or past its root's nested-call budget (error name ToolNestingError).
	CodeNestingLimit = "NESTING_LIMIT"
)

// The catalogue's literal messages.
const (
	msgAborted               = "tool call aborted"
	msgAbortedBeforeDispatch = "tool call aborted before dispatch"
	msgArgsNotLossless       = "tool execution arguments must be losslessly JSON-serializable"
	msgResultNotLossless     = "tool result must be losslessly JSON-serializable"
	msgBothValueAndContent   = "tools/post-execute accept decision cannot replace both value and content"
	msgValueOfFailed         = "tools/post-execute cannot replace the value of a failed result"
	msgBlocked               = "tool result blocked by post-execute policy"
	msgUnprintable           = "<unprintable thrown value>"
)

// ErrAborted returns the coded error of a call cancelled after its body was
// invoked (§1.9): name AbortError, code ABORTED, message "tool call
// aborted". A script host fails a call with it when it had to stop the
// call's script: the script ran on past its grace after its signal aborted,
// or its interpreter was stopped for another call, so that no host-internal
// message reaches the model.
func ErrAborted() *ToolError { return NewError("AbortError", CodeAborted, msgAborted) }

func errUnknownTool(name string) *ToolError {
	// A model or a program chooses the name: quoted bounded.
	return NewError("ToolNotFoundError", CodeUnknownTool, "unknown tool "+display.Quote(name))
}

func errTooDeep(max int) *ToolError {
	return NewError("ToolNestingError", CodeNestingLimit, fmt.Sprintf("tool calls are nested more than %d deep", max))
}

func errOverBudget(rootID string, budget int64) *ToolError {
	// A model chooses call ids: quoted bounded.
	return NewError("ToolNestingError", CodeNestingLimit, fmt.Sprintf(
		"the call %s made more than %d nested tool calls", display.Quote(rootID), budget))
}

func errCollapsed(name string) *ToolError {
	return NewError("ToolNotFoundError", CodeUnknownTool, fmt.Sprintf(
		"unknown tool %s: only `run_code` is callable directly — call `%s` from inside a `run_code` program instead", display.Quote(name), display.Line(name, display.MaxName)))
}

// ArgsError reports arguments that violate a tool's parameter schema.
type ArgsError struct{ Violations []string }

func (e *ArgsError) Error() string { return "invalid arguments: " + joinViolations(e.Violations) }

// Name returns ToolArgsError.
func (e *ArgsError) Name() string { return "ToolArgsError" }

// Code returns INVALID_ARGS.
func (e *ArgsError) Code() string { return CodeInvalidArgs }

// OutputError reports a tool value or rendering that breaks the output contract.
type OutputError struct {
	Tool       string
	Violations []string
}

func (e *OutputError) Error() string {
	return fmt.Sprintf("tool %q returned invalid output: %s", e.Tool, joinViolations(e.Violations))
}

// Name returns ToolOutputError.
func (e *OutputError) Name() string { return "ToolOutputError" }

// Code returns INVALID_TOOL_OUTPUT.
func (e *OutputError) Code() string { return CodeInvalidToolOutput }

func joinViolations(v []string) string {
	s := ""
	for i, x := range v {
		if i > 0 {
			s += "; "
		}
		s += x
	}
	return s
}

// errorText returns a thrown value's message: an error's text, a string as
// itself, a fmt.Stringer's String, anything else formatted; a value that
// panics while being printed is <unprintable thrown value>.
func errorText(v any) (s string) {
	defer func() {
		if recover() != nil {
			s = msgUnprintable
		}
	}()
	switch x := v.(type) {
	case error:
		return x.Error()
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// failureOf converts a thrown error or panic value to a Failure: coded errors
// keep their name and code (and reason) as info.
func failureOf(v any) *Failure {
	f := &Failure{Message: errorText(v)}
	if err, ok := v.(error); ok {
		var coded CodedError
		if errors.As(err, &coded) && coded.Name() != "" && coded.Code() != "" {
			f.Info = &ErrorInfo{Name: coded.Name(), Code: coded.Code()}
			var r interface{ ErrorReason() string }
			if errors.As(err, &r) {
				f.Info.Reason = r.ErrorReason()
			}
		}
	}
	return f
}

// failureResult is the registry-synthesized failure: content "Error: <message>".
func failureResult(f *Failure) *Result {
	return &Result{IsError: true, Error: f, Content: []Block{TextBlock{Text: "Error: " + f.Message}}}
}

// errorResult is toolErrorResult(err) of the design.
func errorResult(v any) *Result { return failureResult(failureOf(v)) }

func abortedResult(beforeDispatch bool) *Result {
	if beforeDispatch {
		return errorResult(NewError("AbortError", CodeAbortedBeforeDispatch, msgAbortedBeforeDispatch))
	}
	return errorResult(ErrAborted())
}
