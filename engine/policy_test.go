package engine_test

// Conformance: policy around a call — guards and scoped listeners (§2.5,
// §2.7), pre-execute and approval (§3.2, §3.6), post-execute (§3.5) — and §6
// cases 23–25, 44–67. See helpers_test.go for the cases that do not apply.

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// cfPre adapts a decision-only pre-execute listener.
func cfPre(f func(exec *engine.Execution) (engine.PreDecision, error)) engine.PreExecuteFunc {
	return func(_ context.Context, exec *engine.Execution, _ func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return f(exec)
	}
}

// cfPost adapts a decision-only post-execute listener.
func cfPost(f func(r *engine.Result) (engine.PostDecision, error)) engine.PostExecuteFunc {
	return func(_ context.Context, _ *engine.Execution, r *engine.Result, _ func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		return f(r)
	}
}

// cfPostCounter counts post-execute runs, passing through.
func cfPostCounter(svc *engine.Service) *cfCounter {
	var n cfCounter
	svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		n.inc()
		return next()
	})
	return &n
}

// cfBodyCounter registers echo-shaped tool name whose body counts its runs.
func cfBodyCounter(t *testing.T, svc *engine.Service, name string) *cfCounter {
	var n cfCounter
	cfMustRegister(t, svc.Global(), cfTool(name, func(context.Context, any, *engine.Run) (any, error) { n.inc(); return "ran", nil }))
	return &n
}

