package cli

import (
	"strings"
	"testing"
)

func TestServeHTTPMaxSessionsFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"the flag without --http is a usage error", []string{"serve", "--http-max-sessions", "5"}, "--http-max-sessions needs --http"},
		{"a cap below one is refused", []string{"serve", "--http", "127.0.0.1:0", "--http-max-sessions", "0"}, "--http-max-sessions 0: the cap must be at least 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"--scripts", t.TempDir()}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("status %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}
}
