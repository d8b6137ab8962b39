package process

import (
	"strings"
	"testing"
)

func TestHeadAndTailKeepTheStartAndTheEndOfAChildsStandardError(t *testing.T) {
	long := "fatal error: out of memory\n" + strings.Repeat("f", stderrHead+stderrTail+100) + "the end"
	for _, tc := range []struct {
		name   string
		stream string
		want   string
	}{
		{"nothing written is nothing kept", "", ""},
		{"a short stream is kept once, not twice", "fatal error: boom\n", "fatal error: boom\n"},
		{"a stream a little past the head is kept whole", strings.Repeat("h", stderrHead) + "tail",
			strings.Repeat("h", stderrHead) + "tail"},
		{"a long stream keeps its start and its end, marking the cut", long,
			long[:stderrHead] + "\n…\n" + long[len(long)-stderrTail:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// As monitor keeps them: the first stderrHead bytes, and a tail
			// of at least stderrTail bytes.
			head := []byte(tc.stream[:min(len(tc.stream), stderrHead)])
			tail := []byte(tc.stream[max(0, len(tc.stream)-2*stderrTail):])
			if got := string(headAndTail(head, tail, int64(len(tc.stream)))); got != tc.want {
				t.Errorf("got %d bytes %.60q…, want %d bytes %.60q…", len(got), got, len(tc.want), tc.want)
			}
		})
	}
}
