package mcp_test

//lint:file-ignore SA1019 the test is about MCP logging, deprecated as of protocol 2026-07-28 and still used.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/mcp"
)

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestUpstreamLogsReachTheCaller(t *testing.T) {
	for _, over := range []string{"in memory", "over streamable HTTP"} {
		t.Run(over, func(t *testing.T) { testUpstreamLogs(t, over == "in memory") })
	}
}

func testUpstreamLogs(t *testing.T, inMemory bool) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	long := strings.Repeat("é", 20<<10) // 40 KiB
	srv.AddTool(&sdk.Tool{Name: "chatty", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			for _, p := range []*sdk.LoggingMessageParams{
				{Level: "debug", Logger: "db", Data: "not asked for"},
				{Level: "info", Logger: "db", Data: "connecting"},
				{Level: "warning", Data: map[string]any{"rows": 3}},
				{Level: "error", Data: long},
			} {
				if err := req.Session.Log(ctx, p); err != nil {
					return nil, err
				}
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	spec, opts := mcp.ServerSpec{Name: "up", Command: "unused"}, mcp.Options{MinBackoff: 1}
	if inMemory {
		mem := newImpMemServer(srv)
		defer mem.closeAll()
		opts.Dial = mem.dial
	} else {
		hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		defer hs.Close()
		spec = mcp.ServerSpec{Name: "up", URL: hs.URL}
	}

	var out syncbuf.Buffer
	logger := slog.New(mcp.LogHandler(slog.NewJSONHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug})))
	svc := engine.New()
	opts.Logger = logger
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec}, opts)
	defer client.Close()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}

	var mu sync.Mutex
	var heard []string
	cs := serveEngine(t, svc).connect(t, legacy, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			data, _ := json.Marshal(req.Params.Data)
			mu.Lock()
			heard = append(heard, string(req.Params.Level)+" "+string(data))
			mu.Unlock()
		},
	})
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if r := call(t, cs, "up__chatty", `{}`); text(r) != "done" {
		t.Fatalf("result %q", text(r))
	}
	cut := strings.Repeat("é", 8<<10) + "… (truncated)" // 16 KiB
	t.Run("the calling client hears the server's log lines as the call's own", func(t *testing.T) {
		want := []string{
			`info {"logger":"db","message":"connecting","server":"up"}`,
			`warning {"data":{"rows":3},"message":"MCP server log","server":"up"}`,
			`error {"message":"` + cut + `","server":"up"}`,
		}
		waitFor(t, "three log notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(heard) >= 3 })
		mu.Lock()
		defer mu.Unlock()
		if len(heard) != len(want) {
			t.Fatalf("heard %d lines, want %d", len(heard), len(want))
		}
		for i := range want {
			if heard[i] != want[i] {
				t.Errorf("line %d (%d bytes): %.200s…\nwant (%d bytes): %.200s…", i, len(heard[i]), heard[i], len(want[i]), want[i])
			}
		}
	})
	t.Run("dsh asked the server for info and above", func(t *testing.T) {
		if strings.Contains(out.String(), "not asked for") {
			t.Errorf("dsh's log has the server's debug line:\n%s", out.String())
		}
	})
	t.Run("dsh's own log has them, with the server's name", func(t *testing.T) {
		if !strings.Contains(out.String(), `"level":"INFO","msg":"connecting","server":"up","logger":"db"}`) {
			t.Errorf("dsh's log:\n%s", out.String())
		}
	})
	t.Run("a log line outside any call goes to dsh's log alone", func(t *testing.T) {
		var ss *sdk.ServerSession
		for ss = range srv.Sessions() {
			break
		}
		// Bounded: a line that cannot be sent fails the test instead of
		// holding the package to its timeout.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := ss.Log(ctx, &sdk.LoggingMessageParams{Level: "warning", Data: "idle"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the idle line in dsh's log", func() bool {
			return strings.Contains(out.String(), `"level":"WARN","msg":"idle","server":"up"}`)
		})
		mu.Lock()
		defer mu.Unlock()
		if len(heard) != 3 {
			t.Errorf("the client heard %d lines, want 3: %q", len(heard), heard)
		}
	})
}
