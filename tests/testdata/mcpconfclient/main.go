// Command mcpconfclient is the client command of the MCP conformance
// suite's client scenarios for dsh's import client
// (TestMCPConformanceClient in tests/mcp_conformance_client_test.go):
//
//	conformance client --command "mcpconfclient DSH" --scenario NAME
//
// The suite starts its scenario's server, appends its URL to the command
// and names the scenario in MCP_CONFORMANCE_SCENARIO. This program drives
// dsh against that server, imported as s:
//
//   - initialize: `dsh --mcp s=URL schemas` (initialize, then tools/list);
//   - tools_call: `dsh --mcp s=URL call s__add_numbers {"a":5,"b":3}`;
//   - sse-retry: `dsh --mcp s=URL call s__test_reconnection`;
//   - elicitation-sep1034-client-defaults: `dsh --mcp s=URL serve` on
//     stdio, with this program as its client (MCP Go SDK), calling
//     s__test_client_elicitation_defaults and accepting the form it is
//     asked to fill without filling anything in: dsh's import client must
//     answer the suite's server with the form's defaults.
//
// The package lives under testdata: it is not part of ./..., and the test
// builds it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mcpconfclient DSH URL (the scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	if err := client(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpconfclient:", err)
		os.Exit(1)
	}
}

// client runs dsh's import client against the suite's server at url for
// scenario.
func client(scenario, dsh, url string) error {
	run := func(args ...string) error {
		cmd := exec.Command(dsh, append([]string{"--mcp", "s=" + url}, args...)...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		return cmd.Run()
	}
	switch scenario {
	case "initialize":
		return run("schemas")
	case "tools_call":
		return run("call", "s__add_numbers", `{"a":5,"b":3}`)
	case "sse-retry":
		return run("call", "s__test_reconnection")
	case "elicitation-sep1034-client-defaults":
		return elicitDefaults(dsh, url)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// elicitDefaults serves the suite's server through `dsh serve` and calls
// its tool, accepting every form unchanged: an accept with no content.
func elicitDefaults(dsh, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpfixture", Version: "1.0.0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	cmd := exec.Command(dsh, "--mcp", "s="+url, "serve")
	cmd.Stderr = os.Stderr
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	const tool = "s__test_client_elicitation_defaults"
	// dsh serve answers at once and lists an import's tools when it has
	// connected: wait for the tool.
	for {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dsh serve never listed %s", tool)
		case <-time.After(50 * time.Millisecond):
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return err
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			fmt.Println(t.Text)
		}
	}
	if res.IsError {
		return fmt.Errorf("%s failed", tool)
	}
	return nil
}
