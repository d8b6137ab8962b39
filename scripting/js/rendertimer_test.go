package js_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/js"
)

// TestARendererThatHangsAfterCalmCalls is TestARendererThatHangs on an
// instance whose prerender deadline timer already served calls that
// stopped it in time (it is reused): the reused timer still ends the
// renderer, and the calls after it get theirs.
func TestARendererThatHangsAfterCalmCalls(t *testing.T) {
	src := strings.Replace(tool("r", `{type: "string"}`, `return args.spin ? "spin" : "calm"`),
		`render: (a, v) => [{ type: "text", text: JSON.stringify(v) }]`,
		`render: (a, v) => { while (v === "spin") {} return [{ type: "text", text: v }]; }`, 1)
	src = strings.Replace(src, "parameters: {}", "parameters: { spin: { type: \"boolean\" } }", 1)
	deadline := testtime.D(time.Second)
	e := load(t, map[string]string{"r.js": src}, func(h *js.Host, _ *engine.Service) { h.ListenerTimeout = deadline })
	calm := func(t *testing.T) {
		t.Helper()
		if got := e.call(t, "r", args(t, `{}`)); !strings.Contains(got, `"content":[{"type":"text","text":"calm"}]`) {
			t.Fatalf("a calm call: %s", got)
		}
	}
	t.Run("calm calls render", func(t *testing.T) {
		for range 3 {
			calm(t)
		}
	})
	t.Run("a renderer that hangs then fails as render's timeout", func(t *testing.T) {
		got := e.call(t, "r", args(t, `{"spin":true}`))
		if want := fmt.Sprintf(`output.render failed: tool \"r\" output.render timed out after %dms`, deadline.Milliseconds()); !strings.Contains(got, want) {
			t.Fatalf("got  %s\nwant it to contain %s", got, want)
		}
	})
	t.Run("calls after it render again", func(t *testing.T) {
		calm(t)
		calm(t)
	})
}
