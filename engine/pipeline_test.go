package engine_test

// Conformance: the one-call pipeline (§3) and §6 cases 29–42, 68–74, 92–99.
// Cancellation is in cancel_test.go, policy (pre/post/approval/guards) in
// policy_test.go. See helpers_test.go for the cases that do not apply in Go.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// cfStringer is a thrown value printed through its String method.
type cfStringer struct{}

func (cfStringer) String() string { return "stringer says hi" }

// cfHostile is a thrown value whose printing panics.
type cfHostile struct{}

func (cfHostile) String() string { panic("inspection trap") }

// cfHostileErr is an error whose Error method panics.
type cfHostileErr struct{}

func (cfHostileErr) Error() string { panic("coercion trap") }

// cfProjected is the design's "projected" tool: a closed-object output
// {text: string (required)}, rendered "render:<text>", meta {projected: text}.
func cfProjected(name string, body func(ctx context.Context, args any, run *engine.Run) (any, error)) *engine.Definition {
	text := func(v any) string {
		s, _ := cfArg(v, "text")
		return fmt.Sprint(s)
	}
	return &engine.Definition{
		Name: name, Description: "projected", Parameters: cfObj("type", "object", "properties", cfObj()),
		Output: engine.Output{
			Schema: cfObj("type", "object", "additionalProperties", false,
				"properties", cfObj("text", cfObj("type", "string")), "required", []any{"text"}),
			Render: func(_, v any) ([]engine.Block, error) {
				return []engine.Block{engine.Text("render:" + text(v))}, nil
			},
			PresentationMeta: func(_, v any) (any, error) { return cfObj("projected", text(v)), nil },
		},
		Execute: body,
	}
}

