package engine_test

// Conformance: cancellation (§3.1–§3.6 where the caller's ctx is cancelled)
// and §6 cases 76–91. "Abort while X awaits" = X blocks on a cfGate, the test
// cancels the caller's ctx, then opens the gate. See helpers_test.go for the
// cases that do not apply in Go.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// cfCallCtx starts one call with ctx in a goroutine.
func cfCallCtx(svc *engine.Service, ctx context.Context, in engine.Input) <-chan *engine.Result {
	return cfAsync(func() *engine.Result { return svc.Call(ctx, in) })
}

func TestConfSignals(t *testing.T) {
	t.Run("case 76: a wrapper's replacement ctx is fused: the body's ctx is neither the caller's nor the replacement", func(t *testing.T) {
		svc := engine.New()
		var bodyCtx context.Context
		cfMustRegister(t, svc.Global(), cfTool("signal-probe", func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			bodyCtx = ctx
			return "ok", nil
		}))
		upstream, cancelUp := context.WithCancel(context.Background())
		defer cancelUp()
		replacement, cancelRepl := context.WithCancel(context.Background())
		defer cancelRepl()
		var wrapperSaw context.Context
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			wrapperSaw = ctx
			return next(replacement), nil
		})
		r := svc.Call(upstream, cfIn("c1", "signal-probe", cfObj()))
		if r.IsError {
			t.Fatal(cfResultJSON(t, r))
		}
		if wrapperSaw != upstream {
			t.Error("the wrapper did not receive the caller's ctx")
		}
		if bodyCtx == nil || bodyCtx == upstream || bodyCtx == replacement {
			t.Errorf("the body's ctx is %v, want a fused ctx distinct from both", bodyCtx)
		}
	})

	t.Run("§3.3 D2a: without a replacement the body runs with the caller's own ctx", func(t *testing.T) {
		svc := engine.New()
		var bodyCtx context.Context
		cfMustRegister(t, svc.Global(), cfTool("probe", func(ctx context.Context, _ any, _ *engine.Run) (any, error) { bodyCtx = ctx; return "ok", nil }))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			return next(ctx), nil
		})
		svc.Call(ctx, cfIn("c1", "probe", cfObj()))
		if bodyCtx != ctx {
			t.Error("the body's ctx is not the caller's when the wrapper passed it through")
		}
	})

	t.Run("case 77: after a wrapper replaced the ctx, post-execute sees the caller's exact ctx", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnExecute(func(_ context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			other, cancel := context.WithCancel(context.Background())
			defer cancel()
			return next(other), nil
		})
		var postCtx context.Context
		svc.Global().OnPostExecute(func(ctx context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			postCtx = ctx
			return next()
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		svc.Call(ctx, cfIn("restored-signal", "echo", cfObj()))
		if postCtx != ctx {
			t.Error("post-execute did not see the caller's exact ctx")
		}
	})

	t.Run("case 88: a caller abort reaches the body through a wrapper replacement; the replacement is not cancelled; result ABORTED", func(t *testing.T) {
		svc := engine.New()
		entered := cfNewGate()
		var bodyCtx context.Context
		cfMustRegister(t, svc.Global(), cfTool("cooperative", func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			bodyCtx = ctx
			entered.once.Do(func() { close(entered.entered) })
			<-ctx.Done()
			return "stopped", nil
		}))
		replacement, cancelRepl := context.WithCancel(context.Background())
		defer cancelRepl()
		svc.Global().OnExecute(func(_ context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			return next(replacement), nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("cancelled-body", "cooperative", cfObj()))
		entered.awaitEntered(t)
		if bodyCtx == ctx || bodyCtx == replacement {
			t.Error("the body's ctx is not fused")
		}
		cancel()
		r := cfAwait(t, ch)
		cfExpect(t, r, cfAborted(t))
		if bodyCtx.Err() == nil {
			t.Error("the body's ctx was not cancelled")
		}
		if replacement.Err() != nil {
			t.Error("the registry cancelled the wrapper's replacement ctx")
		}
	})

	t.Run("§3.3 D2b: cancelling a wrapper's replacement cancels the body's ctx but not the caller's", func(t *testing.T) {
		svc := engine.New()
		entered := cfNewGate()
		cfMustRegister(t, svc.Global(), cfTool("cooperative", func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			entered.once.Do(func() { close(entered.entered) })
			<-ctx.Done()
			return nil, errors.New("stopped by the wrapper's ctx")
		}))
		replacement, cancelRepl := context.WithCancel(context.Background())
		defer cancelRepl()
		svc.Global().OnExecute(func(_ context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			return next(replacement), nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ch := cfCallCtx(svc, ctx, cfIn("c1", "cooperative", cfObj()))
		entered.awaitEntered(t)
		cancelRepl()
		cfExpect(t, cfAwait(t, ch), cfFail(t, "stopped by the wrapper's ctx"))
		if ctx.Err() != nil {
			t.Error("the caller's ctx was cancelled")
		}
	})

	t.Run("case 81: a wrapper supplying an already-cancelled ctx skips the body: ABORTED_BEFORE_DISPATCH", func(t *testing.T) {
		svc := engine.New()
		var body cfCounter
		cfMustRegister(t, svc.Global(), cfTool("must-not-run", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "x", nil }))
		svc.Global().OnExecute(func(_ context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			replacement, cancel := context.WithCancel(context.Background())
			cancel()
			return next(replacement), nil
		})
		r := svc.Call(context.Background(), cfIn("cancelled-wrapper", "must-not-run", cfObj()))
		cfExpect(t, r, cfAbortedBefore(t))
		if r.Error != nil {
			if got := cfJSON(t, r.Error.JSON()); got != `{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}}` {
				t.Errorf("error = %s", got)
			}
		}
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})
}

