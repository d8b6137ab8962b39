package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/js"
)

// TestARunCodeProgramReachesOnlyTheToolsItsTokenCovers: under a code
// executor a token's scopes bound what its run_code programs may call and
// what describe_tools shows it, as they bound tools/list.
func TestARunCodeProgramReachesOnlyTheToolsItsTokenCovers(t *testing.T) {
	withPTC := func(svc *engine.Service) {
		rt, err := js.NewProgramRuntime(js.ProgramOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rt.Close() })
		exec, err := ptc.NewExecutor(svc, rt, ptc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		svc.Global().SetExecutor(exec)
	}
	f := newAuthFixture(t, "run_code\ndescribe_tools\nwhoami\nadmin_* admin\n", withPTC)
	cs := f.connect(t, f.token(t, func(c jwt.MapClaims) { c["scope"] = "tools:read" }))
	ctx := context.Background()

	program := `{"description":"Call both","code":"const out = []; for (const name of ['whoami', 'admin_reset']) { try { await (tools as any)[name]({}); out.push(name + ': ok') } catch (e) { out.push(name + ': ' + String((e as any).message)) } } return out.join('\\n')"}`
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ptc.ToolName, Arguments: json.RawMessage(program)})
	if err != nil {
		t.Fatal(err)
	}
	text := resultText(res)
	if !strings.Contains(text, "whoami: ok") {
		t.Errorf("the program could not call the covered tool:\n%s", text)
	}
	if !strings.Contains(text, `admin_reset: unknown tool "admin_reset"`) {
		t.Errorf("the program reached a tool its token does not cover, or failed otherwise:\n%s", text)
	}

	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: mcp.DescribeToolName, Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !strings.Contains(text, "whoami") || strings.Contains(text, "admin_") {
		t.Errorf("describe_tools shows the token's tools wrongly:\n%s", text)
	}
}

// resultText is a result's text blocks, one a line.
func resultText(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}
