package engine_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

// TestCallAllocations bounds what the pipeline allocates for one Go tool
// call, alone, behind pass-through policies, and behind a tools/execute
// wrapper, so that what was cut (a root call's token and tree in one, the
// Run and the wrapper chain's iteration with the call, contexts set on a
// fresh result) does not creep back. The bounds are the counts when they
// were set (BENCHMARKS.md, "JS speed (issue 29)").
func TestCallAllocations(t *testing.T) {
	pre := func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return next()
	}
	post := func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		return next()
	}
	wrap := func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		return next(ctx), nil
	}
	for _, tt := range []struct {
		name  string
		setup func(*engine.Scope)
		most  float64
	}{
		{"a call with no policy allocates at most 14 times", func(*engine.Scope) {}, 14},
		{"a call behind two pre-execute and one post-execute listener at most 24", func(g *engine.Scope) {
			g.OnPreExecute(pre)
			g.OnPreExecute(pre)
			g.OnPostExecute(post)
		}, 24},
		{"a call behind a tools/execute wrapper at most 15", func(g *engine.Scope) { g.OnExecute(wrap) }, 15},
	} {
		t.Run(tt.name, func(t *testing.T) {
			svc := greetService(t)
			tt.setup(svc.Global())
			ctx, in := context.Background(), greetInput()
			call := func() {
				if r := svc.Call(ctx, in); r.IsError {
					t.Fatal(r.Error.Message)
				}
			}
			call()
			if got := testing.AllocsPerRun(200, call); got > tt.most {
				t.Fatalf("%.0f allocations, want at most %.0f", got, tt.most)
			}
		})
	}
}
