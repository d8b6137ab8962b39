package lua_test

import (
	"strings"
	"testing"
)

// An error a Lua script raises crosses into Go cut to 16 KiB
// (hostapi.MaxErrorText), marked: the model never gets a message of
// megabytes.
func TestErrorTextsAreCutWhereTheyCross(t *testing.T) {
	const marker = "… (truncated)"
	y16k := strings.Repeat("y", 16<<10)
	plain := func(msg string) string {
		return `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"a raised string of a million bytes keeps its first 16 KiB",
			`error(string.rep("y", 1000000))`, plain(y16k + marker)},
		{"a raised string of two-byte characters is cut between characters",
			`error(string.rep("é", 1000000))`, plain(strings.Repeat("é", 8<<10) + marker)},
		{"a raised string of exactly 16 KiB is kept whole",
			`error(string.rep("y", 16384), 0)`, plain(y16k)},
		{"an error table's message is cut",
			`error({ message = string.rep("y", 1000000) })`, plain(y16k + marker)},
		{"a coded error table's name, code and message are each cut",
			`error({ name = string.rep("N", 1000000), code = string.rep("C", 1000000), message = string.rep("y", 1000000) })`,
			`{"isError":true,"error":{"message":"` + y16k + marker + `","info":{"name":"` + strings.Repeat("N", 16<<10) + marker +
				`","code":"` + strings.Repeat("C", 16<<10) + marker + `"}},"content":[{"type":"text","text":"Error: ` + y16k + marker + `"}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := load(t, map[string]string{"big.lua": tool("big", `{ type = "string" }`, tc.body)})
			if got := e.call(t, "big", nil); got != tc.want {
				t.Errorf("got  %.300s… (%d bytes)\nwant %.300s… (%d bytes)", got, len(got), tc.want, len(tc.want))
			}
		})
	}
}

func TestTopLevelErrorTextIsCut(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"a top level's error is cut", `error(string.rep("y", 1000000))`, "top.lua:1: " + strings.Repeat("y", 16<<10) + "… (truncated)"},
		{"a module's error keeps its position and is cut", `require("lib.mod")`, "top.lua:1: lib/mod.lua:1: " + strings.Repeat("y", 16<<10-len("lib/mod.lua:1: ")) + "… (truncated)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := load(t, map[string]string{"top.lua": tc.file, "lib/mod.lua": `error(string.rep("y", 1000000))`})
			if got := e.diagnostics(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("diagnostics %.200q (%d bytes)", got, len(strings.Join(got, "")))
			}
		})
	}
}
