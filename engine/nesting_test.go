package engine_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/engine"
)

// nestedCall calls name under run's execution, as a script host's tools.call does.
func nestedCall(ctx context.Context, svc *engine.Service, run *engine.Execution, name string, args any) *engine.Result {
	return svc.Call(ctx, engine.Input{
		CallID: run.CallID() + ".n", RootCallID: run.RootCallID(), Name: name, Arguments: args,
		Agent: run.Agent(), Parent: run.Token(), ToolSet: run.ToolSet(),
	})
}

// failureOf passes a nested failure on as the caller's own.
func failureOf(r *engine.Result) error {
	if !r.IsError {
		return nil
	}
	if r.Error.Info != nil {
		return engine.NewError(r.Error.Info.Name, r.Error.Info.Code, r.Error.Message)
	}
	return engine.NewError("", "", r.Error.Message)
}

// selfCalling is a tool whose body calls itself until a call fails, and
// fails with that failure; bodies counts the bodies that ran.
func selfCalling(svc *engine.Service, bodies *atomic.Int64) *engine.Definition {
	return cfTool("recurse", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
		bodies.Add(1)
		if err := failureOf(nestedCall(ctx, svc, run.Execution, "recurse", cfObj())); err != nil {
			return nil, err
		}
		return "bottom", nil
	})
}

// level reads the fan-out tool's level argument.
func level(args any) int {
	v, _ := cfArg(args, "level")
	f, _ := v.(float64)
	return int(f)
}

// fanOut is a tool that, below depth levels, calls itself width times at
// once (as Promise.all would) one level deeper, and fails with the first
// failure it meets; bodies counts the bodies that ran.
func fanOut(svc *engine.Service, width, levels int, bodies *atomic.Int64) *engine.Definition {
	d := cfTool("fan", func(ctx context.Context, args any, run *engine.Run) (any, error) {
		bodies.Add(1)
		l := level(args)
		if l >= levels {
			return "leaf", nil
		}
		results := make([]*engine.Result, width)
		var wg sync.WaitGroup
		for k := range width {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[k] = nestedCall(ctx, svc, run.Execution, "fan", cfObj("level", float64(l+1)))
			}()
		}
		wg.Wait()
		for _, r := range results {
			if err := failureOf(r); err != nil {
				return nil, err
			}
		}
		return "ok", nil
	})
	d.Parameters = cfObj("type", "object")
	return d
}

