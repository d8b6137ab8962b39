package engine_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
)

// version registers, through sc, a version of tool "t" and of its policy:
// the body returns the version, and the pre- and post-execute listeners
// record it for the call, so a test can tell which version each stage of a
// call came from. The body waits on hold when it is not nil.
type version struct {
	name string
	hold chan struct{}
	mu   *sync.Mutex
	seen map[string][]string // callId → stages "pre:v", "post:v"
}

func (v version) install(t *testing.T, sc *engine.Scope) {
	t.Helper()
	note := func(id, stage string) {
		v.mu.Lock()
		v.seen[id] = append(v.seen[id], stage+":"+v.name)
		v.mu.Unlock()
	}
	cfMustRegister(t, sc, cfTool("t", func(ctx context.Context, _ any, run *engine.Run) (any, error) {
		if v.hold != nil {
			<-v.hold
		}
		note(run.Execution.CallID(), "body")
		return v.name, nil
	}))
	sc.OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		note(exec.CallID(), "pre")
		return next()
	})
	sc.OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		note(exec.CallID(), "post")
		return next()
	})
}

func TestSwap(t *testing.T) {
	t.Run("a call that began before a swap keeps its version to the end; calls after see the new one", func(t *testing.T) {
		svc := engine.New()
		var mu sync.Mutex
		seen := map[string][]string{}
		old := svc.Global()
		hold := make(chan struct{})
		version{name: "v1", hold: hold, mu: &mu, seen: seen}.install(t, old)
		done := make(chan *engine.Result)
		go func() { done <- svc.Call(context.Background(), cfIn("early", "t", cfObj("text", "x"))) }()
		waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(seen["early"]) == 1 }) // past pre-execute
		next := svc.Global()
		e, err := svc.Swap(func() error {
			old.Dispose()
			version{name: "v2", mu: &mu, seen: seen}.install(t, next)
			return nil
		})
		if err != nil || e != 1 || svc.Epoch() != 1 {
			t.Fatalf("Swap = %v, %v; epoch %v", e, err, svc.Epoch())
		}
		late := svc.Call(context.Background(), cfIn("late", "t", cfObj("text", "x")))
		close(hold)
		early := <-done
		if early.Value != "v1" || late.Value != "v2" {
			t.Fatalf("early ran %v, late ran %v", early.Value, late.Value)
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
	t.Run("calls during repeated swaps never meet an unknown tool or a mixed version", func(t *testing.T) {
		svc := engine.New()
		var mu sync.Mutex
		seen := map[string][]string{}
		cur := svc.Global()
		version{name: "v0", mu: &mu, seen: seen}.install(t, cur)
		var stop atomic.Bool
		var wg sync.WaitGroup
		var calls atomic.Int64
		var failures []string
		var fmu sync.Mutex
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load() || i < 20; i++ {
					id := "g" + string(rune('a'+g)) + "-" + itoa(i)
					r := svc.Call(context.Background(), cfIn(id, "t", cfObj("text", "x")))
					calls.Add(1)
					if r.IsError {
						fmu.Lock()
						failures = append(failures, id+": "+r.Error.Message)
						fmu.Unlock()
					}
				}
			}()
		}
		for n := 1; n <= 100; n++ {
			next := svc.Global()
			prev := cur
			if _, err := svc.Swap(func() error {
				prev.Dispose()
				version{name: "v" + itoa(n), mu: &mu, seen: seen}.install(t, next)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			cur = next
		}
		stop.Store(true)
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("%d of %d calls failed, first: %s", len(failures), calls.Load(), failures[0])
		}
		mu.Lock()
		defer mu.Unlock()
		for id, stages := range seen {
			if len(stages) != 3 {
				t.Fatalf("call %s: stages %v", id, stages)
			}
			v := strings.SplitN(stages[0], ":", 2)[1]
			for _, st := range stages {
				if !strings.HasSuffix(st, ":"+v) {
					t.Fatalf("call %s mixed versions: %v", id, stages)
				}
			}
		}
	})
	t.Run("a failed swap undoes everything and the disposed scope owns its effects again", func(t *testing.T) {
		svc := engine.New()
		var mu sync.Mutex
		seen := map[string][]string{}
		old := svc.Global()
		version{name: "v1", mu: &mu, seen: seen}.install(t, old)
		changes := 0
		svc.Global().OnChange(func(engine.Change) error { changes++; return nil })
		next := svc.Global()
		_, err := svc.Swap(func() error {
			old.Dispose()
			version{name: "v2", mu: &mu, seen: seen}.install(t, next)
			return errors.New("the new version is broken")
		})
		if err == nil || err.Error() != "the new version is broken" || svc.Epoch() != 0 {
			t.Fatalf("Swap error %v, epoch %v", err, svc.Epoch())
		}
		if changes != 0 {
			t.Errorf("tools/change heard %d changes of a failed swap", changes)
		}
		if r := svc.Call(context.Background(), cfIn("c", "t", cfObj("text", "x"))); r.Value != "v1" {
			t.Fatalf("after the failed swap: %s", cfResultJSON(t, r))
		}
		mu.Lock()
		if got := strings.Join(seen["c"], " "); got != "pre:v1 body:v1 post:v1" {
			t.Errorf("stages %s", got)
		}
		mu.Unlock()
		old.Dispose() // it owns its effects again: disposing it removes them
		if r := svc.Call(context.Background(), cfIn("d", "t", cfObj("text", "x"))); !r.IsError || !strings.Contains(r.Error.Message, "unknown tool") {
			t.Fatalf("after disposing the old scope: %s", cfResultJSON(t, r))
		}
	})
	t.Run("a panic in the swap undoes it and goes on", func(t *testing.T) {
		svc := engine.New()
		func() {
			defer func() {
				if recover() == nil {
					t.Error("the panic did not propagate")
				}
			}()
			_, _ = svc.Swap(func() error {
				cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
				panic("boom")
			})
		}()
		if svc.Global().Get("echo") != nil {
			t.Error("a panicking swap left its registration")
		}
		if _, err := svc.Swap(func() error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("tools/change hears one swap event per committed swap", func(t *testing.T) {
		svc := engine.New()
		var kinds []engine.ChangeKind
		svc.Global().OnChange(func(c engine.Change) error { kinds = append(kinds, c.Kind); return nil })
		if _, err := svc.Swap(func() error {
			cfMustRegister(t, svc.Global(), cfEchoDef("a"))
			cfMustRegister(t, svc.Global(), cfEchoDef("b"))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(kinds) != 1 || kinds[0] != engine.ChangeSwap {
			t.Fatalf("heard %v", kinds)
		}
		if svc.Global().Get("a") == nil || svc.Global().Get("b") == nil {
			t.Fatal("the swap's tools are not registered")
		}
	})
	t.Run("Drain waits for the calls that began before the swap", func(t *testing.T) {
		svc := engine.New()
		hold := make(chan struct{})
		started := make(chan struct{})
		old := svc.Global()
		cfMustRegister(t, old, cfTool("slow", func(context.Context, any, *engine.Run) (any, error) {
			close(started)
			<-hold
			return "done", nil
		}))
		done := make(chan struct{})
		go func() { svc.Call(context.Background(), cfIn("c", "slow", cfObj("text", "x"))); close(done) }()
		<-started
		e, err := svc.Swap(func() error { old.Dispose(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := svc.Drain(ctx, e); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Drain with a call still running: %v", err)
		}
		close(hold)
		<-done
		if err := svc.Drain(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		if r := svc.Call(context.Background(), cfIn("c2", "slow", cfObj("text", "x"))); !r.IsError {
			t.Fatal("the retired tool still serves new calls")
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(time.Millisecond)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}
