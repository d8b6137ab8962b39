package engine_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/engine"
)

// runBatch runs calls as one step of agent, with the step's tool set
// resolved before it as the CLI does, and returns the results' values or
// failure messages in order, joined by "|".
func runBatch(svc *engine.Service, agent *engine.Agent, calls ...engine.ToolCallBlock) string {
	sc := svc.Scope(agent)
	set, err := sc.Resolve(context.Background(), nil)
	if err != nil {
		return "resolve: " + err.Error()
	}
	res, err := sc.Execute(context.Background(), engine.Batch{Calls: calls, Agent: agent, ToolSet: set})
	if err != nil {
		return "execute: " + err.Error()
	}
	var out []string
	for _, cr := range res.Results {
		if cr.Result.IsError {
			out = append(out, "error: "+cr.Result.Error.Message)
			continue
		}
		out = append(out, cr.Result.Value.(string))
	}
	return strings.Join(out, "|")
}

func TestBatchResolvesEachCallAtItsStart(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("a tool an earlier call of the batch registers serves a later call of the same batch", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		sc := svc.Scope(a)
		cfMustRegister(t, sc, cfTool("install", func(context.Context, any, *engine.Run) (any, error) {
			if _, err := sc.Register(cfConst("made", "made ran")); err != nil {
				return nil, err
			}
			return "installed", nil
		}))
		got := runBatch(svc, a,
			engine.ToolCallBlock{ID: "c1", Name: "made"},
			engine.ToolCallBlock{ID: "c2", Name: "install"},
			engine.ToolCallBlock{ID: "c3", Name: "made"})
		if want := `error: unknown tool "made"|installed|made ran`; got != want {
			t.Errorf("results %q; want %q", got, want)
		}
	})

	t.Run("a tool an earlier call of the batch replaces serves the later calls in its new version", func(t *testing.T) {
		svc := engine.New()
		a := engine.NewAgent("a", nil)
		sc := svc.Scope(a)
		dispose := cfMustRegister(t, sc, cfConst("tool", "v1"))
		cfMustRegister(t, sc, cfTool("replace", func(context.Context, any, *engine.Run) (any, error) {
			dispose()
			if _, err := sc.Register(cfConst("tool", "v2")); err != nil {
				return nil, err
			}
			return "replaced", nil
		}))
		got := runBatch(svc, a,
			engine.ToolCallBlock{ID: "c1", Name: "tool"},
			engine.ToolCallBlock{ID: "c2", Name: "replace"},
			engine.ToolCallBlock{ID: "c3", Name: "tool"})
		if want := "v1|replaced|v2"; got != want {
			t.Errorf("results %q; want %q", got, want)
		}
	})

	t.Run("a call that began before a swap keeps its epoch to its end; the batch's next call begins in the new one", func(t *testing.T) {
		svc := engine.New()
		var mu sync.Mutex
		seen := map[string][]string{}
		old := svc.Global()
		hold := make(chan struct{})
		version{name: "v1", hold: hold, mu: &mu, seen: seen}.install(t, old)
		done := make(chan string)
		go func() {
			done <- runBatch(svc, nil,
				engine.ToolCallBlock{ID: "early", Name: "t"},
				engine.ToolCallBlock{ID: "late", Name: "t"})
		}()
		waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen["early"]) == 1 }) // past pre-execute
		next := svc.Global()
		if _, err := svc.Swap(func() error {
			old.Dispose()
			version{name: "v2", mu: &mu, seen: seen}.install(t, next)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		close(hold)
		if got := <-done; got != "v1|v2" {
			t.Errorf("results %q; want v1|v2", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(seen["early"], " "); got != "pre:v1 body:v1 post:v1" {
			t.Errorf("the early call's stages: %s", got)
		}
		if got := strings.Join(seen["late"], " "); got != "pre:v2 body:v2 post:v2" {
			t.Errorf("the late call's stages: %s", got)
		}
	})
}