func TestConfExecutionBasics(t *testing.T) {
	t.Run("case 29: echo {text: hi} succeeds with value hi and content [text hi]; the observer got the same result", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var observed *engine.Result
		svc.Global().OnResult(func(_ *engine.Execution, r *engine.Result) error { observed = r; return nil })
		r := cfCall(svc, "echo", cfObj("text", "hi"))
		cfExpect(t, r, `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
		if observed != r {
			t.Error("the returned result is not the one tools/result observers received")
		}
		if r.HasMeta || r.AdditionalContexts != nil || r.Error != nil || r.ConcludesTurn {
			t.Errorf("unexpected optional fields: %+v", r)
		}
	})

	t.Run("case 30: presentationMeta puts meta on the result, also for a nested call; no projector, no meta key", func(t *testing.T) {
		svc := engine.New()
		metaTool := cfConst("meta-tool", "ok")
		metaTool.Output.PresentationMeta = func(_, _ any) (any, error) {
			return cfObj("diffs", []any{cfObj("path", "a", "oldText", nil, "newText", "x")}), nil
		}
		cfMustRegister(t, svc.Global(), metaTool)
		cfMustRegister(t, svc.Global(), cfConst("no-meta-tool", "ok"))
		nullMeta := cfConst("null-meta", "ok")
		nullMeta.Output.PresentationMeta = func(_, _ any) (any, error) { return nil, nil }
		cfMustRegister(t, svc.Global(), nullMeta)

		const want = `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}],"meta":{"diffs":[{"path":"a","oldText":null,"newText":"x"}]}}`
		cfExpect(t, cfCall(svc, "meta-tool", cfObj()), want)
		var nested *engine.Result
		composite := cfTool("composite", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			nested = svc.Call(ctx, engine.Input{CallID: "c1:ptc:1", RootCallID: run.RootCallID(), Name: "meta-tool", Arguments: cfObj(), Parent: run.Token()})
			return "done", nil
		})
		cfMustRegister(t, svc.Global(), composite)
		cfCall(svc, "composite", cfObj())
		cfExpect(t, nested, want)
		r := cfCall(svc, "no-meta-tool", cfObj())
		cfExpect(t, r, `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`)
		if r.HasMeta {
			t.Error("HasMeta without a projector")
		}
		cfExpect(t, cfCall(svc, "null-meta", cfObj()), `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}],"meta":null}`)
	})

	t.Run("case 31: an unknown tool fails with UNKNOWN_TOOL and content Error: unknown tool \"nope\"", func(t *testing.T) {
		svc := engine.New()
		cfExpect(t, cfCall(svc, "nope", cfObj()),
			`{"isError":true,"error":{"message":"unknown tool \"nope\"","info":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL"}},"content":[{"type":"text","text":"Error: unknown tool \"nope\""}]}`)
	})

	t.Run("case 32: a body throwing Error(exploded) fails with no info; a coded throw keeps {HarnessError, ENOSPC}", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfTool("boom", func(context.Context, any, *engine.Run) (any, error) {
					return nil, cfRaise(mode, errors.New("exploded"))
				}))
				cfMustRegister(t, svc.Global(), cfTool("coded", func(context.Context, any, *engine.Run) (any, error) {
					return nil, cfRaise(mode, engine.NewError("HarnessError", "ENOSPC", "disk full"))
				}))
				r := cfCall(svc, "boom", cfObj())
				cfExpect(t, r, cfFail(t, "exploded"))
				if r.Error.Info != nil {
					t.Errorf("an un-coded failure has info %+v", r.Error.Info)
				}
				cfExpect(t, cfCall(svc, "coded", cfObj()),
					`{"isError":true,"error":{"message":"disk full","info":{"name":"HarnessError","code":"ENOSPC"}},"content":[{"type":"text","text":"Error: disk full"}]}`)
			})
		}
	})

	t.Run("§1.9: a thrown value's message: error, wrapped coded error, string, Stringer, other value, unprintable", func(t *testing.T) {
		cases := []struct {
			name   string
			body   func() (any, error)
			want   string
			hasTag bool
		}{
			{"a wrapped coded error keeps its info", func() (any, error) { return nil, fmt.Errorf("context: %w", cfBoom()) }, "context: kaboom", true},
			{"a panicked string is itself", func() (any, error) { panic("kaboom") }, "kaboom", false},
			{"a panicked Stringer is its String", func() (any, error) { panic(cfStringer{}) }, "stringer says hi", false},
			{"a panicked number is printed", func() (any, error) { panic(42) }, "42", false},
			{"a panicked value whose printing panics is unprintable", func() (any, error) { panic(cfHostile{}) }, "<unprintable thrown value>", false},
			{"an error whose Error panics is unprintable", func() (any, error) { return nil, cfHostileErr{} }, "<unprintable thrown value>", false},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfTool("thrower", func(context.Context, any, *engine.Run) (any, error) { return c.body() }))
				r := cfCall(svc, "thrower", cfObj())
				if c.hasTag {
					cfExpect(t, r, cfCoded(t, c.want, "HarnessError", "BOOM"))
				} else {
					cfExpect(t, r, cfFail(t, c.want))
				}
			})
		}
	})

	t.Run("case 35: a raw definition with required in its raw schema is not validated: {} reaches the body", func(t *testing.T) {
		svc := engine.New()
		var seen any
		d := cfTool("raw", func(_ context.Context, args any, _ *engine.Run) (any, error) { seen = args; return "reached", nil })
		d.Parameters = cfObj("type", "object", "properties", cfObj("path", cfObj("type", "string")), "required", []any{"path"})
		cfMustRegister(t, svc.Global(), d)
		cfExpect(t, cfCall(svc, "raw", cfObj()), `{"isError":false,"value":"reached","content":[{"type":"text","text":"reached"}]}`)
		if cfJSON(t, seen) != `{}` {
			t.Errorf("body saw %s", cfJSON(t, seen))
		}
	})

	t.Run("case 37: a content-fixture tool returning blocks has value equal to the blocks and content equal to them", func(t *testing.T) {
		svc := engine.New()
		blocks := []any{cfObj("type", "text", "text", "read /x")}
		d := &engine.Definition{
			Name: "reader", Description: "reads", Parameters: cfObj("type", "object", "properties", cfObj()),
			Output:  engine.Output{Schema: cfObj("type", "array"), Render: func(_, v any) ([]engine.Block, error) { return engine.ContentFromJSON(v) }},
			Execute: func(context.Context, any, *engine.Run) (any, error) { return blocks, nil },
		}
		cfMustRegister(t, svc.Global(), d)
		cfExpect(t, cfCall(svc, "reader", cfObj()),
			`{"isError":false,"value":[{"type":"text","text":"read /x"}],"content":[{"type":"text","text":"read /x"}]}`)
	})
}

func TestConfOutputContract(t *testing.T) {
	t.Run("a value its host could not snapshot fails as INVALID_TOOL_OUTPUT naming why", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfConst("too-deep", engine.SnapshotFailure{Err: errors.New(`"value" nesting deeper than 100000 levels`)}))
		r := cfCall(svc, "too-deep", cfObj())
		cfExpect(t, r, cfCoded(t, `tool "too-deep" returned invalid output: value snapshot failed: "value" nesting deeper than 100000 levels`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
	})
	t.Run("case 38: a body value that is not lossless or violates the schema fails as INVALID_TOOL_OUTPUT", func(t *testing.T) {
		svc := engine.New()
		lossy := cfConst("lossy-output", func() {})
		lossy.Output.Schema = cfObj()
		cfMustRegister(t, svc.Global(), lossy)
		cfMustRegister(t, svc.Global(), cfConst("wrong-output", 42))
		r := cfCall(svc, "lossy-output", cfObj())
		cfExpect(t, r, cfCoded(t, `tool "lossy-output" returned invalid output: value is not lossless JSON`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
		if !strings.Contains(cfFirstText(r), "not lossless JSON") {
			t.Errorf("content %q", cfFirstText(r))
		}
		r = cfCall(svc, "wrong-output", cfObj())
		cfExpect(t, r, cfCoded(t, `tool "wrong-output" returned invalid output: "value" must be a string`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
	})

	t.Run("§1.9: several output violations are joined by \"; \"", func(t *testing.T) {
		svc := engine.New()
		d := cfConst("two", cfObj())
		d.Output.Schema = cfObj("type", "object", "additionalProperties", true,
			"properties", cfObj("a", cfObj("type", "string"), "b", cfObj("type", "string")), "required", []any{"a", "b"})
		cfMustRegister(t, svc.Global(), d)
		cfExpect(t, cfCall(svc, "two", cfObj()), cfCoded(t,
			`tool "two" returned invalid output: missing required property "value.a"; missing required property "value.b"`,
			"ToolOutputError", "INVALID_TOOL_OUTPUT"))
	})

	t.Run("case 40: a throwing render or presentationMeta fails as INVALID_TOOL_OUTPUT with no value key", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				render := cfConst("throwing-render", "ok")
				render.Output.Render = func(_, _ any) ([]engine.Block, error) {
					return nil, cfRaise(mode, errors.New("renderer exploded"))
				}
				meta := cfConst("throwing-meta", "ok")
				meta.Output.PresentationMeta = func(_, _ any) (any, error) {
					return nil, cfRaise(mode, errors.New("metadata exploded"))
				}
				cfMustRegister(t, svc.Global(), render)
				cfMustRegister(t, svc.Global(), meta)
				r := cfCall(svc, "throwing-render", cfObj())
				cfExpect(t, r, cfCoded(t, `tool "throwing-render" returned invalid output: output.render failed: renderer exploded`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
				cfExpectNoValueKey(t, r)
				r = cfCall(svc, "throwing-meta", cfObj())
				cfExpect(t, r, cfCoded(t, `tool "throwing-meta" returned invalid output: output.presentationMeta failed: metadata exploded`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
				cfExpectNoValueKey(t, r)
			})
		}
	})

	t.Run("§1.9: render returning non-lossless content fails with output.render returned non-lossless JSON", func(t *testing.T) {
		svc := engine.New()
		d := cfConst("bad-render", "ok")
		d.Output.Render = func(_, _ any) ([]engine.Block, error) {
			return []engine.Block{engine.RawBlock{Value: cfObj("type", "text", "text", "x", "fn", func() {})}}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		cfExpect(t, cfCall(svc, "bad-render", cfObj()), cfCoded(t, `tool "bad-render" returned invalid output: output.render returned non-lossless JSON`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
	})

	t.Run("case 42: presentationMeta returning a function fails as INVALID_TOOL_OUTPUT and the observer saw isError", func(t *testing.T) {
		svc := engine.New()
		d := cfConst("bad-meta", "ok")
		d.Output.PresentationMeta = func(_, _ any) (any, error) { return func() {}, nil }
		cfMustRegister(t, svc.Global(), d)
		observedError := false
		svc.Global().OnResult(func(_ *engine.Execution, r *engine.Result) error { observedError = r.IsError; return nil })
		r := cfCall(svc, "bad-meta", cfObj())
		if !strings.HasPrefix(cfFirstText(r), "Error:") {
			t.Errorf("content %q does not start with Error:", cfFirstText(r))
		}
		cfExpect(t, r, cfCoded(t, `tool "bad-meta" returned invalid output: output.presentationMeta returned non-lossless JSON`, "ToolOutputError", "INVALID_TOOL_OUTPUT"))
		if !observedError {
			t.Error("the observer did not see isError")
		}
	})
}

func TestConfAroundDispatch(t *testing.T) {
	t.Run("case 68: a wrapper returning a success without next skips the body and its value is re-rendered", func(t *testing.T) {
		svc := engine.New()
		var body cfCounter
		cfMustRegister(t, svc.Global(), cfTool("never-runs", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "unreachable", nil }))
		svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
			return &engine.Result{Value: "short-circuited", Content: []engine.Block{engine.Text("ignored authored content")},
				Meta: cfObj("authored", true), HasMeta: true}, nil
		})
		cfExpect(t, cfCall(svc, "never-runs", cfObj()), `{"isError":false,"value":"short-circuited","content":[{"type":"text","text":"short-circuited"}]}`)
		if body.get() != 0 {
			t.Error("the body ran")
		}
	})

	t.Run("case 69: a wrapper-authored failure with meta and a context is preserved verbatim", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		ctxMsg := cfMsg("wrapper context", "test")
		svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
			return &engine.Result{IsError: true, Error: &engine.Failure{Message: "wrapped failure"},
				Content: []engine.Block{engine.Text("wrapper content")}, Meta: cfObj("wrapped", true), HasMeta: true,
				AdditionalContexts: []engine.Message{ctxMsg}}, nil
		})
		cfExpect(t, cfCall(svc, "echo", cfObj()),
			`{"isError":true,"error":{"message":"wrapped failure"},"content":[{"type":"text","text":"wrapper content"}],"meta":{"wrapped":true},"additionalContexts":[`+cfJSON(t, ctxMsg.JSON())+`]}`)
	})

	t.Run("case 70: a wrapper success after the tool was disposed fails as UNKNOWN_TOOL, bypassing post-execute", func(t *testing.T) {
		svc := engine.New()
		dispose := cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var post cfCounter
		svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
			dispose()
			return &engine.Result{Value: "replacement", Content: []engine.Block{}}, nil
		})
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			post.inc()
			return next()
		})
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, `unknown tool "echo"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		if post.get() != 0 {
			t.Errorf("post-execute ran %d times, want 0 (final-result)", post.get())
		}
	})

	t.Run("case 72: a wrapper short-circuit's context is preserved in the final result", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		m := cfMsg("from around dispatch", "test")
		svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
			return &engine.Result{Value: "short-circuited with context", Content: []engine.Block{engine.Text("short-circuited with context")},
				AdditionalContexts: []engine.Message{m}}, nil
		})
		cfExpect(t, cfCall(svc, "echo", cfObj()),
			`{"isError":false,"value":"short-circuited with context","content":[{"type":"text","text":"short-circuited with context"}],"additionalContexts":[`+cfJSON(t, m.JSON())+`]}`)
	})

	t.Run("case 73: a throwing wrapper yields exactly Error: wrapper broke and bypasses post-execute", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				var post cfCounter
				svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
					return nil, cfRaise(mode, errors.New("wrapper broke"))
				})
				svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
					post.inc()
					return next()
				})
				cfExpect(t, cfCall(svc, "echo", cfObj("text", "hi")), `{"isError":true,"error":{"message":"wrapper broke"},"content":[{"type":"text","text":"Error: wrapper broke"}]}`)
				if post.get() != 0 {
					t.Errorf("post-execute ran %d times", post.get())
				}
			})
		}
	})

	t.Run("§3.3: a coded wrapper throw keeps its info", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				svc.Global().OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
					return nil, cfRaise(mode, engine.NewError("HarnessError", "DENIED", "denied"))
				})
				cfExpect(t, cfCall(svc, "echo", cfObj()), cfCoded(t, "denied", "HarnessError", "DENIED"))
			})
		}
	})

	t.Run("case 74: a wrapper sees a thrown body as a normalized failure; post-execute still sees isError", func(t *testing.T) {
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				svc := engine.New()
				cfMustRegister(t, svc.Global(), cfTool("boom", func(context.Context, any, *engine.Run) (any, error) {
					return nil, cfRaise(mode, cfBoom())
				}))
				var seen string
				svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
					r := next(ctx)
					seen = cfJSON(t, cfObj("isError", r.IsError, "error", r.Error.JSON()))
					return r, nil
				})
				postSaw := false
				svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
					postSaw = r.IsError
					return next()
				})
				r := cfCall(svc, "boom", cfObj())
				if want := `{"isError":true,"error":{"message":"kaboom","info":{"name":"HarnessError","code":"BOOM"}}}`; seen != want {
					t.Errorf("the wrapper saw %s, want %s", seen, want)
				}
				cfExpect(t, r, cfCoded(t, "kaboom", "HarnessError", "BOOM"))
				if !postSaw {
					t.Error("post-execute did not see isError")
				}
			})
		}
	})

	t.Run("§3.3 D3: a canonical result cached from another tool's dispatch is rebuilt from its value and revalidated", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfConst("string-output", "cached"))
		var objectBody cfCounter
		obj := &engine.Definition{
			Name: "object-output", Description: "one closed object", Parameters: cfObj("type", "object", "properties", cfObj()),
			Output: engine.Output{
				Schema: cfObj("type", "object", "additionalProperties", false, "properties", cfObj("ok", cfObj("type", "boolean")), "required", []any{"ok"}),
				Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("object")}, nil },
			},
			Execute: func(context.Context, any, *engine.Run) (any, error) { objectBody.inc(); return cfObj("ok", true), nil },
		}
		cfMustRegister(t, svc.Global(), obj)
		var cached *engine.Result
		svc.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			switch exec.Name() {
			case "string-output":
				cached = next(ctx)
				return cached, nil
			case "object-output":
				return cached, nil
			}
			return next(ctx), nil
		})
		if r := cfCall(svc, "string-output", cfObj()); r.Value != "cached" {
			t.Fatalf("first = %s", cfResultJSON(t, r))
		}
		r := cfCall(svc, "object-output", cfObj())
		cfExpectCode(t, r, "ToolOutputError", "INVALID_TOOL_OUTPUT")
		if r.Error.Message != `tool "object-output" returned invalid output: "value" must be an object` {
			t.Errorf("message = %q", r.Error.Message)
		}
		if objectBody.get() != 0 {
			t.Error("the object body ran")
		}
	})

	t.Run("§3.3: nested wrappers run outermost first, next resolving to the inner result", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var tr cfTrace
		for _, name := range []string{"first", "second"} {
			svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
				tr.add(name + ":before")
				r := next(ctx)
				tr.add(name + ":after")
				return r, nil
			})
		}
		if r := cfCall(svc, "echo", cfObj("text", "x")); r.IsError {
			t.Fatal(cfResultJSON(t, r))
		}
		if got := tr.String(); got != "first:before,second:before,second:after,first:after" {
			t.Errorf("order = %s", got)
		}
	})

	t.Run("§3.3 D2c: the body is re-resolved live: a replacement's body runs, the finalizer stays the captured one", func(t *testing.T) {
		svc := engine.New()
		orig := cfConst("swap", "original body")
		orig.FinalizeContent = func(_ *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			return []engine.Block{engine.Text("original finalizer")}, nil
		}
		dispose := cfMustRegister(t, svc.Global(), orig)
		repl := cfConst("swap", "replacement body")
		repl.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
			return []engine.Block{engine.Text("replacement finalizer")}, nil
		}
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			dispose()
			cfMustRegister(t, svc.Global(), repl)
			return next()
		})
		cfExpect(t, cfCall(svc, "swap", cfObj()), `{"isError":false,"value":"replacement body","content":[{"type":"text","text":"original finalizer"}]}`)
	})
}

