package tests

//lint:file-ignore SA1019 the fixture server samples, as the conformance suite's tools-call-sampling scenario asks, through the SDK's deprecated (still functional) sampling API.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpCatalogFixture is the command mcp-catalog-fixture (TestMain runs the
// test binary as it when invoked by that name): an MCP server on stdio with
// the resources, resource template and prompt the conformance suite's
// resources and prompts scenarios read, the upstream dsh serve imports in
// TestMCPConformanceCatalog.
func mcpCatalogFixture() {
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
	text := func(s string) *sdk.PromptMessage {
		return &sdk.PromptMessage{Role: "user", Content: &sdk.TextContent{Text: s}}
	}
	srv.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with arguments",
		Arguments: []*sdk.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			a := req.Params.Arguments
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{text("Prompt with arguments: arg1='" + a["arg1"] + "', arg2='" + a["arg2"] + "'")}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt with an embedded resource",
		Arguments: []*sdk.PromptArgument{{Name: "resourceUri", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
				text("Please process the embedded resource above."),
			}}, nil
		})
	srv.AddPrompt(&sdk.Prompt{Name: "test_prompt_with_image", Description: "A prompt with an image"},
		func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{
				{Role: "user", Content: &sdk.ImageContent{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n")}},
				text("Please analyze the image above."),
			}}, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "test_sampling", Description: "Asks the client's model"},
		func(ctx context.Context, req *sdk.CallToolRequest, args struct {
			Prompt string `json:"prompt"`
		}) (*sdk.CallToolResult, any, error) {
			ask := &sdk.CreateMessageParams{MaxTokens: 100,
				Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: args.Prompt}}}}
			var content []sdk.Content
			switch {
			case req.Params.InputResponses != nil: // the retry of a multi-round-trip call
				// The SDK decodes a sampling answer in the shape that
				// carries a list of content blocks.
				switch res := req.Params.InputResponses["sample"].(type) {
				case *sdk.CreateMessageResult:
					content = []sdk.Content{res.Content}
				case *sdk.CreateMessageWithToolsResult:
					content = res.Content
				default:
					return nil, nil, fmt.Errorf("the answer to the sampling request is %T", res)
				}
			case req.Session.InitializeParams().ProtocolVersion >= "2026-07-28":
				// This protocol asks inside the result (SEP-2322).
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": ask}, RequestState: "sample"}, nil, nil
			default:
				res, err := req.Session.CreateMessage(ctx, ask)
				if err != nil {
					return nil, nil, err
				}
				content = []sdk.Content{res.Content}
			}
			var answer *sdk.TextContent
			if len(content) == 1 {
				answer, _ = content[0].(*sdk.TextContent)
			}
			if answer == nil {
				return nil, nil, fmt.Errorf("the model answered %v, not one text", content)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "LLM response: " + answer.Text}}}, nil, nil
		})
	if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// catalogFixturePath returns a path that runs the test binary as
// mcp-catalog-fixture: a link by that name in a temporary directory.
func catalogFixturePath(t *testing.T) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "mcp-catalog-fixture")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
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
	conformance, path := conformanceSuite(t)
	dsh := buildDsh(t)
	fixture := catalogFixturePath(t)
	run := func(t *testing.T, url, name, covers string) {
		t.Run(name+": "+covers, func(t *testing.T) {
			out, err := runConformance(t, conformance, path, url, name)
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", name, err, out)
			}
			m := mcpSummary.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("conformance %s printed no summary line:\n%s", name, out)
			}
			passed, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			if m[3] != "0" || passed != total || total == 0 {
				t.Fatalf("conformance %s: %s\n%s", name, m[0], out)
			}
		})
	}

	t.Run("an import served as NAME__x", func(t *testing.T) {
		url := serveHTTP(t, dsh, t.TempDir(), "--scripts", t.TempDir(),
			"--mcp", "fx='"+fixture+"'")
		waitForResource(t, url, "test://static-text")
		for _, sc := range []struct{ name, covers string }{
			{"resources-list", "the imported resources are listed with a URI and a name"},
			{"resources-read-text", "a text resource reads through dsh with its URI and MIME type"},
			{"resources-read-binary", "a blob resource reads through dsh"},
			{"resources-templates-read", "a URI matching an imported template reads through dsh"},
			{"prompts-list", "the imported prompts are listed with a name and a description"},
		} {
			run(t, url, sc.name, sc.covers)
		}
	})

	// A config entry with "prefix": false serves the server's names as
	// they are, so the scenarios that name a prompt or a tool by its bare
	// name pass through the gateway too.
	t.Run(`an import with "prefix": false`, func(t *testing.T) {
		dir := t.TempDir()
		config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"fx": map[string]any{"command": fixture, "prefix": false},
		}})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(file, config, 0o600); err != nil {
			t.Fatal(err)
		}
		url := serveHTTP(t, dsh, dir, "--scripts", t.TempDir(), "--mcp-config", file)
		waitForResource(t, url, "test://static-text")
		for _, sc := range []struct{ name, covers string }{
			{"prompts-get-simple", "a prompt without arguments is got through dsh"},
			{"prompts-get-with-args", "a prompt's arguments reach the server and its text comes back"},
			{"prompts-get-embedded-resource", "a prompt's embedded resource comes back whole"},
			{"prompts-get-with-image", "a prompt's image comes back whole"},
			{"tools-call-sampling", "an imported tool's sampling request reaches the client and its answer the tool"},
		} {
			run(t, url, sc.name, sc.covers)
		}
	})
}

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
