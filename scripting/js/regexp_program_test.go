package js

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/ptc"
)

func TestProgramRegularExpressions(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	t.Run("a literal with a named capture group is a syntax error at its line", func(t *testing.T) {
		got := resultJSON(t, runProgram(t, rt, context.Background(), nil, "const s: string = 'y2024';\nreturn /(?<y>\\d+)/.exec(s)![1];"))
		want := `{"error":{"kind":"exception","message":"SyntaxError: named capture groups are not supported: /(?\u003cy\u003e\\d+)/ (line 2, column 8)"},"logs":[]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("a match past its time limit throws a RangeError", func(t *testing.T) {
		res := runProgram(t, rt, context.Background(), nil, "const s = 'a'.repeat(40) + 'b';\nreturn /^(a+)+\\1$/.test(s);")
		const want = "RangeError: regular expression /^(a+)+\\1$/ exceeded its match time limit (1s)\n\tat test (native)\n\tat __dsh_main__ (program.ts:2:20("
		if res.Err == nil || res.Err.Kind != ptc.KindException || !strings.HasPrefix(res.Err.Message, want) {
			t.Errorf("got %s, want an exception starting %q", resultJSON(t, res), want)
		}
	})
}
