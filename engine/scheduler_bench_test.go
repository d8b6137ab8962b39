package engine_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// BenchmarkBatchSleep100 runs a batch of 100 concurrency-safe calls to a tool
// that sleeps 1 ms, with a cap of 10: ten rounds of sleeps, so about 10 ms a
// batch plus the scheduler's overhead (target: at most 15 ms).
func BenchmarkBatchSleep100(b *testing.B) {
	svc := engine.New()
	def := &engine.Definition{
		Name: "sleep", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		Execute: func(context.Context, any, *engine.Run) (any, error) {
			time.Sleep(time.Millisecond)
			return "slept", nil
		},
		IsConcurrencySafe: func(any) bool { return true },
	}
	if _, err := svc.Global().Register(def); err != nil {
		b.Fatal(err)
	}
	agent := engine.NewAgent("main", nil)
	scope := svc.Scope(agent)
	batch := engine.Batch{MaxParallelToolCalls: 10, Log: benchDiscardLog{}}
	for i := range 100 {
		batch.Calls = append(batch.Calls, engine.ToolCallBlock{ID: "c" + strconv.Itoa(i+1), Name: "sleep", Arguments: `{}`})
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := scope.Execute(ctx, batch)
		if err != nil || len(r.Results) != 100 || r.Results[99].Result.IsError {
			b.Fatalf("%v %v", r, err)
		}
	}
}

// benchDiscardLog is an EventLog that keeps nothing.
type benchDiscardLog struct{}

func (benchDiscardLog) Append(context.Context, engine.Event) (string, error) { return "e", nil }
