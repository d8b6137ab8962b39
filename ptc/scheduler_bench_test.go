package ptc

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// The scheduler's own cost per sub-call, without a program runtime: awaited
// sub-calls of a Go tool made from inside an outer call, against calling
// that tool directly.

// benchService is an engine with the Go tool echo and the tool outer, whose
// body runs body against a scheduler.
func benchService(b *testing.B, body func(s *scheduler)) *engine.Service {
	b.Helper()
	svc := engine.New()
	str := dsl.NewObject(dsl.Member{Key: "type", Value: "string"})
	render := func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil }
	for _, def := range []*engine.Definition{
		{Name: "echo", Description: "echo", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output: engine.Output{Schema: str, Render: render},
			Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
				return "echo:" + str2(args), nil
			}},
		{Name: "outer", Description: "outer", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output: engine.Output{Schema: str, Render: render},
			Execute: func(ctx context.Context, _ any, run *engine.Run) (any, error) {
				s, err := newScheduler(ctx, svc, schedulerOptions{MaxParallel: 10, Outer: run.Execution, Log: run.Execution.Log()})
				if err != nil {
					return nil, err
				}
				body(s)
				return "ok", s.Close(settledReason)
			}},
	} {
		if _, err := svc.Global().Register(def); err != nil {
			b.Fatal(err)
		}
	}
	return svc
}

func str2(args any) string {
	o, _ := args.(*dsl.Object)
	v, _ := o.Get("value")
	s, _ := v.(string)
	return s
}

func BenchmarkSubCall(b *testing.B) {
	args := func() *dsl.Object { return dsl.NewObject(dsl.Member{Key: "value", Value: "x"}) }
	b.Run("through the scheduler", func(b *testing.B) {
		svc := benchService(b, func(s *scheduler) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Submit(context.Background(), subCall{Name: "echo", Arguments: args(), Logged: args()}); err != nil {
					b.Fatal(err)
				}
			}
		})
		r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "outer", Agent: engine.NewAgent("main", nil), Arguments: dsl.NewObject()})
		if r.IsError {
			b.Fatal(r.Error.Message)
		}
	})
	b.Run("called directly", func(b *testing.B) {
		svc := benchService(b, nil)
		b.ReportAllocs()
		for b.Loop() {
			if r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: args()}); r.IsError {
				b.Fatal(r.Error.Message)
			}
		}
	})
}
