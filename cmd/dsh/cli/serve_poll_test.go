package cli

import (
	"strings"
	"testing"
)

func TestServeHTTPPollAfterFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"the flag without --http is a usage error", []string{"serve", "--http-poll-after", "30s"}, "--http-poll-after needs --http"},
		{"a negative period is refused", []string{"serve", "--http", "127.0.0.1:0", "--http-poll-after", "-1s"}, "--http-poll-after -1s: the period must not be negative (0 never polls)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"--scripts", t.TempDir()}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("status %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}
}