func TestConfGuardsAndScopedPolicy(t *testing.T) {
	t.Run("case 23: a scoped pre-execute deny affects only that agent's calls (and its descendants')", func(t *testing.T) {
		svc := engine.New()
		a, b := engine.NewAgent("a", nil), engine.NewAgent("b", nil)
		child := engine.NewAgent("a-child", a)
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var saw cfTrace
		svc.Scope(a).OnPreExecute(cfPre(func(exec *engine.Execution) (engine.PreDecision, error) {
			saw.add(exec.Agent().ID())
			return engine.Deny("scoped veto"), nil
		}))
		cfExpect(t, cfCallAs(svc, a, "echo", cfObj("text", "x")), cfFail(t, "scoped veto"))
		cfExpect(t, cfCallAs(svc, child, "echo", cfObj("text", "x")), cfFail(t, "scoped veto"))
		if r := cfCallAs(svc, b, "echo", cfObj("text", "x")); r.IsError {
			t.Errorf("other agent: %s", cfResultJSON(t, r))
		}
		if r := cfCall(svc, "echo", cfObj("text", "x")); r.IsError {
			t.Errorf("agent-less call: %s", cfResultJSON(t, r))
		}
		if got := saw.String(); got != "a,a-child" {
			t.Errorf("the scoped listener saw %s, want a,a-child", got)
		}
	})

	t.Run("case 24: a scoped guard denies even when a prepended listener forces allow", func(t *testing.T) {
		svc := engine.New()
		a, b := engine.NewAgent("a", nil), engine.NewAgent("b", nil)
		body := cfBodyCounter(t, svc, "bash")
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Allow(), nil }), engine.Prepend())
		var guardArgs []any
		guard := func(_ context.Context, exec *engine.Execution) (string, error) {
			guardArgs = append(guardArgs, exec.Arguments())
			return "terminal policy", nil
		}
		policy := svc.Scope(a)
		lift1 := policy.Guard(guard)
		policy.Guard(guard)
		callerArgs := map[string]any{"cmd": "rm"}
		cfExpect(t, cfCallAs(svc, a, "bash", callerArgs), cfFail(t, "terminal policy"))
		if body.get() != 0 {
			t.Error("the body ran despite the guard")
		}
		if r := cfCallAs(svc, b, "bash", cfObj()); r.IsError || body.get() != 1 {
			t.Errorf("other agent: %s", cfResultJSON(t, r))
		}
		lift1()
		cfExpect(t, cfCallAs(svc, a, "bash", cfObj()), cfFail(t, "terminal policy"))
		policy.Dispose()
		if r := cfCallAs(svc, a, "bash", cfObj()); r.IsError {
			t.Errorf("guard survived scope disposal: %s", cfResultJSON(t, r))
		}
		// Go equivalent of "frozen arguments": the guard gets a detached snapshot.
		if len(guardArgs) == 0 {
			t.Fatal("the guard never ran")
		}
		if _, isMap := guardArgs[0].(map[string]any); isMap || !dsl.Equal(guardArgs[0], callerArgs) {
			t.Errorf("guard saw %#v, want a snapshot equal to the caller's arguments", guardArgs[0])
		}
		callerArgs["cmd"] = "mutated"
		if cfJSON(t, guardArgs[0]) != `{"cmd":"rm"}` {
			t.Errorf("the guard's arguments follow the caller's value: %s", cfJSON(t, guardArgs[0]))
		}
	})

	t.Run("case 25: global guards: the first abstains, the second denies with its reason; the body does not run", func(t *testing.T) {
		svc := engine.New()
		body := cfBodyCounter(t, svc, "echo")
		var tr cfTrace
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { tr.add("first"); return "", nil })
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) {
			tr.add("second")
			return "global denial", nil
		})
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { tr.add("third"); return "later", nil })
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "global denial"))
		if body.get() != 0 {
			t.Error("the body ran")
		}
		if tr.String() != "first,second" {
			t.Errorf("guards ran %s, want first,second", tr.String())
		}
	})

	t.Run("§2.5: guards run global first, then each chain layer from the farthest ancestor to the exact scope", func(t *testing.T) {
		svc := engine.New()
		root := engine.NewAgent("root", nil)
		mid := engine.NewAgent("mid", root)
		leaf := engine.NewAgent("leaf", mid)
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var tr cfTrace
		abstain := func(label string) engine.GuardFunc {
			return func(context.Context, *engine.Execution) (string, error) { tr.add(label); return "", nil }
		}
		svc.Scope(leaf).Guard(abstain("leaf"))
		svc.Scope(mid).Guard(abstain("mid"))
		svc.Scope(root).Guard(abstain("root"))
		svc.Global().Guard(abstain("global1"))
		svc.Global().Guard(abstain("global2"))
		cfCallAs(svc, leaf, "echo", cfObj())
		if got := tr.String(); got != "global1,global2,root,mid,leaf" {
			t.Errorf("guard order = %s", got)
		}
		tr = cfTrace{}
		cfCall(svc, "echo", cfObj())
		if got := tr.String(); got != "global1,global2" {
			t.Errorf("agent-less guard order = %s", got)
		}
	})

	t.Run("§2.5: guards run only after pre-execute allowed; a guard denial still reaches post-execute", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var guards cfCounter
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { guards.inc(); return "guarded", nil })
		deny := true
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			if deny {
				return engine.Deny("pre denied"), nil
			}
			return next()
		})
		post := cfPostCounter(svc)
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "pre denied"))
		if guards.get() != 0 {
			t.Error("a guard ran after a pre-execute deny")
		}
		deny = false
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "guarded"))
		if post.get() != 2 {
			t.Errorf("post-execute ran %d times, want 2 (denials are post-results)", post.get())
		}
	})

	t.Run("§2.5: a throwing guard is a pipeline failure that bypasses post-execute", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				body := cfBodyCounter(t, svc, "echo")
				post := cfPostCounter(svc)
				svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) {
					return "", cfRaise(mode, engine.NewError("HarnessError", "BOOM", "guard exploded"))
				})
				cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, "guard exploded", "HarnessError", "BOOM"))
				if post.get() != 0 || body.get() != 0 {
					t.Errorf("post %d body %d, want 0", post.get(), body.get())
				}
			})
		}
	})

	t.Run("§2.5: guards emit no tools/change and CheckGuards exposes the same evaluation", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var changes cfCounter
		svc.Global().OnChange(func(engine.Change) error { changes.inc(); return nil })
		lift := svc.Scope(a).Guard(func(_ context.Context, exec *engine.Execution) (string, error) {
			return "no " + exec.Name(), nil
		})
		var exec *engine.Execution
		svc.Global().OnResult(func(e *engine.Execution, _ *engine.Result) error { exec = e; return nil })
		cfCallAs(svc, a, "echo", cfObj())
		reason, err := svc.Scope(a).CheckGuards(context.Background(), exec)
		if reason != "no echo" || err != nil {
			t.Errorf("CheckGuards = %q, %v", reason, err)
		}
		lift()
		if reason, err := svc.Scope(a).CheckGuards(context.Background(), exec); reason != "" || err != nil {
			t.Errorf("CheckGuards after lift = %q, %v", reason, err)
		}
		if changes.get() != 0 {
			t.Errorf("guards emitted %d tools/change events", changes.get())
		}
	})
}

