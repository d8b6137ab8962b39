package eventloop

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

func TestErrorTextsAreCutToTheLoopsBound(t *testing.T) {
	l := newLoop(t, Options{MaxErrorText: 8})
	for _, tc := range []struct {
		name, src   string
		errName     string
		msg, prefix string
	}{
		{"a long message keeps its first bytes and the marker",
			"throw new Error('abcdefghijkl')", "Error", "abcdefgh… (truncated)", "Error: abcdefgh… (truncated)\n\tat "},
		{"a message within the bound is whole",
			"throw new Error('abcdefgh')", "Error", "abcdefgh", "Error: abcdefgh\n\tat "},
		{"a long name is cut",
			"class E extends Error { constructor() { super('m'); this.name = 'VeryLongName' } }; throw new E()", "VeryLong… (truncated)", "m", "VeryLong… (truncated): m"},
		{"a thrown string is cut",
			"throw 'abcdefghijkl'", "", "abcdefgh… (truncated)", "abcdefgh… (truncated)\n\tat "},
		{"a thrown symbol's description is cut",
			"throw Symbol('abcdefghijkl')", "", "Symbol(abcdefgh… (truncated))", ""},
		{"a thrown object's own stack text is cut",
			"throw { message: 'm', stack: 'abcdefghijkl' }", "", "m", "abcdefgh… (truncated)"},
		{"two-byte characters are never split",
			"throw new Error('ééééé')", "Error", "éééé… (truncated)", ""},
		{"a surrogate pair at the cut is dropped whole",
			"throw new Error('abcdefg\\u{1F600}')", "Error", "abcdefg… (truncated)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runJS(l, context.Background(), tc.src)
			var je *JSError
			if !errors.As(err, &je) {
				t.Fatalf("got %T %v", err, err)
			}
			if je.Name != tc.errName || je.Message != tc.msg {
				t.Errorf("got name %q message %q; want %q %q", je.Name, je.Message, tc.errName, tc.msg)
			}
			if tc.prefix != "" && !strings.HasPrefix(je.Stack, tc.prefix) {
				t.Errorf("stack %q; want it to start with %q", je.Stack, tc.prefix)
			}
		})
	}
}

func TestCutTextReadsOnlyThePrefixOfAHugeString(t *testing.T) {
	vm := goja.New()
	for _, tc := range []struct{ name, src string }{
		{"an ASCII string", `"x".repeat(1 << 24)`},
		{"a string of two-byte characters", `"é".repeat(1 << 24)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := vm.RunString(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := CutText(v, 1<<10)
			runtime.ReadMemStats(&after)
			if !strings.HasSuffix(got, "… (truncated)") || len(got) > 1<<10+len("… (truncated)") {
				t.Errorf("CutText gave %d bytes ending %q", len(got), got[max(0, len(got)-20):])
			}
			// Converting the whole string would allocate 16 or 48 MiB.
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("CutText allocated %d bytes", n)
			}
		})
	}
}
