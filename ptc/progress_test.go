package ptc

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestRunCodeReportsItsSubCallsAsProgress(t *testing.T) {
	program := func(ctx context.Context, tools map[string]Binding) Result {
		for range 3 {
			if _, err := tools["count"].Call(ctx, dsl.NewObject()); err != nil {
				return Result{Err: ExceptionFailure(err.Error())}
			}
		}
		if _, err := tools["report"].Call(ctx, dsl.NewObject()); err != nil {
			return Result{Err: ExceptionFailure(err.Error())}
		}
		return Result{Value: "ok", HasValue: true}
	}
	c := newCapsEnv(t, Options{}, program)
	heard := make(chan bool, 1)
	(&schedEnv{t: t, svc: c.svc}).tool("report", false, func(ctx context.Context, _ *dsl.Object) (any, error) {
		heard <- engine.ReportProgress(ctx, engine.Progress{Progress: 99, Total: 100})
		return "reported", nil
	})
	in := engine.Input{CallID: "call-1", Name: ToolName, Agent: c.agent, Arguments: runCode("p", "Run the test's program")}

	t.Run("a caller that listens hears one report per committed sub-call", func(t *testing.T) {
		var got []string
		ctx := engine.WithProgress(context.Background(), func(p engine.Progress) {
			got = append(got, p.Message)
		})
		if r := c.svc.Call(ctx, in); r.IsError {
			t.Fatalf("run_code failed: %s", resultJSON(t, r))
		}
		want := "1 tool call done|2 tool calls done|3 tool calls done|4 tool calls done"
		if strings.Join(got, "|") != want {
			t.Errorf("progress %q, want %q", strings.Join(got, "|"), want)
		}
		if <-heard {
			t.Error("a sub-call's own report reached the caller")
		}
	})
	t.Run("a caller that does not listen changes nothing", func(t *testing.T) {
		if r := c.svc.Call(context.Background(), in); r.IsError {
			t.Fatalf("run_code failed: %s", resultJSON(t, r))
		}
		if <-heard {
			t.Error("a sub-call's report was heard")
		}
	})
}
