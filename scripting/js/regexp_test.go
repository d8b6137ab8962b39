package js_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/js"
)

// secretPolicy is a pre-execute policy that denies a call whose text
// argument holds a secret, scanning with scan (JavaScript returning true on
// a secret). With a catastrophic pattern, goja would report "no secret" once
// the match ran out of time, and the policy would let the call through.
func secretPolicy(scan string) string {
	return `import { on } from "dsh";
on("tools/pre-execute", (exec, next) => {
  const text: string = String(exec.arguments.text ?? "");
  if ((() => { ` + scan + ` })()) {
    return { kind: "deny", reason: "a secret" };
  }
  return next();
});
`
}

func TestAPolicyScanningWithACatastrophicRegExpFailsClosed(t *testing.T) {
	echo := strings.Replace(tool("echo", `{type: "string"}`, `return String(args.text)`), "parameters: {}", `parameters: { text: { type: "string" } }`, 1)
	// "k=secret" and then a run of a's that never reaches an "=": the second
	// match starts past 0, so goja runs the pattern (which RE2 accepts) on
	// its backtracking engine, where the a's take 2^40 steps.
	text := `{"text":"k=secret ` + strings.Repeat("a", 40) + `!"}`
	tests := []struct {
		name, scan, want string
	}{
		{"test with a backreference", `return /^(a+)+\1$/.test(text.slice(9));`,
			`policy.ts:4:35: RangeError: regular expression /^(a+)+\\1$/ exceeded its match time limit (1s)`},
		{"an exec loop over a global literal", `const re = /(a+)+=|k=(\w+)/g; let m; while ((m = re.exec(text)) !== null) if (m[2] && m[2] !== "secret") return true; return false;`,
			`policy.ts:4:68: RangeError: regular expression /(a+)+=|k=(\\w+)/g exceeded its match time limit (1s)`},
		{"match with a string pattern", `return text.slice(9).match("^(a+)+\\1$") !== null;`,
			`policy.ts:4:37: RangeError: regular expression /^(a+)+\\1$/ exceeded its match time limit (1s)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := load(t, map[string]string{"echo.js": echo, "policy.ts": secretPolicy(tt.scan)})
			if len(e.diags) > 0 {
				t.Fatalf("diagnostics: %v", e.diagnostics())
			}
			got := e.call(t, "echo", args(t, text))
			msg := tt.want + ` (plugin \"policy.ts\")`
			want := `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
			if got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestAListenerDeadlineBeforeTheMatchTimeoutWins: a listener deadline
// shorter than the match time limit ends the call first, with the
// listener's own timeout.
func TestAListenerDeadlineBeforeTheMatchTimeoutWins(t *testing.T) {
	echo := strings.Replace(tool("echo", `{type: "string"}`, `return String(args.text)`), "parameters: {}", `parameters: { text: { type: "string" } }`, 1)
	e := load(t, map[string]string{"echo.js": echo, "policy.ts": secretPolicy(`return /^(a+)+\1$/.test(text);`)},
		func(h *js.Host, _ *engine.Service) { h.ListenerTimeout = 200 * time.Millisecond })
	got := e.call(t, "echo", args(t, `{"text":"`+strings.Repeat("a", 40)+`b"}`))
	if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "timed out after 200ms") || strings.Contains(got, "RangeError") {
		t.Errorf("got %s, want the listener's timeout", got)
	}
}

func TestRegExpLiteralsGojaRunsWrongAreRefusedAtLoad(t *testing.T) {
	e := load(t, map[string]string{
		"dates.ts": "import { on } from \"dsh\";\nconst year = (s: string) => /(?<year>\\d{4})/.exec(s)?.groups?.year;\non(\"tools/pre-execute\", (exec, next) => next());\n",
	})
	want := `dates.ts:2:29: named capture groups are not supported: /(?<year>\d{4})/`
	if got := e.diagnostics(); len(got) != 1 || got[0] != want {
		t.Errorf("diagnostics %q, want %q", got, want)
	}
}
