package lua

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/ptc"
)

func benchRuntime(b *testing.B, warm int) *ProgramRuntime {
	b.Helper()
	rt, err := NewProgramRuntime(ProgramOptions{WarmStates: warm})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	return rt
}

// BenchmarkProgramFreshState measures building a fresh sandboxed state for
// a run (sandbox.New, the value converter, the prelude): what a run costs
// when no warm state is ready.
func BenchmarkProgramFreshState(b *testing.B) {
	rt := benchRuntime(b, -1)
	b.ReportAllocs()
	for b.Loop() {
		st, err := rt.newState()
		if err != nil {
			b.Fatal(err)
		}
		st.L.Close()
	}
}

// BenchmarkProgramTrivialRun measures Run of "return 1 + 1" with one
// namespace of one binding, with warm states (the default) and without.
func BenchmarkProgramTrivialRun(b *testing.B) {
	ns := []ptc.Namespace{{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: []ptc.Binding{
		{Name: "echo", Call: func(_ context.Context, a any) (any, error) { return a, nil }},
	}}}
	for _, bc := range []struct {
		name string
		warm int
	}{{"warm", 0}, {"cold", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			rt := benchRuntime(b, bc.warm)
			req := ptc.Request{Program: "return 1 + 1", Bindings: ns}
			b.ReportAllocs()
			for b.Loop() {
				res, err := rt.Run(context.Background(), req)
				if err != nil || res.Err != nil {
					b.Fatal(err, res.Err)
				}
			}
		})
	}
}

// BenchmarkProgramSubCalls measures a loop of 1,000 calls of a Go binding
// in one run; ns/call is the figure.
func BenchmarkProgramSubCalls(b *testing.B) {
	ns := []ptc.Namespace{{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: []ptc.Binding{
		{Name: "echo", Call: func(_ context.Context, a any) (any, error) { return a, nil }},
	}}}
	rt := benchRuntime(b, 0)
	req := ptc.Request{Program: `local n = 0 for i = 1, 1000 do n = n + tools.echo{i}[1] end return n`, Bindings: ns}
	b.ReportAllocs()
	for b.Loop() {
		res, err := rt.Run(context.Background(), req)
		if err != nil || res.Err != nil {
			b.Fatal(err, res.Err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/call")
}
