package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestEndPreChain(t *testing.T) {
	t.Run("the innermost listener ends the chain and gets allow", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var ended bool
		var kind engine.PreKind
		svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			d, ok := engine.EndPreChain(exec)
			ended, kind = ok, d.Kind
			return d, nil
		})
		if r := cfCall(svc, "echo", cfObj("text", "x")); r.IsError {
			t.Fatalf("the call failed: %s", cfResultJSON(t, r))
		}
		if !ended || kind != engine.PreAllow {
			t.Fatalf("EndPreChain = %v, %v; want allow, true", kind, ended)
		}
	})
	t.Run("an outer listener does not end the chain, and next still runs the inner one", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var outerEnded bool
		svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			_, outerEnded = engine.EndPreChain(exec)
			return next()
		})
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Deny("inner"), nil }))
		cfExpect(t, cfCall(svc, "echo", cfObj("text", "x")), cfFail(t, "inner"))
		if outerEnded {
			t.Fatal("EndPreChain ended a chain with a listener left")
		}
	})
	t.Run("a listener added after the chain ended is not run for that call", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		late := 0
		svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			if _, ok := engine.EndPreChain(exec); !ok {
				t.Error("the chain did not end")
			}
			svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { late++; return engine.Deny("late"), nil }))
			return next()
		})
		if r := cfCall(svc, "echo", cfObj("text", "x")); r.IsError || late != 0 {
			t.Fatalf("late listener ran %d times: %s", late, cfResultJSON(t, r))
		}
	})
	t.Run("an execution outside its pre-execute chain has no chain to end", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var seen *engine.Execution
		svc.Global().OnPreExecute(cfPre(func(exec *engine.Execution) (engine.PreDecision, error) { seen = exec; return engine.Allow(), nil }))
		var post bool
		svc.Global().OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			_, pre := engine.EndPreChain(exec)
			d, ok := engine.EndPostChain(exec)
			post = ok && !pre && d.Kind == engine.PostAccept
			return d, nil
		})
		cfCall(svc, "echo", cfObj("text", "x"))
		if _, ok := engine.EndPreChain(seen); ok || !post {
			t.Fatalf("EndPreChain after the chain: %v; EndPostChain inside the post chain: %v", ok, post)
		}
		if _, ok := engine.EndPreChain(nil); ok {
			t.Fatal("EndPreChain of nil ended something")
		}
	})
}

func TestPrerendered(t *testing.T) {
	pre := func(v any, content []engine.Block, err error) *engine.Definition {
		d := cfTool("pre", func(context.Context, any, *engine.Run) (any, error) {
			return &engine.Prerendered{Value: v, Content: content, Err: err}, nil
		})
		d.Output.Render = func(args, value any) ([]engine.Block, error) {
			t.Error("render was called for a prerendered value")
			return nil, nil
		}
		return d
	}
	t.Run("a valid prerendered value takes its content without calling render", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), pre("v", []engine.Block{engine.TextBlock{Text: "shown"}}, nil))
		cfExpect(t, cfCall(svc, "pre", cfObj("text", "x")), `{"isError":false,"value":"v","content":[{"type":"text","text":"shown"}]}`)
	})
	t.Run("a prerendered render error is render's failure", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), pre("v", nil, errors.New("no pen")))
		r := cfCall(svc, "pre", cfObj("text", "x"))
		if !r.IsError || !strings.Contains(r.Error.Message, "output.render failed: no pen") {
			t.Fatalf("got %s", cfResultJSON(t, r))
		}
	})
	t.Run("an invalid prerendered value is invalid output, whatever its content", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), pre(1.0, []engine.Block{engine.TextBlock{Text: "shown"}}, nil))
		r := cfCall(svc, "pre", cfObj("text", "x"))
		if !r.IsError || strings.Contains(cfResultJSON(t, r), "shown") {
			t.Fatalf("got %s", cfResultJSON(t, r))
		}
	})
}
