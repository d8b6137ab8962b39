package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/internal/tracelog"
)

// traceLogger is a text logger whose lines carry the trace and span ids of
// their context, as dsh's own is with traces on.
func traceLogger(buf *syncbuf.Buffer) *slog.Logger {
	return slog.New(tracelog.Handler(slog.NewTextHandler(buf, nil)))
}

func TestResultObserversSeeTheCallsContext(t *testing.T) {
	t.Run("a tools/result observer's log line carries the call's trace and span ids", func(t *testing.T) {
		tr := newTraced(t)
		cfMustRegister(t, tr.svc.Global(), cfEchoDef("echo"))
		var logs syncbuf.Buffer
		logger := traceLogger(&logs)
		tr.svc.Global().OnResultContext(func(ctx context.Context, exec *engine.Execution, _ *engine.Result) error {
			logger.InfoContext(ctx, "observed", "call", exec.CallID())
			return nil
		})
		if r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "hi")}); r.IsError {
			t.Fatal(r.Error.Message)
		}
		sc := tr.one(t, "execute_tool echo").SpanContext()
		want := "call=c1 trace_id=" + sc.TraceID().String() + " span_id=" + sc.SpanID().String()
		if got := logs.String(); !strings.Contains(got, want) {
			t.Errorf("observer's log %q does not carry %q", got, want)
		}
	})

	t.Run("the warning for a failing observer carries the call's trace and span ids", func(t *testing.T) {
		var logs syncbuf.Buffer
		tr := newTraced(t, engine.WithLogger(traceLogger(&logs)))
		cfMustRegister(t, tr.svc.Global(), cfEchoDef("echo"))
		tr.svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { return errors.New("observer broke") })
		if r := tr.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "hi")}); r.IsError {
			t.Fatal(r.Error.Message)
		}
		sc := tr.one(t, "execute_tool echo").SpanContext()
		got := logs.String()
		if !strings.Contains(got, `tools/result observer failed: observer broke`) {
			t.Fatalf("no warning for the failing observer in %q", got)
		}
		if want := "trace_id=" + sc.TraceID().String() + " span_id=" + sc.SpanID().String(); !strings.Contains(got, want) {
			t.Errorf("warning %q does not carry %q", got, want)
		}
	})

	t.Run("an observer of a cancelled call gets a context that is not cancelled but keeps its values", func(t *testing.T) {
		type key struct{}
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var errSeen error
		var value any
		called := false
		svc.Global().OnResultContext(func(ctx context.Context, _ *engine.Execution, _ *engine.Result) error {
			called, errSeen, value = true, ctx.Err(), ctx.Value(key{})
			return nil
		})
		ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "caller's"))
		cancel()
		svc.Call(ctx, engine.Input{CallID: "c1", Name: "echo", Arguments: cfObj("text", "hi")})
		switch {
		case !called:
			t.Fatal("the observer was not called")
		case errSeen != nil:
			t.Errorf("observer's ctx.Err() = %v, want nil", errSeen)
		case value != "caller's":
			t.Errorf("observer's ctx value = %v, want the caller's", value)
		}
	})
}
