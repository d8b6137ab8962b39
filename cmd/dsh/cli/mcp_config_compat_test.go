package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMCPConfigCompat(t *testing.T) {
	scripts := t.TempDir()
	config := filepath.Join(t.TempDir(), "claude.json")
	cfg := `{"mcpServers":{
		"t":{"command":"${DSH_COMPAT_BIN}","args":["` + mcpServerArg + `"],"autoApprove":["echo"]},
		"off":{"disabled":true,"command":"${DSH_COMPAT_UNSET}"}}}`
	if err := os.WriteFile(config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DSH_COMPAT_BIN", os.Args[0])

	t.Run("a Claude config is imported, its unused keys warned about, its disabled server skipped", func(t *testing.T) {
		code, stdout, stderr := run(t, "", "--scripts", scripts, "--json", "--mcp-config", config, "call", "t__echo", `{"text":"hi"}`)
		warning := "dsh: warning: --mcp-config " + config + `: server "t": key "autoApprove" is not used by dsh (ignored)` + "\n"
		if code != 0 || !strings.Contains(stdout, `"value":"echo: hi"`) || !strings.HasPrefix(stderr, warning) {
			t.Errorf("status %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
	})
	t.Run("an unset variable is reported with the server and the variable", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.json")
		if err := os.WriteFile(bad, []byte(`{"mcpServers":{"x":{"command":"a","args":["${DSH_COMPAT_UNSET}"]}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "", "--scripts", scripts, "--mcp-config", bad, "check")
		want := "dsh: --mcp-config " + bad + `: server "x": args[0]: the variable DSH_COMPAT_UNSET is not set (set it, or give a default: ${DSH_COMPAT_UNSET:-default})` + "\n"
		if code != exitViolations || stderr != want {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
	})
}
