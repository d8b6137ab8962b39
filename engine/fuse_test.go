package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

type ctxKey struct{}

func TestTheBodyContextFusesTheWrappersDeadlineWithTheCallersValues(t *testing.T) {
	svc := engine.New()
	var sawDeadline bool
	var sawValue any
	_, err := svc.Global().Register(&engine.Definition{
		Name: "t", Parameters: dsl.NewObject(),
		Output: engine.Output{Schema: dsl.NewObject(), Render: func(_, _ any) ([]engine.Block, error) { return nil, nil }},
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			_, sawDeadline = ctx.Deadline()
			sawValue = ctx.Value(ctxKey{})
			return nil, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	svc.Global().OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		d, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		return next(d), nil
	})
	caller := context.WithValue(context.Background(), ctxKey{}, "mine")
	if r := svc.Call(caller, engine.Input{CallID: "c1", Name: "t", Arguments: dsl.NewObject()}); r.IsError {
		t.Fatal(r.Error.Message)
	}
	if !sawDeadline || sawValue != "mine" {
		t.Errorf("deadline seen %v, caller's value %v", sawDeadline, sawValue)
	}
}

func TestAnInnerWrappersThrowEndsTheCallWithoutPostExecute(t *testing.T) {
	svc := engine.New()
	_, err := svc.Global().Register(&engine.Definition{
		Name: "t", Parameters: dsl.NewObject(),
		Output:  engine.Output{Schema: dsl.NewObject(), Render: func(_, _ any) ([]engine.Block, error) { return nil, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return nil, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	g := svc.Global()
	var outerSaw *engine.Result
	g.OnExecute(func(ctx context.Context, _ *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		outerSaw = next(ctx)
		return outerSaw, nil
	})
	g.OnExecute(func(context.Context, *engine.Execution, func(context.Context) *engine.Result) (*engine.Result, error) {
		return nil, errors.New("inner wrapper broke")
	})
	postRan := false
	g.OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		postRan = true
		return next()
	})
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "t", Arguments: dsl.NewObject()})
	if r.Error == nil || r.Error.Message != "inner wrapper broke" || postRan {
		t.Errorf("result %+v, post-execute ran: %v", r.Error, postRan)
	}
	if outerSaw == nil || !outerSaw.IsError {
		t.Error("the outer wrapper did not see the failure")
	}
}
