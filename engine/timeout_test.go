package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// toSvc is an engine with the timeout policy installed and a tool "t" whose
// body and timeout the test chooses.
func toSvc(t *testing.T, timeout time.Duration, body func(ctx context.Context, run *engine.Run) (any, error)) *engine.Service {
	t.Helper()
	svc := engine.New()
	def := &engine.Definition{
		Name: "t", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		Timeout: timeout,
		Execute: func(ctx context.Context, _ any, run *engine.Run) (any, error) { return body(ctx, run) },
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	svc.Global().OnExecute(engine.TimeoutPolicy())
	return svc
}

func toCall(ctx context.Context, svc *engine.Service) *engine.Result {
	return svc.Call(ctx, engine.Input{CallID: "c1", Name: "t", Arguments: dsl.NewObject()})
}

func TestTimeoutMessagesPrintMillisecondsAsJavaScriptDoes(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{1500 * time.Millisecond, "tool call timed out after 1500ms"},
		{1500 * time.Microsecond, "tool call timed out after 1.5ms"},
		{20 * time.Millisecond, "tool call timed out after 20ms"},
		{30 * time.Second, "tool call timed out after 30000ms"},
		{time.Microsecond, "tool call timed out after 0.001ms"},
		{time.Nanosecond, "tool call timed out after 0.000001ms"},
		{100 * time.Nanosecond, "tool call timed out after 0.0001ms"},
	}
	for _, tc := range tests {
		t.Run(tc.d.String()+" reads "+tc.want, func(t *testing.T) {
			err := engine.ErrToolTimeout(tc.d)
			if err.Error() != tc.want || err.Name() != "ToolTimeoutError" || err.Code() != "TOOL_TIMEOUT" {
				t.Fatalf("%q %s %s", err.Error(), err.Name(), err.Code())
			}
		})
	}
}

