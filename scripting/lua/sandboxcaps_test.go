package lua_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// The sandbox's caps (internal/sandbox) as a plugin meets them.

func TestASourceNestedTooDeeplyIsALoadDiagnostic(t *testing.T) {
	start := time.Now()
	e := load(t, map[string]string{
		"deep.lua": "local x = " + strings.Repeat("(", 500_000) + "1" + strings.Repeat(")", 500_000),
		"t.lua":    tool("t", `{ type = "string" }`, `return "ran"`),
	})
	if got := e.diagnostics(); len(got) != 1 || got[0] != "deep.lua:1: chunk has too many syntax levels (the limit is 1000)" {
		t.Fatalf("diagnostics %q", got)
	}
	if got := e.value(t, "t", nil); got != `"ran"` {
		t.Fatalf("the other plugin's tool = %v", got)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestConcatenationAndCoroutinesAreCappedInACall(t *testing.T) {
	e := load(t, map[string]string{
		"t.lua": tool("double", `{ type = "string" }`, `local s = "x" for i = 1, 40 do s = s .. s end return s`) +
			tool("coroutines", `{ type = "string" }`, `for i = 1, 1e6 do coroutine.wrap(function() end) end return "made"`),
	})
	noDiags(t, e)
	for _, tc := range []struct{ tool, message string }{
		{"double", "string concatenation: the result would be 33554432 bytes, over the limit of 16777216 bytes"},
		{"coroutines", "too many coroutines (the limit is 10000 per call)"},
	} {
		t.Run(tc.tool+" fails with the cap's message", func(t *testing.T) {
			start := time.Now()
			hosttest.Want(t, e.call(t, tc.tool, nil), hosttest.Failure(tc.message, ""))
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
