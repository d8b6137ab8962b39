package lua

import (
	"strings"
	"testing"
	"time"
)

// The "file.lua:line: " a message may start with is looked for in its head
// only: a 64 MiB message without one (error(s, 0) raises it bare) took
// seconds per look, and a raised error is looked at three times.
func TestPositionReadsOnlyAMessagesHead(t *testing.T) {
	for _, tc := range []struct {
		name, msg string
		want      []string
	}{
		{"a message with a position gives its file and line", "sub/a.lua:12: boom", []string{"sub/a.lua:12: ", "sub/a.lua", "12"}},
		{"a message without one gives nothing", "boom", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := position(tc.msg); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("position(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
	t.Run("a 64 MiB message without a position is answered from its head", func(t *testing.T) {
		long := strings.Repeat("y", 64<<20)
		start := time.Now()
		if got := position(long); got != nil {
			t.Errorf("position = %q", got)
		}
		if got := stripPosition(long); len(got) != len(long) {
			t.Errorf("stripPosition cut %d bytes", len(long)-len(got))
		}
		// Matching the whole message took about 10 s; its head, microseconds.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
	})
}
