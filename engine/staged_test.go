package engine_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

// TestAStagedCallEndsAsServiceCallDoes drives the same inputs through
// Service.Call and through Stage, Dispatch and Commit, each on a fresh
// service set up the same way, and expects the same final result.
func TestAStagedCallEndsAsServiceCallDoes(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		name  string
		setup func(t *testing.T, sc *engine.Scope)
		ctx   context.Context
		in    engine.Input
		body  bool // the call reaches its dispatch stage (where unknown tools and bad arguments fail too)
	}{
		{"a tool that succeeds", func(t *testing.T, sc *engine.Scope) { cfMustRegister(t, sc, cfEchoDef("echo")) },
			context.Background(), cfIn("c1", "echo", cfObj("text", "hi")), true},
		{"an unknown tool", func(*testing.T, *engine.Scope) {},
			context.Background(), cfIn("c1", "nope", cfObj()), true},
		{"arguments that fail the schema", func(t *testing.T, sc *engine.Scope) { cfMustRegister(t, sc, cfEchoDef("echo")) },
			context.Background(), cfIn("c1", "echo", cfObj("text", 1)), true},
		{"a pre-execute listener that denies", func(t *testing.T, sc *engine.Scope) {
			cfMustRegister(t, sc, cfEchoDef("echo"))
			sc.OnPreExecute(func(context.Context, *engine.Execution, func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				return engine.Deny("not today"), nil
			})
		}, context.Background(), cfIn("c1", "echo", cfObj("text", "hi")), false},
		{"a body that fails", func(t *testing.T, sc *engine.Scope) {
			cfMustRegister(t, sc, cfTool("boom", func(context.Context, any, *engine.Run) (any, error) { return nil, cfBoom() }))
		}, context.Background(), cfIn("c1", "boom", cfObj("text", "hi")), true},
		{"a post-execute listener that replaces the value", func(t *testing.T, sc *engine.Scope) {
			cfMustRegister(t, sc, cfEchoDef("echo"))
			sc.OnPostExecute(func(context.Context, *engine.Execution, *engine.Result, func() (engine.PostDecision, error)) (engine.PostDecision, error) {
				return engine.AcceptValue("replaced"), nil
			})
		}, context.Background(), cfIn("c1", "echo", cfObj("text", "hi")), true},
		{"a call whose context ended before it began", func(t *testing.T, sc *engine.Scope) { cfMustRegister(t, sc, cfEchoDef("echo")) },
			cancelled, cfIn("c1", "echo", cfObj("text", "hi")), false},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			direct := engine.New()
			tt.setup(t, direct.Global())
			want := cfResultJSON(t, direct.Call(tt.ctx, tt.in))

			staged := engine.New()
			tt.setup(t, staged.Global())
			x, err := staged.Stage(tt.ctx, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if x.NeedsDispatch() != tt.body {
				t.Fatalf("NeedsDispatch() = %v, want %v", x.NeedsDispatch(), tt.body)
			}
			if x.Execution().CallID() != tt.in.CallID {
				t.Fatalf("Execution().CallID() = %q", x.Execution().CallID())
			}
			if err := x.Dispatch(); err != nil {
				t.Fatal(err)
			}
			r, err := x.Commit()
			if err != nil {
				t.Fatal(err)
			}
			if got := cfResultJSON(t, r); got != want {
				t.Errorf("staged: %s\ndirect: %s", got, want)
			}
		})
	}
}

func TestAStagedBodyThatPanicsEndsAsTheCallWould(t *testing.T) {
	svc := engine.New()
	cfMustRegister(t, svc.Global(), cfTool("panicky", func(context.Context, any, *engine.Run) (any, error) { panic("in the body") }))
	want := cfResultJSON(t, svc.Call(context.Background(), cfIn("c1", "panicky", cfObj("text", "x"))))
	x, err := svc.Stage(context.Background(), cfIn("c1", "panicky", cfObj("text", "x")))
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Dispatch(); err != nil {
		t.Fatalf("the pipeline contains a body's panic; got %v", err)
	}
	r, err := x.Commit()
	if err != nil {
		t.Fatal(err)
	}
	if got := cfResultJSON(t, r); got != want || !r.IsError {
		t.Errorf("staged: %s\ndirect: %s", got, want)
	}
}
