package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCatalogFixtureArg makes the test binary an MCP server on stdio with
// the resources, resource template and prompt the conformance suite's
// resources and prompts scenarios read: the upstream dsh serve imports in
// TestMCPConformanceCatalog.
const mcpCatalogFixtureArg = "mcp-conformance-catalog-fixture"

func init() {
	if len(os.Args) < 2 || os.Args[1] != mcpCatalogFixtureArg {
		return
	}
	srv := sdk.NewServer(&sdk.Implementation{Name: "catalog-fixture", Version: "v1"}, nil)
	contents := func(c *sdk.ResourceContents) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{c}}, nil
		}
	}
	srv.AddResource(&sdk.Resource{URI: "test://static-text", Name: "static-text", MIMEType: "text/plain"},
		contents(&sdk.ResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}))
	srv.AddResource(&sdk.Resource{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png"},
		contents(&sdk.ResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: []byte("\x89PNG\r\n\x1a\n")}))
	srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"uri":%q}`, req.Params.URI)}}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "This is a simple prompt for testing."}}}}, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestMCPConformanceCatalog runs the conformance suite's resources and
// prompts scenarios that apply to a gateway against `dsh serve --http`
// importing a fixture server (the test binary) with the resources, template
// and prompt they read: dsh re-exports them, URIs unchanged. The prompts
// scenarios that get a prompt by its name (prompts-get-*) do not apply:
// dsh serves an imported prompt as NAME__prompt. resources-subscribe and
// resources-unsubscribe do not either: dsh does not offer subscriptions.
// It runs when TestMCPConformance does (DSH_MCP_CONFORMANCE), and skips
// otherwise.
func TestMCPConformanceCatalog(t *testing.T) {
	dir := os.Getenv("DSH_MCP_CONFORMANCE")
	if dir == "" {
		t.Skip("the MCP conformance suite is not set up: set DSH_MCP_CONFORMANCE (see TestMCPConformance)")
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	conformance := filepath.Join(bin, "conformance")
	if _, err := os.Stat(conformance); err != nil {
		t.Skipf("DSH_MCP_CONFORMANCE=%s has no node_modules/.bin/conformance (%v)", dir, err)
	}
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	if _, err := lookPathIn("node", path); err != nil {
		t.Skipf("no node in %s or on PATH", bin)
	}
	url := serveHTTP(t, buildDsh(t), t.TempDir(), "--scripts", t.TempDir(),
		"--mcp", "fx='"+os.Args[0]+"' "+mcpCatalogFixtureArg)
	waitForResource(t, url, "test://static-text")

	for _, sc := range []struct{ name, covers string }{
		{"resources-list", "the imported resources are listed with a URI and a name"},
		{"resources-read-text", "a text resource reads through dsh with its URI and MIME type"},
		{"resources-read-binary", "a blob resource reads through dsh"},
		{"resources-templates-read", "a URI matching an imported template reads through dsh"},
		{"prompts-list", "the imported prompts are listed with a name and a description"},
	} {
		t.Run(sc.name+": "+sc.covers, func(t *testing.T) {
			out, err := runConformance(t, conformance, path, url, sc.name)
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", sc.name, err, out)
			}
			m := mcpSummary.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("conformance %s printed no summary line:\n%s", sc.name, out)
			}
			passed, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			if m[3] != "0" || passed != total || total == 0 {
				t.Fatalf("conformance %s: %s\n%s", sc.name, m[0], out)
			}
		})
	}
}

// waitForResource waits until the server at url lists uri: the imports
// of dsh serve connect after it serves.
func waitForResource(t *testing.T, url, uri string) {
	t.Helper()
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "wait", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if r.URI == uri {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the import's %s was not listed in 60 s", uri)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
