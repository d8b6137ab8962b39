package js_test

import (
	"strings"
	"testing"
	"time"
)

// Go recursion in goja's builtins (issue 12, class B) ends as a script
// error, never as a fatal Go stack overflow: at call time and at a
// plugin's top level.
func TestGoRecursionInBuiltinsIsAScriptError(t *testing.T) {
	t.Run("a tool parsing a 5,000,000-deep array fails and the next call is served", func(t *testing.T) {
		src := tool("parse", `{type: "string"}`, `return typeof JSON.parse(args.s)`)
		src = strings.Replace(src, "parameters: {}", `parameters: { s: { type: "string" } }`, 1)
		e := load(t, map[string]string{"parse.js": src})
		deep := strings.Repeat("[", 5_000_000) + strings.Repeat("]", 5_000_000)
		start := time.Now()
		got := e.call(t, "parse", map[string]any{"s": deep})
		if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "JSON.parse: nesting deeper than 10000 levels") {
			t.Errorf("got %.300s", got)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("took %v", d)
		}
		if got := e.call(t, "parse", map[string]any{"s": "[[1]]"}); !strings.Contains(got, `"value":"object"`) {
			t.Errorf("the next call: %s", got)
		}
	})
	t.Run("a top level stringifying a deep array is a load diagnostic and the other plugins load", func(t *testing.T) {
		e := load(t, map[string]string{
			"good.js": tool("good", `{type: "string"}`, `return "ok"`),
			"deep.js": "var a = [];\nfor (var i = 0; i < 30000; i++) a = [a];\nString(a);\n",
		})
		got := e.diagnostics()
		if len(got) != 1 || !strings.HasPrefix(got[0], "deep.js:") || !strings.HasSuffix(got[0], "Array.prototype.join: nesting deeper than 10000 levels") {
			t.Errorf("diagnostics %q", got)
		}
		if got := e.call(t, "good", nil); !strings.Contains(got, `"value":"ok"`) {
			t.Errorf("the good plugin does not serve: %s", got)
		}
	})
}
