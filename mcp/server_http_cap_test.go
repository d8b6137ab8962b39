package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

const capInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// openSession initializes a session and returns its ID.
func openSession(t *testing.T, url string) string {
	t.Helper()
	res, body := post(t, url, "", capInitialize)
	session := res.Header.Get("Mcp-Session-Id")
	if res.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s %s", res.Status, body)
	}
	post(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return session
}

// deleteSession ends a session as its client leaving does.
func deleteSession(t *testing.T, url, session string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

func TestHTTPSessionsAreCapped(t *testing.T) {
	t.Run("a new session past the cap closes the one idle for longest", func(t *testing.T) {
		f := newFixture(t)
		hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{MaxSessions: 2}))
		defer hs.Close()
		a := openSession(t, hs.URL)
		b := openSession(t, hs.URL)
		if res, body := post(t, hs.URL, a, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); res.StatusCode != http.StatusOK {
			t.Fatalf("ping a: %s %s", res.Status, body)
		}
		c := openSession(t, hs.URL)
		if res, _ := post(t, hs.URL, b, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); res.StatusCode != http.StatusNotFound {
			t.Errorf("the session idle for longest answers %s, want 404 Not Found", res.Status)
		}
		// A ping without a session opens none: it makes no room.
		if res, body := post(t, hs.URL, "", `{"jsonrpc":"2.0","id":5,"method":"ping"}`); res.StatusCode != http.StatusOK {
			t.Errorf("a ping without a session got %s %s, want 200", res.Status, body)
		}
		for _, s := range []string{a, c} {
			if res, body := post(t, hs.URL, s, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); res.StatusCode != http.StatusOK {
				t.Errorf("a kept session answers %s %s, want 200", res.Status, body)
			}
			deleteSession(t, hs.URL, s)
		}
	})
	t.Run("a new session is refused with 503 while every session is busy", func(t *testing.T) {
		f := newFixture(t)
		hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{MaxSessions: 1}))
		defer hs.Close()
		a := openSession(t, hs.URL)
		called := make(chan struct{})
		go func() {
			defer close(called)
			post(t, hs.URL, a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`)
		}()
		<-f.started
		res, body := post(t, hs.URL, "", capInitialize)
		want := `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Service Unavailable: all 1 HTTP sessions (the cap set by --http-max-sessions) are busy; retry once one ends"}}`
		if res.StatusCode != http.StatusServiceUnavailable || body != want {
			t.Errorf("got %s %s, want 503 %s", res.Status, body, want)
		}
		if got := res.Header.Get("Content-Type"); got != "application/json" {
			t.Errorf("Content-Type %q, want application/json", got)
		}
		// The busy session is untouched; once it leaves, a new one opens.
		deleteSession(t, hs.URL, a)
		<-called
		deleteSession(t, hs.URL, openSession(t, hs.URL))
	})
}
