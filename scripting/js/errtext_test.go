package js_test

import (
	"strings"
	"testing"
)

// A script error's texts cross into Go cut to 16 KiB (hostapi.MaxErrorText),
// marked, whatever the script threw: the model never gets, and dsh never
// copies, a message of megabytes.
func TestErrorTextsAreCutWhereTheyCross(t *testing.T) {
	const marker = "… (truncated)"
	x16k := strings.Repeat("x", 16<<10)
	e8k := strings.Repeat("é", 8<<10)
	plain := func(msg string) string {
		return `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a thrown Error's message of a million characters keeps its first 16 KiB",
			`throw new Error("x".repeat(1e6))`, plain(x16k + marker)},
		{"a message of two-byte characters is cut between characters",
			`throw new Error("é".repeat(1e6))`, plain(e8k + marker)},
		{"a thrown string is cut the same way",
			`throw "x".repeat(1e6)`, plain(x16k + marker)},
		{"a message of exactly 16 KiB is kept whole",
			`throw new Error("x".repeat(16384))`, plain(x16k)},
		{"a coded error's name, code and message are each cut",
			`throw { name: "N".repeat(1e6), code: "C".repeat(1e6), message: "x".repeat(1e6) }`,
			`{"isError":true,"error":{"message":"` + x16k + marker + `","info":{"name":"` + strings.Repeat("N", 16<<10) + marker +
				`","code":"` + strings.Repeat("C", 16<<10) + marker + `"}},"content":[{"type":"text","text":"Error: ` + x16k + marker + `"}]}`},
		{"a language error's name is cut with its message",
			`const e = new TypeError("x".repeat(1e6)); throw e`, plain(x16k + marker)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := load(t, map[string]string{"big.js": tool("big", `{type: "string"}`, tc.body)})
			if got := e.call(t, "big", nil); got != tc.want {
				t.Errorf("got  %.300s… (%d bytes)\nwant %.300s… (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}

func TestTopLevelErrorTextIsCut(t *testing.T) {
	e := load(t, map[string]string{"top.js": `throw new Error("x".repeat(1e6));`})
	want := "top.js:1:7: " + strings.Repeat("x", 16<<10) + "… (truncated)"
	if got := e.diagnostics(); len(got) != 1 || got[0] != want {
		t.Errorf("diagnostics %.200q", got)
	}
}