func TestNestingBounds(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("a tool that calls itself fails at the 65th call of the chain, and the next call is served", func(t *testing.T) {
		svc := engine.New()
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), selfCalling(svc, &bodies))
		cfExpect(t, cfCall(svc, "recurse", cfObj()),
			cfCoded(t, "tool calls are nested more than 64 deep", "ToolNestingError", "NESTING_LIMIT"))
		if n := bodies.Load(); n != 64 {
			t.Errorf("%d bodies ran; want 64 (the root and 63 nested calls)", n)
		}
		cfMustRegister(t, svc.Global(), cfConst("plain", "served"))
		cfExpect(t, cfCall(svc, "plain", cfObj()), cfJSON(t, cfObj("isError", false, "value", "served",
			"content", []any{cfObj("type", "text", "text", "served")})))
	})

	t.Run("a pre-execute listener that calls the tool it guards stops at the same depth, before its 65th run", func(t *testing.T) {
		svc := engine.New()
		var listeners atomic.Int64
		cfMustRegister(t, svc.Global(), cfConst("guarded", "ran"))
		svc.Global().OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			listeners.Add(1)
			if r := nestedCall(ctx, svc, exec, exec.Name(), cfObj()); r.IsError {
				return engine.Deny(r.Error.Message), nil
			}
			return next()
		})
		cfExpect(t, cfCall(svc, "guarded", cfObj()), cfFail(t, "tool calls are nested more than 64 deep"))
		if n := listeners.Load(); n != 64 {
			t.Errorf("the listener ran %d times; want 64", n)
		}
	})

	t.Run("a fan-out of 8 calls per level, 6 levels deep, stops at the root's budget of 1000 nested calls", func(t *testing.T) {
		svc := engine.New()
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), fanOut(svc, 8, 5, &bodies))
		start := time.Now()
		in := cfIn("root-1", "fan", cfObj("level", 0.0))
		cfExpect(t, svc.Call(context.Background(), in),
			cfCoded(t, `the call "root-1" made more than 1000 nested tool calls`, "ToolNestingError", "NESTING_LIMIT"))
		if n := bodies.Load(); n != 1001 {
			t.Errorf("%d bodies ran; want 1001 (the root and its budget of 1000)", n)
		}
		// A generous bound: the unbounded tree is 37,449 calls.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("the fan-out took %v to fail", d)
		}
		bodies.Store(0)
		cfExpect(t, svc.Call(context.Background(), cfIn("root-2", "fan", cfObj("level", 4.0))), cfJSON(t, cfObj("isError", false, "value", "ok",
			"content", []any{cfObj("type", "text", "text", "ok")})))
		if n := bodies.Load(); n != 9 {
			t.Errorf("the next root call ran %d bodies; want 9 (its budget is its own)", n)
		}
	})

	t.Run("the options set both bounds and name them in the messages", func(t *testing.T) {
		svc := engine.New(engine.WithMaxNestingDepth(3), engine.WithNestedCallBudget(5))
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), selfCalling(svc, &bodies))
		cfExpect(t, cfCall(svc, "recurse", cfObj()),
			cfCoded(t, "tool calls are nested more than 3 deep", "ToolNestingError", "NESTING_LIMIT"))
		if n := bodies.Load(); n != 3 {
			t.Errorf("%d bodies ran; want 3", n)
		}
		bodies.Store(0)
		cfMustRegister(t, svc.Global(), fanOut(svc, 2, 2, &bodies))
		cfExpect(t, svc.Call(context.Background(), cfIn("r", "fan", cfObj("level", 0.0))),
			cfCoded(t, `the call "r" made more than 5 nested tool calls`, "ToolNestingError", "NESTING_LIMIT"))
		if n := bodies.Load(); n != 6 {
			t.Errorf("%d bodies ran; want 6", n)
		}
	})

	t.Run("calls with their own budget do not count against their root's, and start a fresh one", func(t *testing.T) {
		svc := engine.New(engine.WithNestedCallBudget(3), engine.WithMaxNestingDepth(3))
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), cfConst("leaf", "leaf"))
		cfMustRegister(t, svc.Global(), cfTool("mid", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			// Under its own budget of 3: the fourth nested call fails.
			for range 4 {
				if err := failureOf(nestedCall(ctx, svc, run.Execution, "leaf", cfObj())); err != nil {
					return nil, err
				}
				bodies.Add(1)
			}
			return "mid", nil
		}))
		var mids []*engine.Result
		cfMustRegister(t, svc.Global(), cfTool("outer", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			for range 5 { // five sub-calls, past the root's budget of 3
				mids = append(mids, svc.Call(ctx, engine.Input{
					CallID: run.CallID() + ".m", RootCallID: run.RootCallID(), Name: "mid", Arguments: cfObj(),
					Parent: run.Token(), OwnBudget: true,
				}))
			}
			return "outer", nil
		}))
		cfCall(svc, "outer", cfObj())
		for i, r := range mids {
			cfExpect(t, r, cfCoded(t, `the call "c1.m" made more than 3 nested tool calls`, "ToolNestingError", "NESTING_LIMIT"))
			if t.Failed() {
				t.Fatalf("sub-call %d", i+1)
			}
		}
		if n := bodies.Load(); n != 15 {
			t.Errorf("%d nested calls succeeded; want 15 (3 under each of 5)", n)
		}
		var deep []*engine.Result
		cfMustRegister(t, svc.Global(), cfTool("deep", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			deep = append(deep, svc.Call(ctx, engine.Input{CallID: run.CallID() + ".d", Name: "deep", Arguments: cfObj(), Parent: run.Token(), OwnBudget: true}))
			return "deep", nil
		}))
		cfCall(svc, "deep", cfObj())
		// The innermost call's result is recorded first.
		if len(deep) != 3 || !deep[0].IsError || deep[0].Error.Message != "tool calls are nested more than 3 deep" {
			t.Errorf("own budgets still count depth: %d calls, the innermost %+v", len(deep), deep[0].Error)
		}
	})

	t.Run("non-positive options keep the defaults", func(t *testing.T) {
		svc := engine.New(engine.WithMaxNestingDepth(0), engine.WithNestedCallBudget(-1))
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), selfCalling(svc, &bodies))
		cfExpect(t, cfCall(svc, "recurse", cfObj()),
			cfCoded(t, "tool calls are nested more than 64 deep", "ToolNestingError", "NESTING_LIMIT"))
	})

	t.Run("a long root call id is shortened in the budget message", func(t *testing.T) {
		svc := engine.New(engine.WithNestedCallBudget(1))
		var bodies atomic.Int64
		cfMustRegister(t, svc.Global(), fanOut(svc, 2, 1, &bodies))
		id := strings.Repeat("é", 40) // 80 bytes
		r := svc.Call(context.Background(), cfIn(id, "fan", cfObj("level", 0.0)))
		want := `the call "` + strings.Repeat("é", 32) + `…" made more than 1 nested tool calls`
		cfExpect(t, r, cfCoded(t, want, "ToolNestingError", "NESTING_LIMIT"))
	})

	t.Run("a refused nested call runs no policy and no body, but tools/result observers hear it", func(t *testing.T) {
		svc := engine.New(engine.WithMaxNestingDepth(1))
		var trace cfTrace
		cfMustRegister(t, svc.Global(), cfConst("leaf", "leaf"))
		cfMustRegister(t, svc.Global(), cfTool("outer", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			r := nestedCall(ctx, svc, run.Execution, "leaf", cfObj())
			trace.add("nested:" + r.Error.Message)
			return "outer", nil
		}))
		sc := svc.Global()
		sc.OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			trace.add("pre:" + exec.Name())
			return next()
		})
		sc.Guard(func(_ context.Context, exec *engine.Execution) (string, error) {
			trace.add("guard:" + exec.Name())
			return "", nil
		})
		sc.OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			trace.add("execute:" + exec.Name())
			return next(ctx), nil
		})
		sc.OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			trace.add("post:" + exec.Name())
			return next()
		})
		sc.OnResult(func(exec *engine.Execution, r *engine.Result) error {
			nested := exec.Parent() != nil
			trace.add("result:" + exec.Name() + ":" + map[bool]string{true: "nested", false: "root"}[nested])
			return nil
		})
		if r := cfCall(svc, "outer", cfObj()); r.IsError {
			t.Fatalf("outer failed: %s", cfResultJSON(t, r))
		}
		want := "pre:outer,guard:outer,execute:outer,result:leaf:nested,nested:tool calls are nested more than 1 deep,post:outer,result:outer:root"
		if got := trace.String(); got != want {
			t.Errorf("trace\n got: %s\nwant: %s", got, want)
		}
	})
}