func TestConfAbortDuringPolicy(t *testing.T) {
	t.Run("case 78: abort while pre-execute awaits, then it allows: ABORTED_BEFORE_DISPATCH, body not run, post-execute still runs", func(t *testing.T) {
		svc := engine.New()
		var body cfCounter
		cfMustRegister(t, svc.Global(), cfTool("must-not-run", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "x", nil }))
		gate := cfNewGate()
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			gate.wait()
			return next()
		})
		post := cfPostCounter(svc)
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("cancelled-in-pre", "must-not-run", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), cfAbortedBefore(t))
		if body.get() != 0 {
			t.Error("the body ran")
		}
		if post.get() != 1 {
			t.Errorf("post-execute ran %d times, want 1 (P6 is a post-result)", post.get())
		}
	})

	t.Run("case 78: abort while a wrapper waits before next: ABORTED_BEFORE_DISPATCH, body not run", func(t *testing.T) {
		for _, replace := range []bool{false, true} {
			name := "passing the caller's ctx"
			if replace {
				name = "passing a replacement ctx"
			}
			t.Run(name, func(t *testing.T) {
				svc := engine.New()
				var body cfCounter
				cfMustRegister(t, svc.Global(), cfTool("must-not-run", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "x", nil }))
				gate := cfNewGate()
				replacement, cancelRepl := context.WithCancel(context.Background())
				defer cancelRepl()
				svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
					gate.wait()
					if replace {
						return next(replacement), nil
					}
					return next(ctx), nil
				})
				ctx, cancel := context.WithCancel(context.Background())
				ch := cfCallCtx(svc, ctx, cfIn("cancelled-in-around", "must-not-run", cfObj()))
				gate.awaitEntered(t)
				cancel()
				gate.open()
				cfExpect(t, cfAwait(t, ch), cfAbortedBefore(t))
				if body.get() != 0 {
					t.Error("the body ran")
				}
			})
		}
	})

	t.Run("case 79: abort while pre-execute awaits, then it denies: exactly the denial", func(t *testing.T) {
		svc := engine.New()
		body := cfBodyCounter(t, svc, "denied-after-cancel")
		gate := cfNewGate()
		svc.Global().OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			gate.wait()
			return engine.Deny("policy denied the call"), nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("denied-after-cancel", "denied-after-cancel", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), `{"isError":true,"error":{"message":"policy denied the call"},"content":[{"type":"text","text":"Error: policy denied the call"}]}`)
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("case 80: abort while pre-execute awaits, then it throws: exactly Error: gate interrupted", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				body := cfBodyCounter(t, svc, "must-not-run")
				gate := cfNewGate()
				svc.Global().OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
					gate.wait()
					return engine.PreDecision{}, cfRaise(mode, errors.New("gate interrupted"))
				})
				ctx, cancel := context.WithCancel(context.Background())
				ch := cfCallCtx(svc, ctx, cfIn("cancelled-pre-error", "must-not-run", cfObj()))
				gate.awaitEntered(t)
				cancel()
				gate.open()
				cfExpect(t, cfAwait(t, ch), `{"isError":true,"error":{"message":"gate interrupted"},"content":[{"type":"text","text":"Error: gate interrupted"}]}`)
				if body.get() != 0 {
					t.Error("the body ran")
				}
			})
		}
	})

	t.Run("§3.2 P6: abort while a guard awaits, then it abstains: ABORTED_BEFORE_DISPATCH", func(t *testing.T) {
		svc := engine.New()
		body := cfBodyCounter(t, svc, "must-not-run")
		gate := cfNewGate()
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { gate.wait(); return "", nil })
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("c1", "must-not-run", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), cfAbortedBefore(t))
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("§3.2 P3: a pre-execute cancel decision is ABORTED_BEFORE_DISPATCH and still reaches post-execute", func(t *testing.T) {
		svc := engine.New()
		body := cfBodyCounter(t, svc, "echo")
		post := cfPostCounter(svc)
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Cancel(), nil }))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfAbortedBefore(t))
		if body.get() != 0 || post.get() != 1 {
			t.Errorf("body %d (want 0), post %d (want 1)", body.get(), post.get())
		}
	})
}

