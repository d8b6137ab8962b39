package lua_test

import (
	"strings"
	"testing"
)

// exec:defer_context raises once the call has deferred 1000 messages (or
// 64 MiB of them); the messages before it are kept.
func TestDeferContextRaisesPastItsBound(t *testing.T) {
	e := load(t, map[string]string{"defer.lua": tool("defer", `{ type = "json" }`, `
    local n = 0
    local ok, err = pcall(function()
      while n < 400000 do
        exec:defer_context({ content = { { type = "text", text = "note " .. n } } })
        n = n + 1
      end
    end)
    return { deferred = n, error = tostring(err and err.message or err) }`)})
	got := e.call(t, "defer", nil)
	if !strings.Contains(got, `"value":{"deferred":1000,"error":"deferred context: a call may defer at most 1000 messages"}`) {
		t.Errorf("got %.400s", got)
	}
	if n := strings.Count(got, `"role":"user"`); n != 1000 {
		t.Errorf("%d deferred messages in the result, want 1000", n)
	}
}
