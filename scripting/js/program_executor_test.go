package js_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/js"
)

// The goja runtime under the PTC executor: sub-calls are submitted as the
// program makes them and waited for by the caller running the program.
func TestProgramSubCallsUnderTheExecutor(t *testing.T) {
	svc := engine.New()
	var inFlight, peak atomic.Int32
	release := make(chan struct{})
	params, err := dsl.Params(dsl.Prop("n", dsl.Number())).Compile()
	if err != nil {
		t.Fatal(err)
	}
	num := dsl.NewObject(dsl.Member{Key: "type", Value: "number"})
	render := func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("n")}, nil }
	for _, def := range []*engine.Definition{
		{Name: "slow", Description: "Wait, then echo n.", Parameters: params, Output: engine.Output{Schema: num, Render: render},
			IsConcurrencySafe: func(any) bool { return true },
			Execute: func(ctx context.Context, args any, _ *engine.Run) (any, error) {
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				select {
				case <-release:
				case <-time.After(50 * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				v, _ := args.(*dsl.Object).Get("n")
				return v, nil
			}},
		{Name: "hang", Description: "Never answers until cancelled.", Parameters: params, Output: engine.Output{Schema: num, Render: render},
			Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}},
	} {
		if _, err := svc.Global().Register(def); err != nil {
			t.Fatal(err)
		}
	}
	rt, err := js.NewProgramRuntime(js.ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	exec, err := ptc.NewExecutor(svc, rt, ptc.Options{MaxParallelSubCalls: 4})
	if err != nil {
		t.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	svc.Scope(agent).SetExecutor(exec)
	call := func(ctx context.Context, code string) string {
		r := svc.Call(ctx, engine.Input{CallID: "c1", Name: ptc.ToolName, Agent: agent,
			Arguments: dsl.NewObject(dsl.Member{Key: "code", Value: code}, dsl.Member{Key: "description", Value: "Test sub-calls"})})
		b, err := dsl.Marshal(r.JSON())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	t.Run("calls under Promise.all overlap, up to the cap, and resolve in order", func(t *testing.T) {
		got := call(context.Background(), `return await Promise.all([1, 2, 3, 4, 5, 6].map((n) => tools.slow({n})))`)
		if !strings.Contains(got, `"result":[1,2,3,4,5,6]`) {
			t.Fatalf("got %s", got)
		}
		if p := peak.Load(); p < 2 || p > 4 {
			t.Errorf("%d bodies ran at once, want 2 to 4", p)
		}
	})
	t.Run("awaited calls run one after the other", func(t *testing.T) {
		peak.Store(0)
		got := call(context.Background(), `let s = 0; for (let n = 1; n <= 3; n++) s += await tools.slow({n}); return s`)
		if !strings.Contains(got, `"result":6`) || peak.Load() != 1 {
			t.Fatalf("got %s, peak %d", got, peak.Load())
		}
	})
	t.Run("cancelling the outer call ends a program waiting for a sub-call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		got := call(ctx, `return await tools.hang({})`)
		if !strings.Contains(got, `"isError":true`) {
			t.Fatalf("got %s", got)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("returned after %v", d)
		}
	})
	t.Run("a call the program does not await is drained when the run ends", func(t *testing.T) {
		got := call(context.Background(), `tools.slow({n: 7}); return "early"`)
		if !strings.Contains(got, `"result":"early"`) {
			t.Fatalf("got %s", got)
		}
	})
}
