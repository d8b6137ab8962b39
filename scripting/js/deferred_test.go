package js_test

import (
	"strings"
	"testing"
)

// exec.deferContext throws once the call has deferred 1000 messages (or
// 64 MiB of them); the messages before it are kept.
func TestDeferContextThrowsPastItsBound(t *testing.T) {
	e := load(t, map[string]string{"defer.js": tool("defer", `{type: "json"}`, `
    let n = 0;
    try {
      for (; n < 400000; n++) exec.deferContext({ content: [{ type: "text", text: "note " + n }] });
    } catch (err) {
      return { deferred: n, error: String(err) };
    }
    return { deferred: n };`)})
	got := e.call(t, "defer", nil)
	if !strings.Contains(got, `"value":{"deferred":1000,"error":"Error: deferred context: a call may defer at most 1000 messages"}`) {
		t.Errorf("got %.400s", got)
	}
	if n := strings.Count(got, `"role":"user"`); n != 1000 {
		t.Errorf("%d deferred messages in the result, want 1000", n)
	}
}
