package js_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
)

// BenchmarkChildRuntime is what a process-isolation child does for each
// `return 1+1` of a batch, back to back (cmd/dsh's openChildRuntime): a
// program runtime with one warm runtime and a heap guard at the child's cap,
// so that each run also pays for the rebuild of the runtime it used. The
// allocations are the child's own; guarded is the in-process build,
// contained ProgramOptions.ContainedByProcess.
func BenchmarkChildRuntime(b *testing.B) {
	for _, c := range []struct {
		name      string
		contained bool
	}{{"guarded", false}, {"contained", true}} {
		b.Run(c.name, func(b *testing.B) {
			budgets := ptc.DefaultBudgets()
			guard := scripting.NewMemoryGuard(int64(budgets.MaxMemoryMB*scripting.MiB), scripting.MemoryGuardOptions{})
			rt, err := js.NewProgramRuntime(js.ProgramOptions{Budgets: budgets, Memory: guard, WarmRuntimes: 1,
				ContainedByProcess: c.contained})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = rt.Close() })
			run := func() {
				res, err := rt.Run(context.Background(), ptc.Request{Program: "return 1+1"})
				if err != nil || res.Err != nil || res.Value != int64(2) && res.Value != float64(2) {
					b.Fatalf("got %v, %v, %v; want 2", res.Value, res.Err, err)
				}
			}
			run()
			b.ReportAllocs()
			for b.Loop() {
				run()
			}
		})
	}
}
