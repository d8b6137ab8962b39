package mcp_test

//lint:file-ignore SA1019 roots/list, deprecated as of protocol 2026-07-28, is the request the test floods dsh with.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// rewriting serves h, rewriting the body of each POST's response with
// replace (a recorder holds it whole: POST streams end with their call).
func rewriting(h http.Handler, replace func(string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := replace(rec.Body.String())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = io.WriteString(w, body)
	})
}

// rewritingStream serves h, rewriting each write of a GET's response (an
// event stream: the SDK writes an event at once) with replace.
func rewritingStream(h http.Handler, replace func(string) string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			h.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(&rewriter{ResponseWriter: w, replace: replace}, r)
	})
}

type rewriter struct {
	http.ResponseWriter
	replace func(string) string
}

func (w *rewriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.ResponseWriter, w.replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *rewriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// httpTransports are the HTTP transports an import reaches a server by.
var httpTransports = []struct {
	name    string
	sse     bool
	handler func(*sdk.Server, bool) http.Handler // the bool: JSON responses
}{
	{"streamable HTTP", false, func(srv *sdk.Server, json bool) http.Handler {
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{JSONResponse: json})
	}},
	{"legacy SSE", true, func(srv *sdk.Server, _ bool) http.Handler {
		return sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	}},
}

func TestTaskSupportOverHTTP(t *testing.T) {
	cases := []struct {
		name      string
		transport int
		json      bool
	}{
		{"over streamable HTTP in an event stream", 0, false},
		{"over streamable HTTP in a JSON body", 0, true},
		{"over legacy SSE", 1, false},
	}
	for _, c := range cases {
		tr := httpTransports[c.transport]
		t.Run("a tool requiring tasks listed "+c.name+" is a diagnostic, not a tool", func(t *testing.T) {
			srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
			for _, name := range []string{"plain", "needs_task"} {
				srv.AddTool(&sdk.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
					func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
						return &sdk.CallToolResult{}, nil
					})
			}
			replace := func(body string) string {
				return strings.ReplaceAll(body, `"name":"needs_task"`, `"execution":{"taskSupport":"required"},"name":"needs_task"`)
			}
			var h http.Handler
			if tr.sse {
				h = rewritingStream(tr.handler(srv, c.json), replace)
			} else {
				h = rewriting(tr.handler(srv, c.json), replace)
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			svc := engine.New()
			client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "h", URL: hs.URL, SSE: tr.sse}}, mcp.Options{})
			defer client.Close()
			want := `tool "needs_task": not imported: it requires task-augmented execution (execution.taskSupport "required"), which dsh does not support`
			if len(diags) != 1 || diags[0].Error() != want {
				t.Errorf("diagnostics %v, want %q", diags, want)
			}
			if names := importedNames(svc); !names["h__plain"] || names["h__needs_task"] {
				t.Errorf("tools %v, want h__plain alone", names)
			}
		})
	}
}

func TestAnHTTPServerSendingRequestsWithoutReadingTheAnswersIsBounded(t *testing.T) {
	for _, tr := range httpTransports {
		t.Run("over "+tr.name, func(t *testing.T) {
			testHTTPFlood(t, tr.handler, tr.sse)
		})
	}
}

func testHTTPFlood(t *testing.T, handler func(*sdk.Server, bool) http.Handler, sse bool) {
	const max, sent = 4, 200
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()

	var asked, returned atomic.Int64
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "flood", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var wg sync.WaitGroup
			for range sent {
				wg.Add(1)
				go func() {
					defer wg.Done()
					asked.Add(1)
					_, _ = req.Session.ListRoots(ctx, nil)
					returned.Add(1)
				}()
			}
			wg.Wait()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "flooded"}}}, nil
		})
	h := handler(srv, false)
	// The server does not read dsh's answers: a POST carrying one waits
	// for the release.
	var answers atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				ID     any    `json:"id"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "" && msg.ID != nil {
				answers.Add(1)
				<-release
			}
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	defer free() // before hs.Close: the held POSTs end

	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "h", URL: hs.URL, SSE: sse}},
		mcp.Options{MaxPendingRequests: max})
	defer client.Close()
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	result := make(chan *engine.Result, 1)
	go func() { result <- impCall(svc, context.Background(), "h__flood", nil) }()

	waitFor(t, "the server to send its requests", func() bool { return asked.Load() == sent })
	// Wait for the answers reaching the server to stop moving.
	last, still := int64(-1), 0
	for still < 5 {
		time.Sleep(100 * time.Millisecond)
		if n := answers.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	t.Run("dsh holds at most the cap of the server's requests", func(t *testing.T) {
		if n := answers.Load(); n == 0 || n > max {
			t.Errorf("%d answers wait at the server, want 1 to %d", n, max)
		}
	})
	free()
	t.Run("once the server reads, every request is answered and the call ends", func(t *testing.T) {
		waitFor(t, "every request to be answered", func() bool { return returned.Load() == sent })
		select {
		case r := <-result:
			if got := impJSON(t, r); got != `{"isError":false,"value":"flooded","content":[{"type":"text","text":"flooded"}]}` {
				t.Errorf("result %s", got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the call did not end")
		}
	})
}
