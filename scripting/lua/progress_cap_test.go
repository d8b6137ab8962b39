package lua_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// exec.progress's message reaches the caller cut to 16 KiB, marked.
func TestProgressMessagesAreCut(t *testing.T) {
	e := load(t, map[string]string{"p.lua": tool("p", `{ type = "string" }`, `
    exec.progress(1, 2, string.rep("x", 1000000))
    exec.progress(2, 2, "short")
    return "done"`)})
	var mu sync.Mutex
	var got []string
	ctx := engine.WithProgress(context.Background(), func(p engine.Progress) {
		mu.Lock()
		got = append(got, p.Message)
		mu.Unlock()
	})
	r := e.svc.Call(ctx, engine.Input{CallID: "c1", Name: "p", Arguments: dsl.NewObject()})
	if r.IsError {
		t.Fatalf("the call: %s", marshal(t, r))
	}
	want := []string{strings.Repeat("x", 16<<10) + "… (truncated)", "short"}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %d reports of %v bytes", len(got), func() (n []int) {
			for _, s := range got {
				n = append(n, len(s))
			}
			return
		}())
	}
}
