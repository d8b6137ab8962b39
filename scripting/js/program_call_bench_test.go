package js

import (
	"context"
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
)

// BenchmarkProgramBindingCall is the program runtime's own cost of one
// awaited binding call, without the engine: a binding whose outcome is
// ready at once, called in two steps (Start, as ptc's executor gives it)
// and in one (Call, on a goroutine of its own).
func BenchmarkProgramBindingCall(b *testing.B) {
	const n = 1000
	program := fmt.Sprintf(`let s = 0; for (let i = 0; i < %d; i++) { const r = await tools.greet({name: "n" + i}); s += r.greeting.length; } return s`, n)
	result := func(args any) (any, error) {
		name, _ := args.(*dsl.Object).Get("name")
		return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + name.(string) + "!"}), nil
	}
	for _, tt := range []struct {
		name    string
		binding ptc.Binding
	}{
		{"two steps", ptc.Binding{Name: "greet", Call: func(_ context.Context, args any) (any, error) { return result(args) },
			Start: func(_ context.Context, args any) (func(context.Context) (any, error), error) {
				return func(context.Context) (any, error) { return result(args) }, nil
			}}},
		{"one step", ptc.Binding{Name: "greet", Call: func(_ context.Context, args any) (any, error) { return result(args) }}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			rt := newWarmRuntime(b, 0)
			req := ptc.Request{Program: program, Bindings: toolsNS(tt.binding)}
			b.ReportAllocs()
			for b.Loop() {
				res, err := rt.Run(context.Background(), req)
				if err != nil || res.Err != nil {
					b.Fatal(err, res.Err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n/1000, "µs/call")
		})
	}
}
