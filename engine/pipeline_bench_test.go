package engine_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// greet is the trivial tool: one string parameter → {greeting},
// rendered to one text block. It is written against the raw Definition so
// the benchmark measures the pipeline, not a typed wrapper.
func greetService(tb testing.TB, opts ...engine.Option) *engine.Service {
	tb.Helper()
	params, err := dsl.Params(dsl.Prop("name", dsl.String().Required())).Compile()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := dsl.ObjectOf(false, dsl.Prop("greeting", dsl.String().Required())).Compile()
	if err != nil {
		tb.Fatal(err)
	}
	svc := engine.New(opts...)
	_, err = svc.Global().Register(&engine.Definition{
		Name:        "greet",
		Description: "Greet someone by name.",
		Parameters:  params,
		Output: engine.Output{
			Schema: out,
			Render: func(_, v any) ([]engine.Block, error) {
				g, _ := v.(*dsl.Object).Get("greeting")
				return []engine.Block{engine.Text(g.(string))}, nil
			},
		},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			n, _ := args.(*dsl.Object).Get("name")
			return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + n.(string) + "!"}), nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

func greetInput() engine.Input {
	return engine.Input{CallID: "c1", Name: "greet", Arguments: dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})}
}

func benchCalls(b *testing.B, svc *engine.Service) {
	ctx, in := context.Background(), greetInput()
	if r := svc.Call(ctx, in); r.IsError {
		b.Fatal(r.Error.Message)
	}
	b.ReportAllocs()
	for b.Loop() {
		if r := svc.Call(ctx, in); r.IsError {
			b.Fatal(r.Error.Message)
		}
	}
}

// BenchmarkCallGreet is one call through the full pipeline with no listeners.
func BenchmarkCallGreet(b *testing.B) { benchCalls(b, greetService(b)) }

// BenchmarkCallGreetListeners adds two pass-through pre-execute listeners and
// one post-execute listener.
func BenchmarkCallGreetListeners(b *testing.B) {
	svc := greetService(b)
	g := svc.Global()
	pass := func(_ context.Context, _ *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		return next()
	}
	g.OnPreExecute(pass)
	g.OnPreExecute(pass)
	g.OnPostExecute(func(_ context.Context, _ *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		return next()
	})
	benchCalls(b, svc)
}

// TestRetainedMemoryDoesNotGrow runs 100,000 calls and checks that the live
// heap after them is not larger than after the first 10,000 by more than a
// small margin: the engine keeps nothing per call.
func TestRetainedMemoryDoesNotGrow(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 calls")
	}
	svc := greetService(t)
	ctx, in := context.Background(), greetInput()
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for range 10_000 {
		svc.Call(ctx, in)
	}
	before := heap()
	for range 90_000 {
		svc.Call(ctx, in)
	}
	after := heap()
	if after > before+256<<10 {
		t.Errorf("live heap grew from %d to %d bytes over 90,000 calls", before, after)
	}
}

// BenchmarkCallGreetDefineTool is the same tool built with DefineTool: typed
// arguments and output through encoding/json, plus argument validation.
func BenchmarkCallGreetDefineTool(b *testing.B) {
	type args struct {
		Name string `json:"name"`
	}
	type out struct {
		Greeting string `json:"greeting"`
	}
	def, err := engine.DefineTool(engine.ToolOptions[args, out]{
		Name:        "greet",
		Description: "Greet someone by name.",
		Parameters:  dsl.Params(dsl.Prop("name", dsl.String().Required())),
		Output:      dsl.ObjectOf(false, dsl.Prop("greeting", dsl.String().Required())),
		Render:      func(_ args, o out) ([]engine.Block, error) { return []engine.Block{engine.Text(o.Greeting)}, nil },
		Execute: func(_ context.Context, a args, _ *engine.Run) (out, error) {
			return out{Greeting: "Hello, " + a.Name + "!"}, nil
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	svc := engine.New()
	if _, err := svc.Global().Register(def); err != nil {
		b.Fatal(err)
	}
	benchCalls(b, svc)
}