func TestConfAbortDuringApproval(t *testing.T) {
	askingService := func(t *testing.T, outcome engine.ApprovalOutcome) (*engine.Service, *cfGate, *cfCounter, *cfCounter) {
		gate := cfNewGate()
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			gate.wait()
			return outcome, nil
		})))
		body := cfBodyCounter(t, svc, "approval-probe")
		post := cfPostCounter(svc)
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(""), nil }))
		return svc, gate, body, post
	}
	run := func(t *testing.T, svc *engine.Service, gate *cfGate) *engine.Result {
		ctx, cancel := context.WithCancel(context.Background())
		in := cfIn("approval-cancelled", "approval-probe", cfObj())
		in.Agent = engine.NewAgent("a", nil)
		ch := cfCallCtx(svc, ctx, in)
		gate.awaitEntered(t)
		cancel()
		gate.open()
		return cfAwait(t, ch)
	}

	t.Run("§3.6: caller abort while approval is pending, then allowed-once: ABORTED_BEFORE_DISPATCH, the body never runs", func(t *testing.T) {
		svc, gate, body, _ := askingService(t, engine.AllowedOnce)
		cfExpect(t, run(t, svc, gate), cfAbortedBefore(t))
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("§3.2 P4: caller abort while approval is pending, then cancelled: ABORTED_BEFORE_DISPATCH as a post-result", func(t *testing.T) {
		svc, gate, body, post := askingService(t, engine.Cancelled)
		cfExpect(t, run(t, svc, gate), cfAbortedBefore(t))
		if body.get() != 0 || post.get() != 1 {
			t.Errorf("body %d (want 0), post %d (want 1)", body.get(), post.get())
		}
	})

	t.Run("§3.2 P5: caller abort while approval is pending, then rejected: the denial is kept", func(t *testing.T) {
		svc, gate, body, _ := askingService(t, engine.Rejected)
		cfExpect(t, run(t, svc, gate), cfFail(t, `the user rejected tool "approval-probe"`))
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})
}

func TestConfAbortAfterDispatch(t *testing.T) {
	t.Run("case 83: the body completed with a deferred context, abort while the wrapper waits after next: ABORTED, context kept", func(t *testing.T) {
		svc := engine.New()
		child := cfMsg("completed child work", "child")
		cfMustRegister(t, svc.Global(), cfTool("completed-before-wrapper", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.DeferContext(child)
			run.ConcludeTurn()
			return "body complete", nil
		}))
		gate := cfNewGate()
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			r := next(ctx)
			gate.wait()
			return r, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("cancelled-after-body", "completed-before-wrapper", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		r := cfAwait(t, ch)
		cfExpect(t, r, `{"isError":true,"error":{"message":"tool call aborted","info":{"name":"AbortError","code":"ABORTED"}},"content":[{"type":"text","text":"Error: tool call aborted"}],"additionalContexts":[`+cfJSON(t, child.JSON())+`]}`)
		if r.ConcludesTurn {
			t.Error("a cancellation result carries concludesTurn")
		}
	})

	t.Run("§3.5 F6: abort while post-execute awaits a success: ABORTED keeping body and post contexts", func(t *testing.T) {
		svc := engine.New()
		child := cfMsg("completed child work", "child")
		postMsg := cfMsg("post context", "post")
		cfMustRegister(t, svc.Global(), cfTool("completed-before-post", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.DeferContext(child)
			return "body complete", nil
		}))
		gate := cfNewGate()
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			d, err := next()
			gate.wait()
			d.AdditionalContexts = []engine.Message{postMsg}
			return d, err
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("cancelled-in-post", "completed-before-post", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), `{"isError":true,"error":{"message":"tool call aborted","info":{"name":"AbortError","code":"ABORTED"}},"content":[{"type":"text","text":"Error: tool call aborted"}],"additionalContexts":[`+cfJSON(t, child.JSON())+`,`+cfJSON(t, postMsg.JSON())+`]}`)
	})

	t.Run("§3.3 D4: abort while a short-circuiting wrapper waits: ABORTED_BEFORE_DISPATCH with the wrapper's context", func(t *testing.T) {
		svc := engine.New()
		body := cfBodyCounter(t, svc, "short-circuited")
		wrapperMsg := cfMsg("wrapper context", "wrapper")
		gate := cfNewGate()
		svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
			gate.wait()
			return &engine.Result{Value: "wrapper success", Content: []engine.Block{engine.Text("wrapper success")},
				AdditionalContexts: []engine.Message{wrapperMsg}}, nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("cancelled-short-circuit", "short-circuited", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), `{"isError":true,"error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},"content":[{"type":"text","text":"Error: tool call aborted before dispatch"}],"additionalContexts":[`+cfJSON(t, wrapperMsg.JSON())+`]}`)
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("§3.3 D5: a coded wrapper failure that settles after cancellation keeps its code", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				body := cfBodyCounter(t, svc, "wrapper-failure")
				gate := cfNewGate()
				svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
					gate.wait()
					return nil, cfRaise(mode, engine.NewError("HarnessError", "WRAPPER_FAILURE", "wrapper failed"))
				})
				ctx, cancel := context.WithCancel(context.Background())
				ch := cfCallCtx(svc, ctx, cfIn("wrapper-failure", "wrapper-failure", cfObj()))
				gate.awaitEntered(t)
				cancel()
				gate.open()
				cfExpect(t, cfAwait(t, ch), cfCoded(t, "wrapper failed", "HarnessError", "WRAPPER_FAILURE"))
				if body.get() != 0 {
					t.Error("the body ran")
				}
			})
		}
	})

	t.Run("case 86: a body failing with a coded TOOL_FAILURE upon observing the abort keeps that error", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				entered := cfNewGate()
				cfMustRegister(t, svc.Global(), cfTool("tool-failure", func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
					entered.once.Do(func() { close(entered.entered) })
					<-ctx.Done()
					return nil, cfRaise(mode, engine.NewError("HarnessError", "TOOL_FAILURE", "tool failed"))
				}))
				ctx, cancel := context.WithCancel(context.Background())
				ch := cfCallCtx(svc, ctx, cfIn("tool-failure", "tool-failure", cfObj()))
				entered.awaitEntered(t)
				cancel()
				cfExpect(t, cfAwait(t, ch), cfCoded(t, "tool failed", "HarnessError", "TOOL_FAILURE"))
			})
		}
	})

	t.Run("§3.5 F7: a coded post-execute failure that settles after cancellation keeps its code", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		gate := cfNewGate()
		svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			gate.wait()
			return engine.PostDecision{}, engine.NewError("HarnessError", "POST_FAILURE", "post-policy failed")
		})
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("post-failure", "echo", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), cfCoded(t, "post-policy failed", "HarnessError", "POST_FAILURE"))
	})

	t.Run("§3.3 D2d: a started body is awaited to completion after the abort, then ABORTED with its contexts", func(t *testing.T) {
		svc := engine.New()
		nested := cfMsg("nested outcome", "nested")
		gate := cfNewGate()
		cfMustRegister(t, svc.Global(), cfTool("uncooperative", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.DeferContext(nested)
			gate.wait()
			return "settled", nil
		}))
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("drain-body", "uncooperative", cfObj()))
		gate.awaitEntered(t)
		cancel()
		select {
		case r := <-ch:
			t.Fatalf("the call returned before its started body settled: %s", cfResultJSON(t, r))
		case <-time.After(30 * time.Millisecond):
		}
		gate.open()
		cfExpect(t, cfAwait(t, ch), `{"isError":true,"error":{"message":"tool call aborted","info":{"name":"AbortError","code":"ABORTED"}},"content":[{"type":"text","text":"Error: tool call aborted"}],"additionalContexts":[`+cfJSON(t, nested.JSON())+`]}`)
	})

	t.Run("§3.3: a failure settling after the abort is kept (the body's own error)", func(t *testing.T) {
		svc := engine.New()
		gate := cfNewGate()
		cfMustRegister(t, svc.Global(), cfTool("late-failure", func(context.Context, any, *engine.Run) (any, error) {
			gate.wait()
			return nil, errors.New("late failure")
		}))
		ctx, cancel := context.WithCancel(context.Background())
		ch := cfCallCtx(svc, ctx, cfIn("c1", "late-failure", cfObj()))
		gate.awaitEntered(t)
		cancel()
		gate.open()
		cfExpect(t, cfAwait(t, ch), cfFail(t, "late failure"))
	})
}

