package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerArg makes the test binary an MCP server on stdio, for --mcp.
const mcpServerArg = "mcp-test-server"

func init() {
	if len(os.Args) < 2 || os.Args[1] != mcpServerArg {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-test", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	srv.AddTool(&sdk.Tool{Name: "remote", InputSchema: json.RawMessage(`{"type":"object","properties":{"v":{"$ref":"https://example.com/v.json"}}}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestMCPImport(t *testing.T) {
	scripts := t.TempDir()
	server := "t='" + os.Args[0] + "' " + mcpServerArg
	config := filepath.Join(t.TempDir(), "mcp.json")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"t": map[string]any{"command": os.Args[0], "args": []string{mcpServerArg}}}})
	if err := os.WriteFile(config, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	const remoteDiag = `mcp:t: tool "remote": input schema: it refers to "https://example.com/v.json", outside the schema: dsh loads no schema from a network or a file` + "\n"

	t.Run("a call reaches the imported server's tool", func(t *testing.T) {
		code, stdout, stderr := run(t, "", "--scripts", scripts, "--json", "--mcp", server, "call", "t__echo", `{"text":"hi"}`)
		if code != 0 || !strings.Contains(stdout, `"value":"echo: hi","content":[{"type":"text","text":"echo: hi"}]`) || stderr != remoteDiag {
			t.Errorf("status %d\nstdout %s\nstderr %s", code, stdout, stderr)
		}
	})
	t.Run("check reports the tools whose schemas do not compile as diagnostics", func(t *testing.T) {
		code, stdout, _ := run(t, "", "--scripts", scripts, "--mcp-config", config, "check")
		if code != exitViolations || !strings.HasPrefix(stdout, remoteDiag) {
			t.Errorf("status %d, stdout %q", code, stdout)
		}
	})
	t.Run("a malformed --mcp is a usage error", func(t *testing.T) {
		code, _, stderr := run(t, "", "--scripts", scripts, "--mcp", "a.b=x", "check")
		want := `dsh: --mcp a.b=x: the server name "a.b" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)` + "\n"
		if code != exitTrouble || !strings.HasPrefix(stderr, want) {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
	})
	t.Run("a missing --mcp-config is reported", func(t *testing.T) {
		code, _, stderr := run(t, "", "--scripts", scripts, "--mcp-config", "missing.json", "check")
		if code != exitViolations || stderr != "dsh: --mcp-config missing.json: no such file or directory\n" {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
	})
	t.Run("a server named twice is reported", func(t *testing.T) {
		code, _, stderr := run(t, "", "--scripts", scripts, "--mcp-config", config, "--mcp", "t=x", "check")
		if code != exitViolations || stderr != "dsh: MCP server \"t\" is declared twice\n" {
			t.Errorf("status %d, stderr %q", code, stderr)
		}
	})
}
