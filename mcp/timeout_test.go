package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// hangServer has one tool, hang, that answers only when its request is
// cancelled, which it reports on cancelled.
func hangServer(cancelled chan<- struct{}) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "hang-test", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hang", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			<-ctx.Done()
			cancelled <- struct{}{}
			return nil, ctx.Err()
		})
	return srv
}

func TestImportedCallTimeout(t *testing.T) {
	timeoutOf := func(t *testing.T, spec mcp.ServerSpec) time.Duration {
		t.Helper()
		mem := newImpMemServer(hangServer(make(chan struct{}, 1)))
		defer mem.closeAll()
		svc := engine.New()
		client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec}, mcp.Options{Dial: mem.dial})
		defer client.Close()
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		def := svc.Global().Get(spec.Name + "__hang")
		if def == nil {
			t.Fatalf("%s__hang is not registered", spec.Name)
		}
		return def.Timeout
	}
	t.Run("an imported tool has the default call timeout", func(t *testing.T) {
		if got := timeoutOf(t, mcp.ServerSpec{Name: "d", Command: "unused"}); got != mcp.DefaultCallTimeout {
			t.Errorf("timeout %v, want %v", got, mcp.DefaultCallTimeout)
		}
	})
	t.Run("a server's timeout is its tools' timeout", func(t *testing.T) {
		if got := timeoutOf(t, mcp.ServerSpec{Name: "s", Command: "unused", Timeout: 1500 * time.Millisecond}); got != 1500*time.Millisecond {
			t.Errorf("timeout %v, want 1.5s", got)
		}
	})
	t.Run("a call the server never answers times out, and the server hears the cancellation", func(t *testing.T) {
		cancelled := make(chan struct{}, 1)
		mem := newImpMemServer(hangServer(cancelled))
		defer mem.closeAll()
		svc := engine.New()
		svc.Global().OnExecute(engine.TimeoutPolicy())
		client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "h", Command: "unused", Timeout: 50 * time.Millisecond}}, mcp.Options{Dial: mem.dial})
		defer client.Close()
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		// The test's own bound, far past the server's: without the
		// timeout the call ends here, aborted, and the row fails.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r := impCall(svc, ctx, "h__hang", nil)
		want := `{"isError":true,"error":{"message":"tool call timed out after 50ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 50ms"}]}`
		if got := impJSON(t, r); got != want {
			t.Errorf("result %s\nwant   %s", got, want)
		}
		select {
		case <-cancelled:
		case <-time.After(30 * time.Second):
			t.Error("the server's handler was not cancelled")
		}
	})
}