func TestConfArgumentsAndIdentity(t *testing.T) {
	t.Run("case 92: the caller's arguments are not mutated; the body receives a detached copy equal in value", func(t *testing.T) {
		svc := engine.New()
		gate := cfNewGate()
		var seen any
		var seenJSON string
		cfMustRegister(t, svc.Global(), cfTool("probe", func(_ context.Context, args any, run *engine.Run) (any, error) {
			seen = args
			gate.wait()
			seenJSON = cfJSON(t, args)
			return "ok", nil
		}))
		inner := map[string]any{"value": 1}
		callerArgs := map[string]any{"nested": inner, "list": []any{"a"}}
		before := cfJSON(t, callerArgs)
		ch := cfAsync(func() *engine.Result { return cfCall(svc, "probe", callerArgs) })
		gate.awaitEntered(t)
		if !dsl.Equal(seen, callerArgs) {
			t.Errorf("the body saw %s, want a copy equal to %s", cfJSON(t, seen), before)
		}
		if m, ok := seen.(map[string]any); ok && reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(callerArgs).UnsafePointer() {
			t.Error("the body received the caller's own map")
		}
		// Mutating the caller's value after the call started changes nothing the body sees.
		inner["value"] = 2
		callerArgs["added"] = true
		gate.open()
		r := cfAwait(t, ch)
		if r.IsError {
			t.Fatal(cfResultJSON(t, r))
		}
		if seenJSON != `{"list":["a"],"nested":{"value":1}}` {
			t.Errorf("the body's arguments changed under it: %s", seenJSON)
		}
		delete(callerArgs, "added")
		inner["value"] = 1
		if cfJSON(t, callerArgs) != before {
			t.Error("the pipeline mutated the caller's arguments")
		}
	})

	t.Run("case 93: non-lossless arguments fail before any policy; one observer call per observer admitting it", func(t *testing.T) {
		for _, bad := range []struct {
			name string
			args any
		}{
			{"a function", map[string]any{"invalid": func() {}}},
			{"a channel", map[string]any{"ch": make(chan int)}},
			{"a struct value", map[string]any{"s": struct{ X int }{1}}},
			{"NaN", []any{0.0 / cfZero()}},
		} {
			t.Run(bad.name, func(t *testing.T) {
				svc := engine.New()
				a := engine.NewAgent("a", nil)
				var policy, body, scopedObs, globalObs, finals cfCounter
				d := cfTool("echo", func(context.Context, any, *engine.Run) (any, error) { body.inc(); return "x", nil })
				d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) { finals.inc(); return nil, nil }
				cfMustRegister(t, svc.Global(), d)
				svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
					policy.inc()
					return next()
				})
				svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { policy.inc(); return "", nil })
				svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
					policy.inc()
					return next(ctx), nil
				})
				svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
					policy.inc()
					return next()
				})
				parent := new(engine.Token)
				var observedArgs []any
				var observedParent *engine.Token
				svc.Scope(a).OnResult(func(*engine.Execution, *engine.Result) error { scopedObs.inc(); return nil })
				svc.Global().OnResult(func(exec *engine.Execution, _ *engine.Result) error {
					globalObs.inc()
					observedArgs = append(observedArgs, exec.Arguments())
					if exec.Agent() == a {
						observedParent = exec.Parent()
					}
					return nil
				})
				in := engine.Input{CallID: "c1", Name: "echo", Arguments: bad.args, Agent: a, Parent: parent}
				want := cfFail(t, "tool execution arguments must be losslessly JSON-serializable")
				cfExpect(t, svc.Call(context.Background(), in), want)
				cfExpect(t, svc.Call(context.Background(), cfIn("c2", "echo", bad.args)), want)
				if policy.get() != 0 || body.get() != 0 {
					t.Errorf("policy ran %d times, body %d times; want 0", policy.get(), body.get())
				}
				if scopedObs.get() != 1 || globalObs.get() != 2 {
					t.Errorf("scoped observer %d (want 1), global observer %d (want 2)", scopedObs.get(), globalObs.get())
				}
				for _, v := range observedArgs {
					if _, ok := v.(dsl.Undefined); !ok {
						t.Errorf("observer's exec.Arguments() = %#v, want dsl.Undefined{}", v)
					}
				}
				if observedParent != parent {
					t.Error("the parent token was not preserved on the execution")
				}
				if finals.get() != 2 {
					t.Errorf("the captured finalizer ran %d times, want 2 (§3.8)", finals.get())
				}
			})
		}
	})

	t.Run("§1.5: each execution gets a fresh token; rootCallId defaults to callId", func(t *testing.T) {
		svc := engine.New()
		var tokens []*engine.Token
		var roots []string
		svc.Global().OnResult(func(exec *engine.Execution, _ *engine.Result) error {
			tokens = append(tokens, exec.Token())
			roots = append(roots, exec.RootCallID())
			return nil
		})
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		svc.Call(context.Background(), cfIn("c1", "echo", cfObj()))
		svc.Call(context.Background(), engine.Input{CallID: "c1:ptc:1", RootCallID: "c1", Name: "echo", Arguments: cfObj(), Parent: new(engine.Token)})
		if len(tokens) != 2 || tokens[0] == nil || tokens[1] == nil || tokens[0] == tokens[1] {
			t.Errorf("tokens %v are not fresh identities", tokens)
		}
		if strings.Join(roots, ",") != "c1,c1" {
			t.Errorf("rootCallIds = %q", roots)
		}
	})
}

