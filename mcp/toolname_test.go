package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/toolnametest"
	"github.com/dsh-go/dsh/mcp"
)

func TestImportedToolNamesOutsideTheRuleAreSkipped(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "test", Version: "v1"}, nil)
	handler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	cases := toolnametest.Cases()
	tooLong := strings.Repeat("b", 62) // conforms alone, not once prefixed
	for _, name := range append([]string{"ok", tooLong}, func() (n []string) {
		for _, c := range cases {
			n = append(n, c.Name)
		}
		return n
	}()...) {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	}
	mem := newImpMemServer(srv)
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "t", Command: "unused"}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	defer client.Close()
	defer mem.closeAll()

	errs := map[string]string{}
	for _, d := range diags {
		errs[d.Tool] = d.Error()
	}
	for _, c := range cases {
		t.Run(c.Label+" is skipped with a diagnostic showing it escaped and bounded", func(t *testing.T) {
			// The diagnostic names the server's tool quoted (without its
			// length), then why: the tool-name rule's error.
			quoted, _, _ := strings.Cut(c.Quoted, " (")
			want := "tool " + quoted + ": not imported: " + c.Want()
			if got := errs[c.Name]; got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
	t.Run("a name that conforms alone but not once prefixed is skipped", func(t *testing.T) {
		want := `tool "` + tooLong + `": not imported: ` + toolnametest.Message(`"t__`+tooLong[:61]+`…" (65 bytes)`)
		if got := errs[tooLong]; got != want {
			t.Errorf("got  %q\nwant %q", got, want)
		}
	})
	t.Run("the conforming tool is imported and served", func(t *testing.T) {
		if got := impToolNames(svc); !slices.Equal(got, []string{"t__ok"}) {
			t.Fatalf("tools %q", got)
		}
		if r := impCall(svc, context.Background(), "t__ok", nil); r.IsError || r.Value != "ok" {
			t.Errorf("call: %s", impJSON(t, r))
		}
	})
	t.Run("there is one diagnostic per skipped tool", func(t *testing.T) {
		if len(diags) != len(cases)+1 {
			t.Errorf("%d diagnostics: %q", len(diags), diags)
		}
	})
}

func TestDiagnosticIsOneBoundedLine(t *testing.T) {
	d := mcp.Diagnostic{Server: "t", Tool: "a\nb", Reason: "cannot connect: \x1b[2J" + strings.Repeat("z", 1<<20)}
	want := `tool "a\nb": cannot connect: \x1b[2J` + strings.Repeat("z", 2048-len("cannot connect: \x1b[2J")) + "…"
	if got := d.Error(); got != want {
		t.Errorf("got %d bytes %.120q", len(got), got)
	}
}
