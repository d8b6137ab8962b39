package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpEchoServer is an MCP server on standard input and output with one
// tool, echo, which returns its text argument. The test binary runs it when
// started under the name mcp-echo-server (TestMain).
func mcpEchoServer() {
	type args struct {
		Text string `json:"text"`
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "echo", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the text."}, func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
	})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// An imported stdio server is dsh's own child. dsh is a child subreaper,
// and after a process.run call it kills the children no call marked (the
// orphans of programs it adopted): an imported server must not be taken
// for one, or every command line that leaves a process behind would kill
// the MCP servers (seen: "MCP server disconnected … waitid: no child
// processes").
func TestAnImportedServerOutlivesAProgramsLeftovers(t *testing.T) {
	bin := buildDsh(t)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(dir, "mcp-echo-server")
	if err := os.Symlink(exe, server); err != nil {
		t.Fatal(err)
	}
	scripts := filepath.Join(dir, "scripts")
	if err := os.MkdirAll(scripts, 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := `import { defineTool, tools } from "dsh";
import { run } from "dsh/process";
tools.register(defineTool({
  name: "leave",
  description: "Start a process that outlives the call.",
  parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    const r = await run(["sh", "-c", "(setsid sleep 30 &); echo started"], { signal: exec.signal });
    return r.stdout.trim();
  },
}));
`
	if err := os.WriteFile(filepath.Join(scripts, "leave.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := `[{"id":"a","name":"leave","arguments":{}},{"id":"b","name":"leave","arguments":{}},{"id":"c","name":"e__echo","arguments":{"text":"still here"}}]`
	if err := os.WriteFile(filepath.Join(dir, "calls.json"), []byte(calls), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--scripts", scripts, "--approve", "allow", "--max-parallel", "1", "--mcp", "e="+server, "run", "--json", "calls.json")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dsh: %v\n%s\n%s", err, out, stderr.String())
	}
	if !strings.Contains(string(out), `"callId":"c","result":{"isError":false`) || !strings.Contains(string(out), "still here") {
		t.Errorf("the imported tool's call failed:\n%s", out)
	}
	if strings.Contains(stderr.String(), "disconnected") {
		t.Errorf("the imported server was killed:\n%s", stderr.String())
	}
}