func cfZero() float64 { return 0 }

func TestConfResultObservers(t *testing.T) {
	t.Run("case 97: scoped and global observers see exec, arguments and result; failing observers are contained and logged", func(t *testing.T) {
		svc, log := cfNewLogged()
		a := engine.NewAgent("a", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var scopedSaw, globalSaw, lastSaw *engine.Result
		var scopedArgs string
		svc.Scope(a).OnResult(func(exec *engine.Execution, r *engine.Result) error {
			scopedSaw = r
			scopedArgs = cfJSON(t, exec.Arguments())
			return nil
		})
		svc.Global().OnResult(func(_ *engine.Execution, r *engine.Result) error { globalSaw = r; return nil })
		svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { return errors.New("observer broke") })
		svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { panic(cfHostile{}) })
		svc.Global().OnResult(func(_ *engine.Execution, r *engine.Result) error { lastSaw = r; return nil })
		r := cfCallAs(svc, a, "echo", cfObj("text", "hi"))
		cfExpect(t, r, `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}`)
		if scopedSaw != r || globalSaw != r || lastSaw != r {
			t.Error("observers did not all receive the returned result")
		}
		if scopedArgs != `{"text":"hi"}` {
			t.Errorf("scoped observer saw arguments %s", scopedArgs)
		}
		var warns []string
		for _, rec := range log.records() {
			if rec.Level == slog.LevelWarn {
				warns = append(warns, rec.Msg)
			}
		}
		want := []string{
			`tool "echo" (c1): tools/result observer failed: observer broke`,
			`tool "echo" (c1): tools/result observer failed: <unprintable thrown value>`,
		}
		if strings.Join(warns, "\n") != strings.Join(want, "\n") {
			t.Errorf("warnings\n got: %q\nwant: %q", warns, want)
		}
	})

	t.Run("§2.7: a scoped observer hears its agent and descendants, never agent-less calls", func(t *testing.T) {
		svc := engine.New()
		parent := engine.NewAgent("p", nil)
		child := engine.NewAgent("c", parent)
		other := engine.NewAgent("o", nil)
		cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
		var tr cfTrace
		svc.Scope(parent).OnResult(func(exec *engine.Execution, _ *engine.Result) error {
			id := "none"
			if exec.Agent() != nil {
				id = exec.Agent().ID()
			}
			tr.add(id)
			return nil
		})
		cfCallAs(svc, parent, "echo", cfObj())
		cfCallAs(svc, child, "echo", cfObj())
		cfCallAs(svc, other, "echo", cfObj())
		cfCall(svc, "echo", cfObj())
		if got := tr.String(); got != "p,c" {
			t.Errorf("scoped observer heard %s, want p,c", got)
		}
	})
}