func TestTimeoutPolicy(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("a body that outlives its timeout fails with TOOL_TIMEOUT", func(t *testing.T) {
		svc := toSvc(t, 20*time.Millisecond, func(ctx context.Context, _ *engine.Run) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		r := toCall(context.Background(), svc)
		want := `{"isError":true,"error":{"message":"tool call timed out after 20ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 20ms"}]}`
		if got := schedJSON(t, r.JSON()); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})

	t.Run("a body that succeeds after its deadline still times out and keeps its deferred contexts", func(t *testing.T) {
		svc := toSvc(t, 1500*time.Microsecond, func(ctx context.Context, run *engine.Run) (any, error) {
			<-ctx.Done()
			run.DeferContext(engine.NewUserMessage([]engine.Block{engine.Text("note")}, nil))
			return "late", nil
		})
		r := toCall(context.Background(), svc)
		if !r.IsError || r.Error.Message != "tool call timed out after 1.5ms" || r.Error.Info.Code != "TOOL_TIMEOUT" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
		if len(r.AdditionalContexts) != 1 {
			t.Fatalf("contexts %v", r.AdditionalContexts)
		}
	})

	t.Run("the body runs on a fused ctx and post-execute sees the caller's again", func(t *testing.T) {
		caller, cancel := context.WithCancel(context.Background())
		defer cancel()
		var bodyCtx, wrapperCtx context.Context
		svc := toSvc(t, 10*time.Second, func(ctx context.Context, _ *engine.Run) (any, error) {
			bodyCtx = ctx
			return "ok", nil
		})
		// An inner wrapper sees the ctx the policy hands to next.
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			wrapperCtx = ctx
			return next(ctx), nil
		})
		var postCtx context.Context
		svc.Global().OnPostExecute(func(ctx context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			postCtx = ctx
			return next()
		})
		r := toCall(caller, svc)
		if r.IsError {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
		if dl, ok := wrapperCtx.Deadline(); !ok || time.Until(dl) < 5*time.Second {
			t.Fatalf("next got no deadline of about 10s: %v %v", dl, ok)
		}
		if bodyCtx == caller || bodyCtx == wrapperCtx {
			t.Fatal("the body's ctx is not the fused one")
		}
		if postCtx != caller {
			t.Fatal("post-execute did not see the caller's ctx")
		}
	})

	t.Run("the deadline cancels the body's ctx", func(t *testing.T) {
		cancelled := make(chan bool, 1)
		start := time.Now()
		svc := toSvc(t, 5*time.Millisecond, func(ctx context.Context, _ *engine.Run) (any, error) {
			select {
			case <-ctx.Done():
				cancelled <- true
			case <-time.After(schedWait):
				cancelled <- false
			}
			return nil, errors.New("stopped")
		})
		r := toCall(context.Background(), svc)
		if !<-cancelled {
			t.Fatal("the body's ctx was not cancelled")
		}
		if time.Since(start) < 5*time.Millisecond {
			t.Fatal("cancelled before the deadline")
		}
		if r.Error == nil || r.Error.Info == nil || r.Error.Info.Code != "TOOL_TIMEOUT" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})

	t.Run("a fast tool is untouched", func(t *testing.T) {
		svc := toSvc(t, 10*time.Second, func(context.Context, *engine.Run) (any, error) { return "quick", nil })
		r := toCall(context.Background(), svc)
		if r.IsError || scText(r) != "quick" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})

	t.Run("a fast failure is kept as it is", func(t *testing.T) {
		svc := toSvc(t, 10*time.Second, func(context.Context, *engine.Run) (any, error) {
			return nil, engine.NewError("HarnessError", "BOOM", "kaboom")
		})
		r := toCall(context.Background(), svc)
		if r.Error == nil || r.Error.Info == nil || r.Error.Info.Code != "BOOM" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})

	t.Run("a tool without a timeout gets the caller's ctx and no deadline", func(t *testing.T) {
		caller, cancel := context.WithCancel(context.Background())
		defer cancel()
		var bodyCtx context.Context
		svc := toSvc(t, 0, func(ctx context.Context, _ *engine.Run) (any, error) {
			bodyCtx = ctx
			return "ok", nil
		})
		r := toCall(caller, svc)
		if r.IsError {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
		if _, ok := bodyCtx.Deadline(); ok || bodyCtx != caller {
			t.Fatal("the policy changed the ctx of a tool without a timeout")
		}
	})

	t.Run("an outer cancellation is reported as ABORTED, not as a timeout", func(t *testing.T) {
		caller, cancel := context.WithCancel(context.Background())
		started := make(chan struct{})
		svc := toSvc(t, 10*time.Second, func(ctx context.Context, _ *engine.Run) (any, error) {
			close(started)
			<-ctx.Done()
			return "late", nil
		})
		done := make(chan *engine.Result, 1)
		go func() { done <- toCall(caller, svc) }()
		<-started
		cancel()
		r := <-done
		if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != "ABORTED" || scText(r) != "Error: tool call aborted" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})

	t.Run("an outer deadline that fires first is not the policy's timeout", func(t *testing.T) {
		caller, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		svc := toSvc(t, 10*time.Second, func(ctx context.Context, _ *engine.Run) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		r := toCall(caller, svc)
		if r.Error == nil || (r.Error.Info != nil && r.Error.Info.Code == "TOOL_TIMEOUT") {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})

	t.Run("the timeout applies to calls in a batch", func(t *testing.T) {
		svc := toSvc(t, 5*time.Millisecond, func(ctx context.Context, _ *engine.Run) (any, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		res, err := svc.Global().Execute(context.Background(), engine.Batch{Calls: []engine.ToolCallBlock{{ID: "c1", Name: "t"}}})
		if err != nil {
			t.Fatal(err)
		}
		if r := res.Results[0].Result; r.Error == nil || r.Error.Info == nil || r.Error.Info.Code != "TOOL_TIMEOUT" {
			t.Fatalf("%s", schedJSON(t, r.JSON()))
		}
	})
}
