package mcp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

func TestConfigPrefix(t *testing.T) {
	tests := []struct {
		name, config string
		bare         bool
		wantErr      string
	}{
		{`"prefix": false serves the names bare`, `{"mcpServers":{"a":{"command":"x","prefix":false}}}`, true, ""},
		{`"prefix": true keeps NAME__`, `{"mcpServers":{"a":{"command":"x","prefix":true}}}`, false, ""},
		{"without prefix the names keep NAME__", `{"mcpServers":{"a":{"command":"x"}}}`, false, ""},
		{"a prefix as a string is refused", `{"mcpServers":{"a":{"command":"x","prefix":"gh"}}}`, false,
			`server "a": "prefix" must be true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, ok := oneSpec(t, tt.config, tt.wantErr)
			if ok && spec.Bare != tt.bare {
				t.Errorf("spec %+v, want Bare %v", spec, tt.bare)
			}
		})
	}
}

func TestABareServerIsServedUnderItsOwnNames(t *testing.T) {
	up := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "v1"}, nil)
	for _, name := range []string{"echo", "taken", "a.b"} {
		up.AddTool(&sdk.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "from " + name}}}, nil
			})
	}
	svc := engine.New()
	own, err := engine.DefineTool(engine.ToolOptions[any, string]{Name: "taken", Description: "dsh's own",
		Output:  dsl.String(),
		Render:  func(_ any, out string) ([]engine.Block, error) { return []engine.Block{engine.Text(out)}, nil },
		Execute: func(context.Context, any, *engine.Run) (string, error) { return "own", nil }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(own); err != nil {
		t.Fatal(err)
	}
	mem := newImpMemServer(up)
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "s", Command: "unused", Bare: true}},
		mcp.Options{Dial: mem.dial, MinBackoff: 1})
	t.Cleanup(func() {
		_ = client.Close()
		mem.closeAll()
	})
	var names []string
	for _, d := range svc.Global().Definitions(nil) {
		names = append(names, d.Name)
	}
	for _, want := range []string{"echo", "a_b", "taken"} {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+want+" ") {
			t.Errorf("the tools are %v, want %q among them", names, want)
		}
	}
	for _, name := range names {
		if strings.HasPrefix(name, "s__") {
			t.Errorf("the bare server's tool is served as %q", name)
		}
	}
	if len(diags) != 1 || diags[0].Tool != "taken" || !strings.Contains(diags[0].Error(), "already registered") {
		t.Errorf("diagnostics %v, want one for the tool that collides with dsh's own \"taken\"", diags)
	}
}