func TestConfFinalizeContent(t *testing.T) {
	t.Run("case 99: a finalizer returning nil keeps the content and runs once; a throwing one yields exactly its error, run once", func(t *testing.T) {
		svc := engine.New()
		var identity cfCounter
		d := cfEchoDef("identity-finalizer")
		d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) { identity.inc(); return nil, nil }
		cfMustRegister(t, svc.Global(), d)
		cfExpect(t, cfCall(svc, "identity-finalizer", cfObj()), `{"isError":false,"value":"","content":[{"type":"text","text":""}]}`)
		if identity.get() != 1 {
			t.Errorf("finalizer called %d times", identity.get())
		}
		for _, mode := range cfModes {
			t.Run(mode, func(t *testing.T) {
				var n cfCounter
				d := cfEchoDef("throwing-finalizer-" + strings.ReplaceAll(mode, " ", "-"))
				d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
					n.inc()
					return nil, cfRaise(mode, errors.New("finalizer violated its total contract"))
				}
				cfMustRegister(t, svc.Global(), d)
				cfExpect(t, cfCall(svc, d.Name, cfObj()),
					`{"isError":true,"error":{"message":"finalizer violated its total contract"},"content":[{"type":"text","text":"Error: finalizer violated its total contract"}]}`)
				if n.get() != 1 {
					t.Errorf("finalizer called %d times, want 1", n.get())
				}
			})
		}
	})

	t.Run("§3.7 M2: the finalizer replaces content only; value, meta and contexts are untouched", func(t *testing.T) {
		svc := engine.New()
		m := cfMsg("fyi", "post")
		d := cfProjected("projected", func(context.Context, any, *engine.Run) (any, error) { return cfObj("text", "body"), nil })
		d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
			return []engine.Block{engine.Text("final")}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			return engine.Accept(m), nil
		})
		cfExpect(t, cfCall(svc, "projected", cfObj()),
			`{"isError":false,"value":{"text":"body"},"content":[{"type":"text","text":"final"}],"meta":{"projected":"body"},"additionalContexts":[`+cfJSON(t, m.JSON())+`]}`)
	})

	t.Run("§3.7 M3: a finalizer returning non-lossless content yields a failure and is not called again", func(t *testing.T) {
		svc := engine.New()
		var n cfCounter
		d := cfEchoDef("lossy-finalizer")
		d.FinalizeContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) {
			n.inc()
			return []engine.Block{engine.RawBlock{Value: func() {}}}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		r := cfCall(svc, "lossy-finalizer", cfObj())
		if !r.IsError || !strings.HasPrefix(cfFirstText(r), "Error: ") {
			t.Errorf("result = %s, want a failure", cfResultJSON(t, r))
		}
		if n.get() != 1 {
			t.Errorf("finalizer called %d times, want 1", n.get())
		}
	})

	t.Run("§3.8: the captured finalizer runs even after a pre listener unregistered the tool and threw", func(t *testing.T) {
		svc := engine.New()
		d := cfEchoDef("bounded")
		var sawName string
		var sawError bool
		d.FinalizeContent = func(exec *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			sawName, sawError = exec.Name(), r.IsError
			return []engine.Block{engine.Text("bounded failure")}, nil
		}
		dispose := cfMustRegister(t, svc.Global(), d)
		svc.Global().OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			dispose()
			return engine.PreDecision{}, engine.NewError("HarnessError", "POLICY_FAILED", "policy failed")
		})
		cfExpect(t, cfCall(svc, "bounded", cfObj()),
			`{"isError":true,"error":{"message":"policy failed","info":{"name":"HarnessError","code":"POLICY_FAILED"}},"content":[{"type":"text","text":"bounded failure"}]}`)
		if sawName != "bounded" || !sawError {
			t.Errorf("finalizer saw name %q isError %v", sawName, sawError)
		}
	})

	t.Run("§3.8: an unknown tool (not collapsed) reaches pre, guards, wrapper and post, but no finalizer and no body", func(t *testing.T) {
		svc := engine.New()
		var tr cfTrace
		svc.Global().OnPreExecute(func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			tr.add("pre")
			return next()
		})
		svc.Global().Guard(func(context.Context, *engine.Execution) (string, error) { tr.add("guard"); return "", nil })
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			tr.add("wrapper")
			return next(ctx), nil
		})
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			tr.add("post")
			return next()
		})
		svc.Global().OnResult(func(*engine.Execution, *engine.Result) error { tr.add("result"); return nil })
		cfExpect(t, cfCall(svc, "ghost", cfObj()), cfCoded(t, `unknown tool "ghost"`, "ToolNotFoundError", "UNKNOWN_TOOL"))
		if got := tr.String(); got != "pre,guard,wrapper,post,result" {
			t.Errorf("stages = %s", got)
		}
	})
}

