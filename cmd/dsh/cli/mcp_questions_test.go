package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpAskingServerArg makes the test binary an MCP server on stdio whose
// tools ask dsh during the call: "roots" lists its roots, "ask" elicits a
// name; each returns what it got as JSON, or fails with the error.
const mcpAskingServerArg = "mcp-asking-test-server"

func init() {
	if len(os.Args) < 2 || os.Args[1] != mcpAskingServerArg {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-asking", Version: "v1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	reply := func(v any, err error) (*sdk.CallToolResult, error) {
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
		}
		text, _ := json.Marshal(v)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(text)}}}, nil
	}
	obj := json.RawMessage(`{"type":"object"}`)
	srv.AddTool(&sdk.Tool{Name: "roots", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		//lint:ignore SA1019 the test exercises the roots dsh offers
		return reply(req.Session.ListRoots(ctx, nil))
	})
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: obj}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return reply(req.Session.Elicit(ctx, &sdk.ElicitParams{
			Message:         "Your name?",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
		}))
	})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func TestAnImportedServerAsksThroughTheCLI(t *testing.T) {
	scripts := t.TempDir()
	workspace := t.TempDir()
	server := "t='" + os.Args[0] + "' " + mcpAskingServerArg
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"its roots are the workspace", "", []string{"--workspace", workspace, "call", "t__roots"},
			`"uri":"file://` + workspace + `"`},
		{"without --workspace it is offered no roots", "", []string{"call", "t__roots"}, `{"roots":[]}`},
		{"its question is put to the prompt", "y\nAda\n", []string{"--approve", "prompt", "call", "t__ask"},
			`{"action":"accept","content":{"name":"Ada"}}`},
		{"its question is declined at the prompt", "n\n", []string{"--approve", "prompt", "call", "t__ask"},
			`{"action":"decline"}`},
		{"without the prompt its question gets an error saying why", "", []string{"call", "t__ask"},
			`calling "elicitation/create": dsh cannot forward this elicitation request: no user can be asked: the caller does not take questions (elicitation)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--scripts", scripts, "--json", "--mcp", server}, tc.args...)
			_, stdout, stderr := run(t, tc.stdin, args...)
			// The server's text is a JSON string inside the JSON output.
			if !strings.Contains(strings.ReplaceAll(stdout, `\"`, `"`), tc.want) {
				t.Errorf("stdout %s (stderr %q), want it to hold %s", stdout, stderr, tc.want)
			}
		})
	}
}
