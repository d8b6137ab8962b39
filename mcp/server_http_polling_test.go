package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// newGateServer serves one tool, "gate", whose calls answer "opened" once
// release is closed.
func newGateServer(t *testing.T, release <-chan struct{}) *mcp.Server {
	t.Helper()
	svc := engine.New()
	def, err := engine.DefineTool(engine.ToolOptions[any, any]{
		Name:   "gate",
		Output: dsl.String(),
		Render: renderString,
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			select {
			case <-release:
				return "opened", nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: engine.NewAgent("main", nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// request sends one HTTP request of session (with the protocol version
// header version, when set) and returns the response and its body.
func request(t *testing.T, method, url, session, version, lastEventID, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

func TestHTTPPolling(t *testing.T) {
	const callGate = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gate","arguments":{}}}`
	cases := []struct {
		name      string
		pollAfter time.Duration
		session   string // the version the client initializes with
		header    string // the version its call's header names
		polled    bool
	}{
		{"a call past the poll period has its stream closed with a retry delay, and the client resumes it to get the result",
			10 * time.Millisecond, "2025-11-25", "2025-11-25", true},
		{"a call whose header names an older version than its session's is primed and polled as its session's calls are",
			10 * time.Millisecond, "2025-11-25", "2025-03-26", true},
		{"a call of a session on 2025-06-18, whose streams cannot be resumed, keeps its stream until the result",
			10 * time.Millisecond, "2025-06-18", "2025-06-18", false},
		{"without a poll period a call keeps its stream until the result",
			0, "2025-11-25", "2025-11-25", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var once sync.Once
			open := func() { once.Do(func() { close(release) }) }
			srv := newGateServer(t, release)
			hs := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{PollAfter: c.pollAfter}))
			defer hs.Close()
			res, _ := request(t, http.MethodPost, hs.URL, "", "", "",
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+c.session+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			session := res.Header.Get("Mcp-Session-Id")
			if session == "" {
				t.Fatal("no session id")
			}
			defer request(t, http.MethodDelete, hs.URL, session, c.session, "", "")
			request(t, http.MethodPost, hs.URL, session, c.session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

			if !c.polled {
				// The gate opens well after the poll period (if any):
				// the call must still answer on its own stream.
				time.AfterFunc(10*c.pollAfter+20*time.Millisecond, open)
				_, body := request(t, http.MethodPost, hs.URL, session, c.header, "", callGate)
				if !strings.Contains(body, "opened") || strings.Contains(body, "event: close") {
					t.Fatalf("body %q, want the result and no close event", body)
				}
				return
			}
			// The gate stays shut until the stream has been closed (or,
			// should the server never close it, for 10 s, which fails
			// the test below rather than hanging it).
			stop := time.AfterFunc(10*time.Second, open)
			defer stop.Stop()
			_, body := request(t, http.MethodPost, hs.URL, session, c.header, "", callGate)
			open()
			if !strings.HasPrefix(body, "event: prime\nid: ") {
				t.Fatalf("body %q, want a priming event first", body)
			}
			if want := "event: close\nretry: 1000\n"; !strings.Contains(body, want) {
				t.Fatalf("body %q, want a close event with a retry delay (%q)", body, want)
			}
			if strings.Contains(body, "opened") {
				t.Fatalf("body %q: the result came before the gate opened", body)
			}
			primed := strings.TrimPrefix(strings.SplitN(body, "\n", 3)[1], "id: ")
			_, replay := request(t, http.MethodGet, hs.URL, session, c.header, primed, "")
			if !strings.Contains(replay, "opened") {
				t.Fatalf("resumed after %s: %q, want the result", primed, replay)
			}
		})
	}
}

func TestTheSDKClientResumesAPolledCall(t *testing.T) {
	// The gate opens when the client comes back for the call's result
	// (or, should the server never close the call's stream, after 10 s,
	// which fails the test below rather than hanging it).
	release := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	stop := time.AfterFunc(10*time.Second, open)
	defer stop.Stop()
	srv := newGateServer(t, release)
	var resumed atomic.Bool // a GET named the last event seen
	h := srv.HTTPHandler(mcp.HTTPOptions{PollAfter: 10 * time.Millisecond})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumed.Store(true)
			open()
		}
		h.ServeHTTP(w, r)
	}))
	defer hs.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// A ceiling, not a budget: a result lost on the way fails the test
	// instead of holding the package to its timeout.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "gate", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !resumed.Load() {
		t.Fatal("the client never resumed the call's stream: it was not polled")
	}
	if len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "opened" {
		t.Fatalf("result %+v, want opened", res.Content)
	}
}
