package cli

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28; dsh keeps it through the deprecation window, and this test checks its bound.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A script's progress and log messages reach an MCP client cut to 16 KiB,
// marked (docs/mcp.md), however long the script made them.
func TestServeCutsAScriptsProgressAndLogMessages(t *testing.T) {
	dir := t.TempDir()
	plugin := `import { defineTool, tools, log } from "dsh";
tools.register(defineTool({
  name: "chatty",
  parameters: {},
  output: { schema: { type: "string" }, render: (_a, v) => [{ type: "text", text: v }] },
  async execute(_args, exec) {
    exec.progress(1, 2, "p".repeat(100000));
    log.info("l".repeat(100000));
    return "said";
  },
}));
`
	if err := os.WriteFile(filepath.Join(dir, "chatty.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress, logs []string
	more := make(chan struct{}, 16)
	cs, stderr, wait := serveInProcessAs(t, []string{"--scripts", dir, "--memory-limit", "0", "serve"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			var data struct{ Message string }
			b, _ := json.Marshal(r.Params.Data)
			_ = json.Unmarshal(b, &data)
			mu.Lock()
			logs = append(logs, data.Message)
			mu.Unlock()
			more <- struct{}{}
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, r.Params.Message)
			mu.Unlock()
			more <- struct{}{}
		},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &sdk.CallToolParams{Name: "chatty", Arguments: json.RawMessage(`{}`)}
	params.SetProgressToken("p1")
	if r, err := cs.CallTool(context.Background(), params); err != nil || r.IsError {
		t.Fatalf("the call: %+v, %v", r, err)
	}
	for range 2 {
		<-more
	}
	mu.Lock()
	if want := strings.Repeat("p", 16<<10) + "… (truncated)"; len(progress) != 1 || progress[0] != want {
		t.Errorf("progress messages of %d bytes, want one of %d", lens(progress), len(want))
	}
	if want := strings.Repeat("l", 16<<10) + "… (truncated)"; len(logs) != 1 || logs[0] != want {
		t.Errorf("log messages of %d bytes, want one of %d", lens(logs), len(want))
	}
	mu.Unlock()
	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
}

// lens are the lengths of ss.
func lens(ss []string) (n []int) {
	for _, s := range ss {
		n = append(n, len(s))
	}
	return n
}
