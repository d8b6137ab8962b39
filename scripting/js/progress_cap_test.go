package js_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

// exec.progress's message and dsh.log's line reach Go cut to 16 KiB, marked.
func TestProgressMessagesAreCut(t *testing.T) {
	e := load(t, map[string]string{"p.js": tool("p", `{type: "string"}`, `
    exec.progress(1, 2, "x".repeat(1e6));
    exec.progress(2, 2, "é".repeat(1e6));
    exec.progress(3, 3, "short");
    return "done"`)})
	var mu sync.Mutex
	var got []string
	ctx := engine.WithProgress(context.Background(), func(p engine.Progress) {
		mu.Lock()
		got = append(got, p.Message)
		mu.Unlock()
	})
	if r := e.callCtx(t, ctx, "p", nil); !strings.Contains(r, `"value":"done"`) {
		t.Fatalf("the call: %.300s", r)
	}
	want := []string{strings.Repeat("x", 16<<10) + "… (truncated)", strings.Repeat("é", 8<<10) + "… (truncated)", "short"}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("%d reports, want %d", len(got), len(want))
	}
	for k := range want {
		if got[k] != want[k] {
			t.Errorf("report %d: %d bytes ending %q, want %d bytes", k+1, len(got[k]), got[k][max(0, len(got[k])-20):], len(want[k]))
		}
	}
}