func TestConfProjectContent(t *testing.T) {
	t.Run("§3.5 F0: projectContent replaces the content entering post-execute, once; policy replacements are authoritative", func(t *testing.T) {
		svc := engine.New()
		var projections cfCounter
		d := cfProjected("projected", func(context.Context, any, *engine.Run) (any, error) { return cfObj("text", "body"), nil })
		d.ProjectContent = func(_ *engine.Execution, r *engine.Result) ([]engine.Block, error) {
			projections.inc()
			return []engine.Block{engine.Text("projected content")}, nil
		}
		cfMustRegister(t, svc.Global(), d)
		var postSaw string
		replace := false
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			postSaw = cfFirstText(r)
			if replace {
				return engine.AcceptValue(cfObj("text", "policy value")), nil
			}
			return next()
		})
		cfExpect(t, cfCall(svc, "projected", cfObj()),
			`{"isError":false,"value":{"text":"body"},"content":[{"type":"text","text":"projected content"}],"meta":{"projected":"body"}}`)
		if postSaw != "projected content" || projections.get() != 1 {
			t.Errorf("post saw %q, projections %d", postSaw, projections.get())
		}
		replace = true
		cfExpect(t, cfCall(svc, "projected", cfObj()),
			`{"isError":false,"value":{"text":"policy value"},"content":[{"type":"text","text":"render:policy value"}],"meta":{"projected":"policy value"}}`)
		if projections.get() != 2 {
			t.Errorf("projections %d, want 2 (no re-projection after a value replacement)", projections.get())
		}
	})

	t.Run("§3.5 F0: outcomes that bypass post-execute never run projectContent", func(t *testing.T) {
		svc := engine.New()
		var projections cfCounter
		d := cfEchoDef("echo")
		d.ProjectContent = func(*engine.Execution, *engine.Result) ([]engine.Block, error) { projections.inc(); return nil, nil }
		cfMustRegister(t, svc.Global(), d)
		svc.Global().OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			return engine.PreDecision{}, errors.New("pre exploded")
		})
		cfExpect(t, cfCall(svc, "echo", cfObj()), cfFail(t, "pre exploded"))
		cfExpect(t, cfCall(svc, "echo", map[string]any{"f": func() {}}), cfFail(t, "tool execution arguments must be losslessly JSON-serializable"))
		if projections.get() != 0 {
			t.Errorf("projectContent ran %d times", projections.get())
		}
	})
}

