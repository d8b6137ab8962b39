package engine

import (
	"context"
	"errors"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// errOwnDeadline is the cause the timeout policy gives its own deadline, so
// that it can tell its deadline from the caller's cancellation.
var errOwnDeadline = errors.New("tool call timeout policy deadline")

// TimeoutPolicy returns the timeout policy: a tools/execute wrapper to
// install with [Scope.OnExecute]. It acts only on calls whose definition (the
// one visible when the call was created) declares a positive Timeout: it
// passes next a ctx derived from its own with that deadline, which the
// pipeline fuses with the caller's for the body.
//
// When its own deadline fired while the caller's ctx was still live, the
// result becomes
//
//	{isError: true, error: {message: "tool call timed out after <ms>ms",
//	 info: {name: "ToolTimeoutError", code: "TOOL_TIMEOUT"}},
//	 content: [text "Error: tool call timed out after <ms>ms"]}
//
// keeping the contexts the inner chain attached (body-deferred contexts are
// attached by the pipeline as always); <ms> is the timeout in milliseconds as
// JavaScript prints the number (1500, 1.5); so does a success that came back
// after the deadline (a body that ignored its ctx). An outer
// cancellation is left to the pipeline, which reports it as a cancellation
// (ABORTED, or ABORTED_BEFORE_DISPATCH) and never as a timeout. The body is
// awaited to completion either way: a body that ignores its ctx delays the
// result past the deadline. Post-execute sees the caller's ctx again.
func TimeoutPolicy() ExecuteFunc {
	return func(ctx context.Context, exec *Execution, next func(context.Context) *Result) (*Result, error) {
		def := exec.Definition()
		if def == nil || def.Timeout <= 0 {
			return next(ctx), nil
		}
		tctx, cancel := context.WithTimeoutCause(ctx, def.Timeout, errOwnDeadline)
		defer cancel()
		r := next(tctx)
		// The body's fused ctx carries the same deadline and may see it a
		// moment before tctx's own timer fires: a passed deadline counts.
		deadline, _ := tctx.Deadline()
		fired := errors.Is(context.Cause(tctx), errOwnDeadline) || !time.Now().Before(deadline)
		if r == nil || ctx.Err() != nil || !fired {
			return r, nil
		}
		return errorResult(ErrToolTimeout(def.Timeout)).withContexts(r.AdditionalContexts), nil
	}
}

// ErrToolTimeout returns the coded error of a timed-out call: name
// ToolTimeoutError, code TOOL_TIMEOUT, message "tool call timed out after <ms>ms".
func ErrToolTimeout(d time.Duration) *ToolError {
	return NewError("ToolTimeoutError", CodeToolTimeout, timeoutMessage(d))
}

func timeoutMessage(d time.Duration) string {
	ms, err := dsl.Marshal(float64(d) / float64(time.Millisecond))
	if err != nil { // unreachable: a finite float64
		ms = []byte(d.String())
	}
	return "tool call timed out after " + string(ms) + "ms"
}
