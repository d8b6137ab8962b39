//go:build unix

package tests

import (
	"context"
	"os"
	"os/exec"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpRelayServer is the test binary started under the name mcp-relay-server
// (TestMain): the least gateway the Go SDK makes, for
// BenchmarkGatewayCallGo's floor. It starts the command its first argument
// names (mcp-echo-server) as an SDK client over stdio, and serves one tool,
// echo, that calls the server's echo with the arguments it gets and
// returns its result unchanged: no validation, no pipeline, no log, the
// cost of one more stdio hop with the SDK on both sides.
func mcpRelayServer() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	ctx := context.Background()
	up, err := sdk.NewClient(&sdk.Implementation{Name: "relay", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: exec.Command(os.Args[1])}, nil)
	if err != nil {
		os.Exit(1)
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "relay", Version: "1"}, nil)
	s.AddTool(&sdk.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return up.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
		})
	err = s.Run(ctx, &sdk.StdioTransport{})
	_ = up.Close()
	if err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
