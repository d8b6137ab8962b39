package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/oauthtest"
	"github.com/dsh-go/dsh/internal/syncbuf"
)

// testBrowserEnv makes the test binary, run with one URL argument, the
// headless browser of a login (DSH_OAUTH_BROWSER): it follows the URL to
// dsh's loopback redirect.
const testBrowserEnv = "DSH_CLI_TEST_BROWSER"

func init() {
	if os.Getenv(testBrowserEnv) != "1" || len(os.Args) != 2 {
		return
	}
	if err := oauthtest.Follow(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "test browser:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestMCPLogin logs dsh in to an OAuth-protected import with dsh mcp
// login, calls its tool with the stored tokens, and logs out.
func TestMCPLogin(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-test-oauth", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s := oauthtest.New(t, sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config)
	t.Setenv(browserEnv, "")
	up := "up=" + s.RS.URL + "/mcp"
	var all strings.Builder // every output, to look for the tokens in
	call := func(t *testing.T) (int, string, string) {
		t.Helper()
		code, out, errOut := run(t, "", "--mcp", up, "call", "up__echo", `{"text":"hi"}`)
		all.WriteString(out + errOut)
		return code, out, errOut
	}
	const needsLogin = "mcp:up: needs a login: run dsh mcp login up\n"

	t.Run("a call off a terminal that needs a login says so in one line", func(t *testing.T) {
		// The call fails (UNKNOWN_TOOL: the import registered nothing),
		// and dsh's exit status is that of the run, as for any call.
		_, out, errOut := call(t)
		if strings.Count(errOut, needsLogin) != 1 || strings.Count(errOut, "mcp:up") != 1 || !strings.Contains(out, "UNKNOWN_TOOL") {
			t.Errorf("stdout %q, stderr %q, want one line %q", out, errOut, needsLogin)
		}
		if _, n, _ := s.Counts(); n != 0 {
			t.Errorf("%d authorization requests, want none", n)
		}
	})
	t.Run("dsh mcp login authorizes in the browser and stores the tokens, mode 0600", func(t *testing.T) {
		t.Setenv(browserEnv, os.Args[0])
		t.Setenv(testBrowserEnv, "1")
		code, out, errOut := run(t, "", "--mcp", up, "mcp", "login", "up")
		all.WriteString(out + errOut)
		if code != 0 || !strings.HasSuffix(errOut, "dsh: logged in to MCP server up\n") {
			t.Fatalf("status %d, stderr %q", code, errOut)
		}
		files, _ := filepath.Glob(filepath.Join(config, "dsh", "oauth", "*.json"))
		if len(files) != 1 {
			t.Fatalf("token files %v, want one", files)
		}
		if fi, err := os.Stat(files[0]); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("token file mode %v (%v), want 0600", fi.Mode(), err)
		}
	})
	t.Run("a call then uses the stored tokens", func(t *testing.T) {
		code, out, errOut := call(t)
		if code != 0 || !strings.Contains(out, "echo: hi") {
			t.Errorf("status %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("dsh mcp logout forgets them", func(t *testing.T) {
		if code, _, errOut := run(t, "", "--mcp", up, "mcp", "logout", "up"); code != 0 {
			t.Fatalf("status %d, stderr %q", code, errOut)
		}
		if _, _, errOut := call(t); !strings.Contains(errOut, needsLogin) {
			t.Errorf("stderr %q, want %q", errOut, needsLogin)
		}
	})
	t.Run("a login names a server of the flags", func(t *testing.T) {
		code, _, errOut := run(t, "", "--mcp", up, "mcp", "login", "down")
		if want := "no MCP server \"down\": name it with --mcp or --mcp-config"; code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("status %d, stderr %q, want %q", code, errOut, want)
		}
	})
	t.Run("no token appears in any output", func(t *testing.T) {
		for _, tok := range s.Tokens() {
			if strings.Contains(all.String(), tok) {
				t.Errorf("a token is in the output:\n%s", all.String())
			}
		}
	})
}

// TestServeImportNeedsLogin serves, off a terminal, with an import whose
// server asks for a login: dsh says so in one line and serves the rest.
func TestServeImportNeedsLogin(t *testing.T) {
	s := oauthtest.New(t, http.NotFoundHandler())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv(browserEnv, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.js"), []byte(greetPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"--scripts", dir, "--memory-limit", "0", "--mcp", "up=" + s.RS.URL + "/mcp", "serve"}, inR, outW, stderr)
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const line = "mcp:up: needs a login: run dsh mcp login up\n"
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), line) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 || res.Tools[0].Name != "greet" {
		t.Errorf("tools %v, want the plugin's greet", res.Tools)
	}
	_ = cs.Close()
	inW.Close()
	<-code
	if got := stderr.String(); got != line {
		t.Errorf("stderr %q, want the one line %q", got, line)
	}
	if _, n, _ := s.Counts(); n != 0 {
		t.Errorf("%d authorization requests, want none", n)
	}
}
