package scripting_test

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting"
)

func TestDiagnosticIsOneEscapedLine(t *testing.T) {
	tests := []struct {
		name string
		d    scripting.Diagnostic
		want string
	}{
		{"a plain message is as it was",
			scripting.Diagnostic{File: "a.js", Line: 3, Col: 7, Message: "broken at top"}, "a.js:3:7: broken at top"},
		{"a thrown message's newline and escape sequence are escaped",
			scripting.Diagnostic{File: "a.js", Line: 1, Message: "line1\nline2 \x1b[2J\x00"}, `a.js:1: line1\nline2 \x1b[2J\x00`},
		{"a file name's control characters are escaped",
			scripting.Diagnostic{File: "evil\x1b]0;t\a.lua", Message: "x"}, `evil\x1b]0;t\a.lua: x`},
		{"non-ASCII text is kept",
			scripting.Diagnostic{File: "é.lua", Line: 2, Message: "tool name \"héllo\" is invalid"}, `é.lua:2: tool name "héllo" is invalid`},
		{"a message past 32 KiB is cut, marked",
			scripting.Diagnostic{File: "a.js", Message: strings.Repeat("z", 1<<20)}, "a.js: " + strings.Repeat("z", 32<<10) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.Error(); got != tt.want {
				t.Errorf("got  %.200q\nwant %.200q", got, tt.want)
			}
		})
	}
}