func TestConfPostExecute(t *testing.T) {
	projected := func() *engine.Definition {
		return cfProjected("projected", func(context.Context, any, *engine.Run) (any, error) { return cfObj("text", "body"), nil })
	}

	t.Run("case 44: accept with content replaces the content; the body's value and meta are kept", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), projected())
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			return engine.AcceptContent([]engine.Block{engine.Text("policy content")}), nil
		}))
		cfExpect(t, cfCall(svc, "projected", cfObj()),
			`{"isError":false,"value":{"text":"body"},"content":[{"type":"text","text":"policy content"}],"meta":{"projected":"body"}}`)
	})

	t.Run("case 45: accept with a value and a context re-renders, recomputes meta and carries the context", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), projected())
		m := cfMsg("value context", "test")
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			return engine.AcceptValue(cfObj("text", "policy value"), m), nil
		}))
		r := cfCall(svc, "projected", cfObj())
		cfExpect(t, r, `{"isError":false,"value":{"text":"policy value"},"content":[{"type":"text","text":"render:policy value"}],"meta":{"projected":"policy value"},"additionalContexts":[{"id":"`+m.ID+`","role":"user","content":[{"type":"text","text":"value context"}],"source":{"kind":"plugin","plugin":"test"}}]}`)
		if m.ID == "" {
			t.Error("NewUserMessage gave an empty id")
		}
	})

	t.Run("case 46: accept with a value only has no additionalContexts key", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.AcceptValue("replacement"), nil }))
		r := cfCall(svc, "echo", cfObj())
		cfExpect(t, r, `{"isError":false,"value":"replacement","content":[{"type":"text","text":"replacement"}]}`)
		if r.AdditionalContexts != nil {
			t.Errorf("AdditionalContexts = %#v, want nil", r.AdditionalContexts)
		}
	})

	t.Run("case 47: accept with both a value and content fails with the literal message", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			d := engine.AcceptValue("replacement")
			d.Content, d.HasContent = []engine.Block{engine.Text("also replacement")}, true
			return d, nil
		}))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "tools/post-execute accept decision cannot replace both value and content"))
	})

	t.Run("case 48: accept with a value violating the schema fails as INVALID_TOOL_OUTPUT with no value key", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.AcceptValue(1), nil }))
		r := cfCall(svc, "echo", cfObj())
		cfExpect(t, r, cfCoded(t, `tool "echo" returned invalid output: "value" must be a string`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
		cfExpectNoValueKey(t, r)
	})

	t.Run("§3.5 F4: accept with a nil value key still replaces (and is validated)", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.AcceptValue(nil), nil }))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, `tool "echo" returned invalid output: "value" must be a string`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
	})

	t.Run("case 49: accept with a value after the body threw fails with the literal message", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfTool("throw-before-replace", func(context.Context, any, *engine.Run) (any, error) {
			return nil, errors.New("body failed")
		}))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.AcceptValue("replacement"), nil }))
		cfExpect(t, cfCall(svc, "throw-before-replace", cfObj()), cfFail(t, "tools/post-execute cannot replace the value of a failed result"))
	})

	t.Run("§3.5 F4: a value replacement after the tool was disposed fails as UNKNOWN_TOOL", func(t *testing.T) {
		svc := engine.New()
		dispose := cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			dispose()
			return engine.AcceptValue("replacement"), nil
		}))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, `unknown tool "echo"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
	})

	t.Run("§3.5 F5: accept with content on a failure keeps it a failure with its error", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfTool("boom", func(context.Context, any, *engine.Run) (any, error) { return nil, cfBoom() }))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			return engine.AcceptContent([]engine.Block{engine.Text("softened")}), nil
		}))
		cfExpect(t, cfCall(svc, "boom", cfObj()),
			`{"isError":true,"error":{"message":"kaboom","info":{"name":"HarnessError","code":"BOOM"}},"content":[{"type":"text","text":"softened"}]}`)
	})

	t.Run("case 51: block turns the call into exactly a valueless failure with the feedback as content", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			return engine.BlockResult([]engine.Block{engine.Text("blocked by policy")}), nil
		}))
		r := cfCall(svc, "echo", cfObj("text", "secret"))
		cfExpect(t, r, `{"isError":true,"error":{"message":"blocked by policy"},"content":[{"type":"text","text":"blocked by policy"}]}`)
		if r.Value != nil {
			t.Errorf("Value = %v", r.Value)
		}
	})

	t.Run("§3.5 F2: the block message is derived from the feedback blocks", func(t *testing.T) {
		for _, c := range []struct {
			name     string
			feedback []engine.Block
			want     string
		}{
			{"empty feedback", []engine.Block{}, "tool result blocked by post-execute policy"},
			{"nil feedback", nil, "tool result blocked by post-execute policy"},
			{"a reasoning block", []engine.Block{engine.ReasoningBlock{Text: "private rationale"}}, "[reasoning content]"},
			{"text and image joined by newlines", []engine.Block{engine.Text("look"), engine.ImageBlock{Attachment: cfObj("id", "img")}, engine.Text("")}, "look\n[image content]\n"},
			{"an empty text block", []engine.Block{engine.Text("")}, "tool result blocked by post-execute policy"},
		} {
			t.Run(c.name, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.BlockResult(c.feedback), nil }))
				r := cfCall(svc, "echo", cfObj())
				if !r.IsError || r.Error.Message != c.want || r.Error.Info != nil {
					t.Errorf("error = %+v, want message %q and no info", r.Error, c.want)
				}
				if got, want := cfJSON(t, engine.ContentJSON(r.Content)), cfJSON(t, engine.ContentJSON(c.feedback)); got != want {
					t.Errorf("content %s, want the feedback verbatim %s", got, want)
				}
			})
		}
	})

	t.Run("§3.7 M1: block feedback that is not lossless yields the lossless-result failure", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			return engine.BlockResult([]engine.Block{engine.RawBlock{Value: cfObj("type", "text", "text", "blocked", "invalid", func() {})}}), nil
		}))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "tool result must be losslessly JSON-serializable"))
	})

	t.Run("case 54: a block's context is the only one kept; an accept's context rides on the result", func(t *testing.T) {
		svc := engine.New()
		deferred := cfMsg("deferred", "body")
		cfMustRegister(t, svc.Global(), cfTool("deferring", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.DeferContext(deferred)
			return "hi", nil
		}))
		why := cfMsg("why it was rejected", "test")
		fyi := cfMsg("fyi", "test")
		block := true
		svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
			if block {
				return engine.BlockResult([]engine.Block{engine.Text("rejected")}, why), nil
			}
			return engine.Accept(fyi), nil
		}))
		cfExpect(t, cfCall(svc, "deferring", cfObj()),
			`{"isError":true,"error":{"message":"rejected"},"content":[{"type":"text","text":"rejected"}],"additionalContexts":[`+cfJSON(t, why.JSON())+`]}`)
		block = false
		cfExpect(t, cfCall(svc, "deferring", cfObj()),
			`{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}],"additionalContexts":[`+cfJSON(t, deferred.JSON())+`,`+cfJSON(t, fyi.JSON())+`]}`)
	})

	t.Run("case 57: a throwing post-execute listener yields exactly Error: post hook broke", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
					return engine.PostDecision{}, cfRaise(mode, errors.New("post hook broke"))
				}))
				cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), `{"isError":true,"error":{"message":"post hook broke"},"content":[{"type":"text","text":"Error: post hook broke"}]}`)
			})
		}
	})

	t.Run("§3.5 F7: a coded post-execute throw keeps its info", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) {
					return engine.PostDecision{}, cfRaise(mode, engine.NewError("HarnessError", "POST_FAILURE", "post-policy failed"))
				}))
				cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, "post-policy failed", "HarnessError", "POST_FAILURE"))
			})
		}
	})

	t.Run("case 58: the pre-execute denial post-execute sees is the materialized denial, detached from the final result", func(t *testing.T) {
		// Go has no freezing: assert that post-execute sees the finished denial
		// and that the final result does not share its content with it.
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPreExecute(cfPre(func(exec *engine.Execution) (engine.PreDecision, error) {
			return engine.Deny("denied by policy"), nil
		}))
		var seen *engine.Result
		var seenJSON string
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			seen = r
			seenJSON = cfResultJSON(t, r)
			return next()
		})
		r := cfCall(svc, "echo", cfObj("text", "hi"))
		want := cfFail(t, "denied by policy")
		if seenJSON != want {
			t.Errorf("post-execute saw %s, want %s", seenJSON, want)
		}
		cfExpect(t, r, want)
		if seen == nil || len(seen.Content) == 0 {
			t.Fatal("post-execute saw no content")
		}
		seen.Content[0] = engine.Text("mutated afterwards")
		cfExpect(t, r, want)
	})
}

func TestConfPreExecuteAndApproval(t *testing.T) {
	t.Run("case 59: a pre-execute deny yields Error: denied by policy and tools/execute never runs", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var wrapper cfCounter
		svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			if exec.Name() == "echo" {
				return engine.Deny("denied by policy"), nil
			}
			return next()
		})
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			wrapper.inc()
			return next(ctx), nil
		})
		cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), `{"isError":true,"error":{"message":"denied by policy"},"content":[{"type":"text","text":"Error: denied by policy"}]}`)
		if wrapper.get() != 0 {
			t.Error("tools/execute ran after a deny")
		}
	})

	t.Run("§3.2 P5: deny.info becomes error.info; the model content carries only the reason", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) {
			d := engine.Deny("sandbox says no")
			d.Info = &engine.ErrorInfo{Name: "PolicyError", Code: "SANDBOX", Reason: "write outside workspace"}
			return d, nil
		}))
		cfExpect(t, cfCall(svc, "echo", cfObj()),
			`{"isError":true,"error":{"message":"sandbox says no","info":{"name":"PolicyError","code":"SANDBOX","reason":"write outside workspace"}},"content":[{"type":"text","text":"Error: sandbox says no"}]}`)
	})

	t.Run("case 60: a throwing pre-execute listener yields exactly its error; a coded throw keeps {HarnessError, DENIED}", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				post := cfPostCounter(svc)
				coded := false
				svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) {
					if coded {
						return engine.PreDecision{}, cfRaise(mode, engine.NewError("HarnessError", "DENIED", "denied"))
					}
					return engine.PreDecision{}, cfRaise(mode, errors.New("permission hook broke"))
				}))
				cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), `{"isError":true,"error":{"message":"permission hook broke"},"content":[{"type":"text","text":"Error: permission hook broke"}]}`)
				coded = true
				cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), cfCoded(t, "denied", "HarnessError", "DENIED"))
				if post.get() != 0 {
					t.Errorf("post-execute ran %d times after a pre-execute throw (final-result)", post.get())
				}
			})
		}
	})

	t.Run("case 61: ask without an approval service denies with its reason, or the default message", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		reason := "needs approval"
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(reason), nil }))
		a := engine.NewAgent("a", nil)
		cfExpect(t, cfCallAs(svc, a, "echo", cfObj("text", "hi")), cfFail(t, "needs approval"))
		reason = ""
		cfExpect(t, cfCallAs(svc, a, "echo", cfObj("text", "hi")), cfFail(t, `tool "echo" requires approval (not yet supported)`))
		cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), cfFail(t, `tool "echo" requires approval (not yet supported)`))
	})

	t.Run("case 62: allowed-once runs the body; the request carries agent, toolName, callId, reason and the caller's exact ctx", func(t *testing.T) {
		var seen []engine.ApprovalRequest
		var seenCtx context.Context
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(ctx context.Context, req engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			seen = append(seen, req)
			seenCtx = ctx
			return engine.AllowedOnce, nil
		})))
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) {
			d := engine.Ask("hook wants a human")
			d.DisplayReason = "run echo?"
			return d, nil
		}))
		agent := engine.NewAgent("a", nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		in := cfIn("c1", "echo", cfObj("text", "hi"))
		in.Agent = agent
		cfExpect(t, svc.Call(ctx, in), `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
		if len(seen) != 1 {
			t.Fatalf("approval asked %d times", len(seen))
		}
		want := engine.ApprovalRequest{Agent: agent, ToolName: "echo", CallID: "c1", Reason: "hook wants a human", DisplayReason: "run echo?"}
		if seen[0] != want {
			t.Errorf("request = %+v, want %+v", seen[0], want)
		}
		if seenCtx != ctx {
			t.Error("the approval service did not receive the caller's exact ctx")
		}
	})

	t.Run("§3.6: allowed-once still runs the guards", func(t *testing.T) {
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			return engine.AllowedOnce, nil
		})))
		body := cfBodyCounter(t, svc, "echo")
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(""), nil }))
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { return "guard after approval", nil })
		cfExpect(t, cfCallAs(svc, engine.NewAgent("a", nil), "echo", cfObj()), cfFail(t, "guard after approval"))
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("case 63: rejected, cancelled and unavailable approval outcomes deny with their literal reasons", func(t *testing.T) {
		for _, c := range []struct {
			outcome engine.ApprovalOutcome
			want    string
		}{
			{engine.Rejected, `the user rejected tool "echo"`},
			{engine.Cancelled, `approval for tool "echo" was cancelled`},
			{engine.Unavailable, `tool "echo" requires approval, but no approval channel is available`},
		} {
			t.Run(string(c.outcome), func(t *testing.T) {
				svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
					return c.outcome, nil
				})))
				body := cfBodyCounter(t, svc, "echo")
				post := cfPostCounter(svc)
				svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask("please"), nil }))
				cfExpect(t, cfCallAs(svc, engine.NewAgent("a", nil), "echo", cfObj()), cfFail(t, c.want))
				if body.get() != 0 || post.get() != 1 {
					t.Errorf("body %d (want 0), post %d (want 1: a denial is a post-result)", body.get(), post.get())
				}
			})
		}
	})

	t.Run("case 64: an agent-less ask with a service mounted denies without asking", func(t *testing.T) {
		var asked cfCounter
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			asked.inc()
			return engine.AllowedOnce, nil
		})))
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(""), nil }))
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, `tool "echo" requires approval, but the call has no agent to route it through`))
		if asked.get() != 0 {
			t.Error("the approval service was asked")
		}
	})

	t.Run("§3.6: a non-conforming approval answer is the unreachable-variant pipeline failure", func(t *testing.T) {
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			return "yolo", nil
		})))
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		post := cfPostCounter(svc)
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(""), nil }))
		cfExpect(t, cfCallAs(svc, engine.NewAgent("a", nil), "echo", cfObj()), cfFail(t, `unreachable variant in ApprovalOutcome: "yolo"`))
		if post.get() != 0 {
			t.Error("post-execute ran after an approval failure (final-result)")
		}
	})

	t.Run("§3.2: a failing approval service is a pipeline failure that bypasses post-execute", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
					return "", cfRaise(mode, engine.NewError("HarnessError", "BOOM", "approval seam broke"))
				})))
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				post := cfPostCounter(svc)
				svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask(""), nil }))
				cfExpect(t, cfCallAs(svc, engine.NewAgent("a", nil), "echo", cfObj()), cfCoded(t, "approval seam broke", "HarnessError", "BOOM"))
				if post.get() != 0 {
					t.Error("post-execute ran")
				}
			})
		}
	})

	t.Run("case 67: pass-through listeners run pre:before, pre:after, post:before, post:after; with a wrapper pre, execute:before, dispatch, execute:after, post", func(t *testing.T) {
		svc := engine.New()
		var tr cfTrace
		cfMustRegister(t, svc.Global(), cfTool("traced", func(_ context.Context, args any, _ *engine.Run) (any, error) {
			tr.add("dispatch")
			v, _ := cfArg(args, "text")
			return v, nil
		}))
		pre := svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			tr.add("pre:before")
			d, err := next()
			tr.add("pre:after")
			return d, err
		})
		post := svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			tr.add("post:before")
			d, err := next()
			tr.add("post:after")
			return d, err
		})
		if r := cfCall(svc, "traced", cfObj("text", "x")); r.IsError {
			t.Fatal(cfResultJSON(t, r))
		}
		if got := tr.String(); got != "pre:before,pre:after,dispatch,post:before,post:after" {
			t.Errorf("order = %s", got)
		}
		pre()
		post()
		tr = cfTrace{}
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			tr.add("pre")
			return next()
		})
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			tr.add("execute:before")
			r := next(ctx)
			tr.add("execute:after")
			return r, nil
		})
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			tr.add("post")
			return next()
		})
		cfExpect(t, cfCall(svc, "traced", cfObj("text", "hi")), `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
		if got := tr.String(); got != "pre,execute:before,dispatch,execute:after,post" {
			t.Errorf("order = %s", got)
		}
	})

	t.Run("§2.7: waterfalls run outermost first in registration order; prepend makes a listener outermost", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var tr cfTrace
		add := func(label string, opts ...engine.ListenerOption) {
			svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				tr.add(label)
				return next()
			}, opts...)
		}
		add("a")
		add("b")
		add("p1", engine.Prepend())
		add("c")
		add("p2", engine.Prepend())
		cfCall(svc, "echo", cfObj())
		if got := tr.String(); got != "p2,p1,a,b,c" {
			t.Errorf("order = %s, want p2,p1,a,b,c", got)
		}
	})

	t.Run("§2.7: a listener short-circuits the ones after it", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var later cfCounter
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Deny("first says no"), nil }))
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			later.inc()
			return next()
		})
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "first says no"))
		if later.get() != 0 {
			t.Error("a listener after the short-circuit ran")
		}
	})

	t.Run("§3.2 P5: a guard cannot be undone by a later pre-execute allow; deny reasons are the message exactly", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Allow(), nil }))
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) {
			return `reason with "quotes" and: colons`, nil
		})
		r := cfCall(svc, "echo", cfObj())
		cfExpect(t, r, cfFail(t, `reason with "quotes" and: colons`))
		if !strings.HasPrefix(cfFirstText(r), "Error: reason") {
			t.Errorf("content %q", cfFirstText(r))
		}
	})
}
