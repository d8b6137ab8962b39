package mcp_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// startEchoServer is a server with one tool, echo, inside the subset.
func startEchoServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "start-test", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var in struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	return srv
}

// startReport is one call of Start's report.
type startReport struct {
	server string
	diags  []mcp.Diagnostic
}

func TestStart(t *testing.T) {
	t.Run("Start returns before a server answers, and reports it once it connects", func(t *testing.T) {
		mem := newImpMemServer(startEchoServer())
		mem.held.Store(true)
		defer mem.closeAll()
		svc := engine.New()
		swaps := impSwaps(t, svc)
		reports := make(chan startReport, 4)
		client := mcp.Start(svc, []mcp.ServerSpec{{Name: "late", Command: "unused"}}, mcp.Options{Dial: mem.dial, MinBackoff: 1},
			func(server string, diags []mcp.Diagnostic) { reports <- startReport{server, diags} })
		defer client.Close()

		<-mem.dialed // the attempt has begun, and waits for its release
		select {
		case r := <-reports:
			t.Fatalf("reported %+v before the server answered", r)
		default:
		}
		if names := impToolNames(svc); len(names) != 0 {
			t.Errorf("tools %v before the server answered, want none", names)
		}
		close(mem.release)
		var r startReport
		select {
		case r = <-reports:
		case <-time.After(30 * time.Second):
			t.Fatal("no report once the server was released")
		}
		if r.server != "late" || len(r.diags) != 0 {
			t.Errorf("report %+v, want late without diagnostics", r)
		}
		<-swaps // the report follows the registration's swap
		if names := impToolNames(svc); !slices.Equal(names, []string{"late__echo"}) {
			t.Errorf("tools %v, want late__echo", names)
		}
		res := impCall(svc, context.Background(), "late__echo", impObj(t, `{"text":"hi"}`))
		if got := impJSON(t, res); got != `{"isError":false,"value":"echo: hi","content":[{"type":"text","text":"echo: hi"}]}` {
			t.Errorf("result %s", got)
		}
	})
	t.Run("a server not reached is reported as Connect would return it", func(t *testing.T) {
		reports := make(chan startReport, 4)
		dial := func(context.Context, mcp.ServerSpec) (sdk.Transport, error) {
			return nil, context.DeadlineExceeded
		}
		client := mcp.Start(engine.New(), []mcp.ServerSpec{{Name: "gone", URL: "http://127.0.0.1:1"}}, mcp.Options{Dial: dial, MinBackoff: time.Hour},
			func(server string, diags []mcp.Diagnostic) { reports <- startReport{server, diags} })
		defer client.Close()
		r := <-reports
		want := []mcp.Diagnostic{{Server: "gone", Reason: "cannot connect: context deadline exceeded"}}
		if r.server != "gone" || !slices.Equal(r.diags, want) {
			t.Errorf("report %+v, want gone with %+v", r, want)
		}
	})
	t.Run("Close ends a first attempt still waiting, without a report", func(t *testing.T) {
		mem := newImpMemServer(startEchoServer())
		mem.held.Store(true)
		defer mem.closeAll()
		reports := make(chan startReport, 4)
		client := mcp.Start(engine.New(), []mcp.ServerSpec{{Name: "never", Command: "unused"}}, mcp.Options{Dial: mem.dial},
			func(server string, diags []mcp.Diagnostic) { reports <- startReport{server, diags} })
		<-mem.dialed
		if err := client.Close(); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-reports:
			t.Errorf("reported %+v for an attempt Close ended", r)
		default:
		}
	})
}
