package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

// mcpCatalogServerArg makes the test binary an MCP server on stdio with a
// resource, a resource template and a prompt, and no tools.
const mcpCatalogServerArg = "mcp-test-server-catalog"

func init() {
	if len(os.Args) < 2 || os.Args[1] != mcpCatalogServerArg {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "cli-test-catalog", Version: "v1"}, nil)
	srv.AddResource(&sdk.Resource{URI: "memo://notes", Name: "notes.txt", MIMEType: "text/plain"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "memo://notes", MIMEType: "text/plain", Text: "the notes"}}}, nil
		})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "memo://items/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item " + req.Params.URI}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + req.Params.Arguments["who"] + "."}},
			}}, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestServeReexportsAnImportsResourcesAndPrompts serves an import with a
// resource, a template and a prompt: they reach the client, namespaced,
// with list_changed once the import connects, and read and get through dsh.
func TestServeReexportsAnImportsResourcesAndPrompts(t *testing.T) {
	changed := make(chan struct{}, 16)
	cs, stderr, wait := serveInProcess(t, []string{"--scripts", t.TempDir(), "--memory-limit", "0",
		"--mcp", "cat='" + os.Args[0] + "' " + mcpCatalogServerArg, "serve"}, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx := context.Background()
	resources := func(t *testing.T) []string {
		t.Helper()
		var out []string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r.Name+" "+r.URI)
		}
		return out
	}

	t.Run("the import's resources arrive with list_changed, names mapped and URIs unchanged", func(t *testing.T) {
		want := []string{"cat__notes_txt memo://notes"}
		for !slices.Equal(resources(t), want) {
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatalf("no resources/list_changed brought %q; resources %q, stderr %q", want, resources(t), stderr)
			}
		}
	})
	t.Run("a resource and a template's URI read through dsh", func(t *testing.T) {
		for uri, want := range map[string]string{"memo://notes": "the notes", "memo://items/7": "item memo://items/7"} {
			r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatalf("reading %s: %v", uri, err)
			}
			if len(r.Contents) != 1 || r.Contents[0].Text != want {
				t.Errorf("reading %s: %+v, want %q", uri, r.Contents, want)
			}
		}
	})
	t.Run("the prompt is got as cat__greet", func(t *testing.T) {
		r, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "cat__greet", Arguments: map[string]string{"who": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Messages) != 1 || r.Messages[0].Content.(*sdk.TextContent).Text != "Say hello to Ada." {
			t.Errorf("messages %+v, want Say hello to Ada.", r.Messages)
		}
	})

	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
}

// serveInProcess runs dsh with args (ending in serve) in this process on
// pipes and connects an SDK client with opts to it. wait closes the client
// and returns dsh's exit status.
func serveInProcess(t *testing.T, args []string, opts *sdk.ClientOptions) (cs *sdk.ClientSession, stderr *syncbuf.Buffer, wait func() int) {
	t.Helper()
	return serveInProcessAs(t, args, opts, nil)
}

// serveInProcessAs is serveInProcess with the client session's options
// (a protocol version).
func serveInProcessAs(t *testing.T, args []string, opts *sdk.ClientOptions, sessOpts *sdk.ClientSessionOptions) (cs *sdk.ClientSession, stderr *syncbuf.Buffer, wait func() int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr = &syncbuf.Buffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), args, inR, outW, stderr)
		outW.Close()
	}()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).
		Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, sessOpts)
	if err != nil {
		t.Fatal(err)
	}
	return cs, stderr, func() int {
		if err := cs.Close(); err != nil {
			t.Error(err)
		}
		return <-code
	}
}
