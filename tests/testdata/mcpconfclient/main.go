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
//     answer the suite's server with the form's defaults;
//   - auth/*: `dsh --mcp-config CFG mcp login s`, then
//     `dsh --mcp-config CFG call s__test-tool {}`, CFG naming the server
//     with an "oauth" object (the client of the suite's context, if any,
//     its secret as ${VAR}; a client ID metadata document URL), the
//     tokens stored in a temporary XDG_CONFIG_HOME, and this program as
//     the browser (DSH_OAUTH_BROWSER): run as `mcpconfclient URL`, it
//     follows the authorization URL, which the suite's authorization
//     server redirects at once to dsh's loopback redirect.
//
// The package lives under testdata: it is not part of ./..., and the test
// builds it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) == 2 {
		if err := browse(os.Args[1]); err != nil {
			fmt.Fprintln(os.Stderr, "mcpconfclient (browser):", err)
			os.Exit(1)
		}
		return
	}
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
	if strings.HasPrefix(scenario, "auth/") {
		return authorize(dsh, url)
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

// authorize logs dsh in to the suite's server, then calls its tool with
// the stored tokens.
func authorize(dsh, url string) error {
	dir, err := os.MkdirTemp("", "mcpconfclient-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err != nil {
		return err
	}
	oauth := map[string]any{"clientMetadataUrl": "https://conformance-test.local/client-metadata.json"}
	env := append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "DSH_OAUTH_BROWSER="+self)
	var sc struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &sc); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	if sc.ClientID != "" {
		oauth["clientId"] = sc.ClientID
		if sc.ClientSecret != "" {
			oauth["clientSecret"] = "${MCPCONF_CLIENT_SECRET}"
			env = append(env, "MCPCONF_CLIENT_SECRET="+sc.ClientSecret)
		}
	}
	cfg, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"s": map[string]any{"type": "http", "url": url, "oauth": oauth}}})
	if err != nil {
		return err
	}
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, cfg, 0o600); err != nil {
		return err
	}
	login := exec.Command(dsh, "--mcp-config", path, "mcp", "login", "s")
	login.Stdout, login.Stderr, login.Env = os.Stdout, os.Stderr, env
	if err := login.Run(); err != nil {
		return fmt.Errorf("dsh mcp login s: %v", err)
	}
	// A failed call is a result, not dsh's failure: read it.
	call := exec.Command(dsh, "--json", "--mcp-config", path, "call", "s__test-tool", "{}")
	call.Stderr, call.Env = os.Stderr, env
	out, err := call.Output()
	if err != nil {
		return fmt.Errorf("dsh call s__test-tool: %v", err)
	}
	var batch struct {
		Results []struct {
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &batch); err != nil || len(batch.Results) != 1 || batch.Results[0].Result.IsError {
		return fmt.Errorf("dsh call s__test-tool failed: %s", out)
	}
	return nil
}

// browse is the browser of the auth scenarios: it follows url, whose
// authorization server redirects at once to dsh's loopback redirect.
func browse(url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Request.URL.Redacted(), resp.Status)
	}
	return nil
}