func TestConfPreAborted(t *testing.T) {
	t.Run("case 90: a pre-aborted call enters no phase, is observed once, and has the ABORTED_BEFORE_DISPATCH shape exactly", func(t *testing.T) {
		svc := engine.New()
		var pre, around, body, post, results cfCounter
		cfMustRegister(t, svc.Global(), cfTool("domain-abort", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "x", nil }))
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			pre.inc()
			return next()
		})
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			around.inc()
			return next(ctx), nil
		})
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			post.inc()
			return next()
		})
		var observed *engine.Result
		var observedArgs any
		var tokens []*engine.Token
		svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
			results.inc()
			observed, observedArgs = r, exec.Arguments()
			tokens = append(tokens, exec.Token())
			return nil
		})
		inner := map[string]any{"value": 1}
		callerArgs := map[string]any{"nested": inner}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := svc.Call(ctx, cfIn("pre-aborted", "domain-abort", callerArgs))
		cfExpect(t, r, `{"isError":true,"error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},"content":[{"type":"text","text":"Error: tool call aborted before dispatch"}]}`)
		if got := [5]int64{pre.get(), around.get(), body.get(), post.get(), results.get()}; got != [5]int64{0, 0, 0, 0, 1} {
			t.Errorf("phases pre/around/body/post/result = %v, want [0 0 0 0 1]", got)
		}
		if observed != r {
			t.Error("the observer did not get the identical result")
		}
		// Go equivalent of "a frozen detached deep copy".
		if _, isMap := observedArgs.(map[string]any); isMap || !dsl.Equal(observedArgs, callerArgs) {
			t.Errorf("observed arguments %#v, want a snapshot equal to the caller's", observedArgs)
		}
		inner["value"] = 2
		if cfJSON(t, observedArgs) != `{"nested":{"value":1}}` {
			t.Errorf("the observed arguments follow the caller's value: %s", cfJSON(t, observedArgs))
		}
		svc.Call(ctx, cfIn("pre-aborted-2", "domain-abort", cfObj()))
		if len(tokens) != 2 || tokens[0] == nil || tokens[0] == tokens[1] {
			t.Error("tokens are not fresh identities")
		}
	})

	t.Run("§3.8: a pre-aborted call still applies the captured finalizer", func(t *testing.T) {
		svc := engine.New()
		var finals cfCounter
		d := cfEchoDef("echo")
		d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
			finals.inc()
			return []engine.Block{engine.Text("finalized")}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := svc.Call(ctx, cfIn("c1", "echo", cfObj()))
		cfExpectCode(t, r, "AbortError", "ABORTED_BEFORE_DISPATCH")
		if cfFirstText(r) != "finalized" || finals.get() != 1 {
			t.Errorf("content %q, finalizer ran %d times", cfFirstText(r), finals.get())
		}
	})

	t.Run("case 91: pre-aborted with non-lossless arguments to an unknown name: the argument failure wins", func(t *testing.T) {
		svc := engine.New()
		var observed cfCounter
		svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { observed.inc(); return nil })
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := svc.Call(ctx, cfIn("invalid-pre-aborted", "missing", map[string]any{"invalid": func() {}}))
		cfExpect(t, r, `{"isError":true,"error":{"message":"tool execution arguments must be losslessly JSON-serializable"},"content":[{"type":"text","text":"Error: tool execution arguments must be losslessly JSON-serializable"}]}`)
		if observed.get() != 1 {
			t.Errorf("observer called %d times, want 1", observed.get())
		}
	})

	t.Run("§1.9: the canonical cancellation results carry the Error: prefix on their message", func(t *testing.T) {
		svc := engine.New()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := svc.Call(ctx, cfIn("c1", "whatever", cfObj()))
		if !strings.HasPrefix(cfFirstText(r), "Error: ") || r.Error.Message != "tool call aborted before dispatch" {
			t.Errorf("%s", cfResultJSON(t, r))
		}
	})
}
