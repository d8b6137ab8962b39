package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// annotatedServer is an upstream server whose tools carry a title and
// annotations and whose results carry annotated blocks.
func annotatedServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	no := false
	srv.AddTool(&sdk.Tool{
		Name: "note", Title: "Take a note", Description: "Notes.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no, Title: "Note"},
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "for you", Annotations: &sdk.Annotations{Audience: []sdk.Role{"user"}, Priority: 0.5, LastModified: "2025-01-02T03:04:05Z"}},
			&sdk.ImageContent{Data: []byte("PNG"), MIMEType: "image/png", Annotations: &sdk.Annotations{Audience: []sdk.Role{"assistant"}}},
			&sdk.TextContent{Text: "plain"},
		}}, nil
	})
	srv.AddTool(&sdk.Tool{Name: "say", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "one", Annotations: &sdk.Annotations{Priority: 1}},
				&sdk.TextContent{Text: "two"},
			}}, nil
		})
	return srv
}

func TestAnnotationsSurviveTheImportAndTheServe(t *testing.T) {
	mem := newImpMemServer(annotatedServer())
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	defer client.Close()
	defer mem.closeAll()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}

	t.Run("policies see an annotated block as its MCP JSON, text included", func(t *testing.T) {
		got := impJSON(t, impCall(svc, context.Background(), "up__note", nil))
		want := `{"isError":false,"value":[{"type":"text","text":"for you","annotations":{"audience":["user"],"lastModified":"2025-01-02T03:04:05Z","priority":0.5}},` +
			`{"type":"image","mimeType":"image/png","data":"UE5H","annotations":{"audience":["assistant"]}},{"type":"text","text":"plain"}],` +
			`"content":[{"type":"text","text":"for you","annotations":{"audience":["user"],"lastModified":"2025-01-02T03:04:05Z","priority":0.5}},` +
			`{"type":"image","mimeType":"image/png","data":"UE5H","annotations":{"audience":["assistant"]}},{"type":"text","text":"plain"}]}`
		if got != want {
			t.Errorf("result\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("an annotated text block still counts as text for the value", func(t *testing.T) {
		got := impJSON(t, impCall(svc, context.Background(), "up__say", nil))
		want := `{"isError":false,"value":"one\ntwo","content":[{"type":"text","text":"one","annotations":{"priority":1}},{"type":"text","text":"two"}]}`
		if got != want {
			t.Errorf("result\n%s\nwant\n%s", got, want)
		}
	})

	cs := serveEngine(t, svc).connect(t, legacy, nil)
	t.Run("the served tool keeps its title and annotations", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, tool := range res.Tools {
			ann, _ := json.Marshal(tool.Annotations)
			got[tool.Name] = tool.Title + " " + string(ann)
		}
		want := map[string]string{
			"up__note": `Take a note {"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true,"title":"Note"}`,
			"up__say":  ` null`,
		}
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %q, want %q", name, got[name], w)
			}
		}
	})
	t.Run("the served blocks are the upstream blocks, annotations included", func(t *testing.T) {
		r := call(t, cs, "up__note", `{}`)
		got, _ := json.Marshal(r.Content)
		want := `[{"type":"text","text":"for you","annotations":{"audience":["user"],"lastModified":"2025-01-02T03:04:05Z","priority":0.5}},` +
			`{"type":"image","mimeType":"image/png","data":"UE5H","annotations":{"audience":["assistant"]}},{"type":"text","text":"plain"}]`
		if string(got) != want {
			t.Errorf("content\n%s\nwant\n%s", got, want)
		}
	})
}
