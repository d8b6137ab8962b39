package mcp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/mcp"
)

// post sends one JSON-RPC message and returns the response's body.
func post(t *testing.T, url, session, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
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

func TestHTTPStreamsAreResumable(t *testing.T) {
	cases := []struct {
		name   string
		opts   mcp.HTTPOptions
		primed bool
	}{
		{"by default a stream starts with a priming event, numbers its events, and replays them", mcp.HTTPOptions{}, true},
		{"with no replay store its events have no ids", mcp.HTTPOptions{ReplayBytes: -1}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			hs := httptest.NewServer(f.srv.HTTPHandler(c.opts))
			defer hs.Close()
			res, _ := post(t, hs.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
			session := res.Header.Get("Mcp-Session-Id")
			if session == "" {
				t.Fatal("no session id")
			}
			defer func() { // end the session, which would outlive the test
				req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				req.Header.Set("Mcp-Session-Id", session)
				if res, err := http.DefaultClient.Do(req); err == nil {
					res.Body.Close()
				}
			}()
			post(t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			_, body := post(t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"word_count","arguments":{"text":"a b"}}}`)
			if !strings.Contains(body, `"words":2`) {
				t.Fatalf("body %q, want the result", body)
			}
			primed := strings.HasPrefix(body, "event: prime\nid: ")
			ids := strings.Contains(body, "\nid: ")
			if primed != c.primed || ids != c.primed {
				t.Fatalf("primed %v, ids %v, want %v: %q", primed, ids, c.primed, body)
			}
			if !c.primed {
				return
			}
			// A client whose stream broke after the priming event asks
			// for the rest with Last-Event-ID, and gets the result again.
			first := strings.TrimPrefix(strings.SplitN(body, "\n", 3)[1], "id: ")
			req, err := http.NewRequest(http.MethodGet, hs.URL, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			req.Header.Set("Last-Event-ID", first)
			res, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			replay, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(replay), `"words":2`) {
				t.Errorf("replay after %s: %q, want the result", first, replay)
			}
		})
	}
}

func TestAnIdleHTTPSessionIsClosed(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{SessionTimeout: 20 * time.Millisecond}))
	defer hs.Close()
	res, _ := post(t, hs.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	session := res.Header.Get("Mcp-Session-Id")
	if session == "" {
		t.Fatal("no session id")
	}
	// Poll until the session is gone (a liveness bound, not a timing
	// assertion: it must go at some point after 20 ms of quiet).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, _ := post(t, hs.URL, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		if res.StatusCode == http.StatusNotFound {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the idle session still answers: %s", res.Status)
		}
	}
}
