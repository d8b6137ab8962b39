package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

// mcpGatedServerArg makes the test binary an MCP server on stdio that
// starts serving only once the file named by the next argument exists: an
// import that connects when the test says so.
const mcpGatedServerArg = "mcp-test-server-gated"

func init() {
	if len(os.Args) < 3 || os.Args[1] != mcpGatedServerArg {
		return
	}
	for {
		if _, err := os.Stat(os.Args[2]); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-test-gated", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late echo: " + in.Text}}}, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestServeAnswersBeforeTheImports serves with three imports: one whose
// command never answers, one that connects when the test opens its gate,
// and one whose command does not exist. The client is answered at once;
// each import arrives, or is reported, on its own.
func TestServeAnswersBeforeTheImports(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.js"), []byte(greetPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(t.TempDir(), "gate")
	missing := filepath.Join(t.TempDir(), "no-such-server")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"--scripts", dir, "--memory-limit", "0",
			"--mcp", "never=sleep 1000",
			"--mcp", "late='" + os.Args[0] + "' " + mcpGatedServerArg + " '" + gate + "'",
			"--mcp", "gone='" + missing + "'",
			"serve"}, inR, outW, stderr)
		outW.Close()
	}()
	changed := make(chan struct{}, 16)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	began := time.Now()
	cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	initialized := time.Since(began)
	names := func(t *testing.T) string {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}

	t.Run("initialize is answered while an import never answers", func(t *testing.T) {
		// The import's connect timeout is 60 s; the bound is generous
		// beside the second it should take, and far below that.
		if initialized > 10*time.Second {
			t.Errorf("initialize answered after %v, want at once", initialized)
		}
		if got := names(t); got != "greet" {
			t.Errorf("tools %q, want the plugin's alone while the imports are pending", got)
		}
	})
	t.Run("a server that cannot start is reported on standard error", func(t *testing.T) {
		want := "mcp:gone: cannot connect: fork/exec " + missing + ": no such file or directory\n"
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(stderr.String(), want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q, want %q", stderr, want)
		}
	})
	t.Run("a server that connects later arrives with list_changed and is callable", func(t *testing.T) {
		if err := os.WriteFile(gate, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		for names(t) != "greet late__echo" {
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatalf("no tools/list_changed brought late__echo; tools %q, stderr %q", names(t), stderr)
			}
		}
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "late__echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != "late echo: hi" {
			t.Errorf("result %+v, want late echo: hi", r)
		}
	})

	if err := cs.Close(); err != nil {
		t.Error(err)
	}
	if c := <-code; c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
	t.Run("the import still pending at exit is not reported", func(t *testing.T) {
		if strings.Contains(stderr.String(), "mcp:never") {
			t.Errorf("stderr %q names the pending import", stderr)
		}
	})
}