func TestConfContextsAndConclusion(t *testing.T) {
	deferring := func(name string, fail bool) *engine.Definition {
		return cfTool(name, func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.DeferContext(cfMsg("nested-1", "nested-1"))
			run.DeferContext(cfMsg("nested-2", "nested-2"))
			if fail {
				return nil, errors.New("outer failure")
			}
			return "done", nil
		})
	}

	t.Run("§3.9: contexts are ordered body-deferred, wrapper-added, post-decision", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), deferring("composite", false))
		svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			r := next(ctx)
			cp := *r
			cp.AdditionalContexts = append(append([]engine.Message(nil), r.AdditionalContexts...), cfMsg("wrapper", "wrapper"))
			return &cp, nil
		})
		svc.Global().OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			d, err := next()
			d.AdditionalContexts = append([]engine.Message{cfMsg("post", "post")}, d.AdditionalContexts...)
			return d, err
		})
		r := cfCall(svc, "composite", cfObj())
		if got := strings.Join(cfSources(r), ","); got != "nested-1,nested-2,wrapper,post" {
			t.Errorf("contexts = %s", got)
		}
	})

	t.Run("§3.9: deferred contexts survive a body throw and are dropped by a block", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), deferring("failing-composite", true))
		r := cfCall(svc, "failing-composite", cfObj())
		if !r.IsError || strings.Join(cfSources(r), ",") != "nested-1,nested-2" {
			t.Errorf("body throw: %s", cfResultJSON(t, r))
		}
		blockMsg := cfMsg("block-only", "blocker")
		svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			return engine.BlockResult([]engine.Block{engine.Text("blocked")}, blockMsg), nil
		})
		cfExpect(t, cfCall(svc, "failing-composite", cfObj()),
			`{"isError":true,"error":{"message":"blocked"},"content":[{"type":"text","text":"blocked"}],"additionalContexts":[`+cfJSON(t, blockMsg.JSON())+`]}`)
	})

	t.Run("§3.9: a wrapper throw, a post-execute throw and a failed final materialization drop the contexts", func(t *testing.T) {
		t.Run("wrapper throw", func(t *testing.T) {
			svc := engine.New()
			cfMustRegister(t, svc.Global(), deferring("d", false))
			svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
				next(ctx)
				return nil, errors.New("wrapper broke")
			})
			cfExpect(t, cfCall(svc, "d", cfObj()), cfFail(t, "wrapper broke"))
		})
		t.Run("post-execute throw", func(t *testing.T) {
			svc := engine.New()
			cfMustRegister(t, svc.Global(), deferring("d", false))
			svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
				return engine.PostDecision{}, errors.New("post hook broke")
			})
			cfExpect(t, cfCall(svc, "d", cfObj()), cfFail(t, "post hook broke"))
		})
		t.Run("failed final materialization", func(t *testing.T) {
			svc := engine.New()
			cfMustRegister(t, svc.Global(), deferring("d", false))
			svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
				return engine.BlockResult([]engine.Block{engine.RawBlock{Value: cfObj("type", "text", "text", "blocked", "invalid", func() {})}},
					cfMsg("lost", "lost")), nil
			})
			cfExpect(t, cfCall(svc, "d", cfObj()), cfFail(t, "tool result must be losslessly JSON-serializable"))
		})
	})

	t.Run("§3.9: concludeTurn marks a success; a content replacement keeps it; failures and blocks never carry it", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfTool("terminal", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.ConcludeTurn()
			return "terminal", nil
		}))
		cfMustRegister(t, svc.Global(), cfTool("terminal-fail", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.ConcludeTurn()
			return nil, errors.New("failed after concluding")
		}))
		cfExpect(t, cfCall(svc, "terminal", cfObj()), `{"isError":false,"value":"terminal","content":[{"type":"text","text":"terminal"}],"concludesTurn":true}`)
		cfExpect(t, cfCall(svc, "terminal-fail", cfObj()), cfFail(t, "failed after concluding"))

		decision := engine.AcceptContent([]engine.Block{engine.Text("replaced")})
		svc.Global().OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			return decision, nil
		})
		cfExpect(t, cfCall(svc, "terminal", cfObj()), `{"isError":false,"value":"terminal","content":[{"type":"text","text":"replaced"}],"concludesTurn":true}`)
		decision = engine.AcceptValue("again")
		cfExpect(t, cfCall(svc, "terminal", cfObj()), `{"isError":false,"value":"again","content":[{"type":"text","text":"again"}],"concludesTurn":true}`)
		decision = engine.BlockResult([]engine.Block{engine.Text("no")})
		cfExpect(t, cfCall(svc, "terminal", cfObj()), `{"isError":true,"error":{"message":"no"},"content":[{"type":"text","text":"no"}]}`)
	})

	t.Run("§3.9: a composite forwards a nested success's conclusion; a blocked nested success carries none", func(t *testing.T) {
		svc := engine.New()
		cfMustRegister(t, svc.Global(), cfTool("terminal-nested", func(_ context.Context, _ any, run *engine.Run) (any, error) {
			run.ConcludeTurn()
			return "terminal", nil
		}))
		n := 0
		cfMustRegister(t, svc.Global(), cfTool("composite", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			n++
			nested := svc.Call(ctx, engine.Input{CallID: fmt.Sprintf("nested-%d", n), RootCallID: run.RootCallID(), Name: "terminal-nested", Arguments: cfObj(), Parent: run.Token()})
			if nested.ConcludesTurn {
				run.ConcludeTurn()
			}
			if nested.IsError {
				return "nested failed, composite recovered", nil
			}
			return "nested succeeded", nil
		}))
		veto := svc.Global().OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			if exec.Name() != "terminal-nested" {
				return next()
			}
			return engine.BlockResult([]engine.Block{engine.Text("nested success rejected")}), nil
		})
		recovered := cfCall(svc, "composite", cfObj())
		if recovered.IsError || recovered.ConcludesTurn || recovered.Value != "nested failed, composite recovered" {
			t.Errorf("recovered = %s", cfResultJSON(t, recovered))
		}
		veto()
		concluded := cfCall(svc, "composite", cfObj())
		if concluded.IsError || !concluded.ConcludesTurn {
			t.Errorf("concluded = %s", cfResultJSON(t, concluded))
		}
	})
}
