package mcp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`

// postAs POSTs body to url with the session (if any) and header edits, and
// returns the status, the session ID answered, and the JSON-RPC message
// answered (the data of an event stream, or the body).
func postAs(t *testing.T, url, session, body string, edit func(*http.Request)) (status int, sessionID, msg string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if edit != nil {
		edit(req)
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
	msg = string(b)
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(msg) {
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				msg = strings.TrimSpace(data)
				break
			}
		}
	}
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), msg
}

// closeSession ends the session named, if any.
func closeSession(t *testing.T, url, session string) {
	t.Helper()
	if session == "" {
		return
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", session)
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
}

func TestOriginsStayCheckedWhateverTheBindAddress(t *testing.T) {
	f := newFixture(t)
	for _, tt := range []struct {
		name   string
		opts   mcp.HTTPOptions
		host   string // the Host header; "" leaves the server's (the SDK refuses others on a loopback connection)
		origin string // "" sends none
		status int
		body   string
	}{
		{"on every interface, a foreign Origin is forbidden", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "http://evil.example",
			http.StatusForbidden, "Forbidden: invalid Origin header\n"},
		{"on every interface, a foreign Origin is forbidden even with the Host it names", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "evil.example:8080", "http://evil.example",
			http.StatusForbidden, "Forbidden: invalid Origin header\n"},
		{"on every interface, a request without an Origin is served", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "", http.StatusOK, ""},
		{"on every interface, a localhost Origin is allowed", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "http://localhost:6274", http.StatusOK, ""},
		{"on every interface, a 127.0.0.1 Origin is allowed", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "http://127.0.0.1:6274", http.StatusOK, ""},
		{"on every interface, a [::1] Origin is allowed", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "http://[::1]:6274", http.StatusOK, ""},
		{"on every interface, a listed Origin is allowed", mcp.HTTPOptions{AllowedHosts: []string{"*"}, AllowedOrigins: []string{"https://app.example"}}, "", "https://app.example",
			http.StatusOK, ""},
		{"on a named interface, an Origin of that host is allowed", mcp.HTTPOptions{AllowedHosts: []string{"192.168.1.5"}}, "", "http://192.168.1.5:3000",
			http.StatusOK, ""},
		{"on a named interface, a foreign Origin is forbidden", mcp.HTTPOptions{AllowedHosts: []string{"192.168.1.5"}}, "", "http://evil.example",
			http.StatusForbidden, "Forbidden: invalid Origin header\n"},
		{"an Origin that is not a URL is forbidden", mcp.HTTPOptions{AllowedHosts: []string{"*"}}, "", "null", http.StatusForbidden, "Forbidden: invalid Origin header\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := httptest.NewServer(f.srv.HTTPHandler(tt.opts))
			defer hs.Close()
			status, session, body := postAs(t, hs.URL, "", initBody, func(r *http.Request) {
				if tt.host != "" {
					r.Host = tt.host
				}
				if tt.origin != "" {
					r.Header.Set("Origin", tt.origin)
				}
			})
			closeSession(t, hs.URL, session)
			if status != tt.status {
				t.Errorf("status %d, want %d (%s)", status, tt.status, body)
			}
			if tt.body != "" && body != tt.body {
				t.Errorf("body %q, want %q", body, tt.body)
			}
		})
	}
}

func TestTheBearerSchemeIsCaseInsensitive(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{Token: "s3cret"}))
	defer hs.Close()
	for _, tt := range []struct {
		name, header string
		status       int
		challenge    string
	}{
		{"Bearer is served", "Bearer s3cret", http.StatusOK, ""},
		{"bearer in lower case is served", "bearer s3cret", http.StatusOK, ""},
		{"BEARER in upper case is served", "BEARER s3cret", http.StatusOK, ""},
		{"spaces around the token are allowed", "  Bearer   s3cret ", http.StatusOK, ""},
		{"another scheme is unauthorized", "Basic s3cret", http.StatusUnauthorized, `Bearer realm="dsh"`},
		{"a scheme without a token is unauthorized", "bearer", http.StatusUnauthorized, `Bearer realm="dsh"`},
		{"a wrong token in lower case is an invalid token", "bearer nope", http.StatusUnauthorized, `Bearer realm="dsh", error="invalid_token"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(initBody))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", tt.header)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if id := res.Header.Get("Mcp-Session-Id"); id != "" {
				del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				del.Header.Set("Mcp-Session-Id", id)
				del.Header.Set("Authorization", "Bearer s3cret")
				if r, err := http.DefaultClient.Do(del); err == nil {
					r.Body.Close()
				}
			}
			if res.StatusCode != tt.status {
				t.Errorf("status %d, want %d", res.StatusCode, tt.status)
			}
			if got := res.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tt.challenge)
			}
		})
	}
}

func TestARequestWithoutASessionIsABadRequest(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{}))
	defer hs.Close()
	const noSession = `"error":{"code":-32600,"message":"Bad Request: the request has no Mcp-Session-Id header; send initialize first and then the session ID it returns"}}`
	for _, tt := range []struct {
		name, body string
		status     int
		msg        string // the JSON-RPC answer; "" does not check
	}{
		{"tools/list is refused with -32600", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
			http.StatusBadRequest, `{"jsonrpc":"2.0","id":7,` + noSession},
		{"tools/call with a string id is refused with -32600", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"word_count","arguments":{"text":"x"}}}`,
			http.StatusBadRequest, `{"jsonrpc":"2.0","id":"a",` + noSession},
		{"logging/setLevel is refused with -32600", `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`,
			http.StatusBadRequest, `{"jsonrpc":"2.0","id":2,` + noSession},
		{"initialize starts a session", initBody, http.StatusOK, ""},
		{"ping is answered", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, http.StatusOK, `{"jsonrpc":"2.0","id":3,"result":{}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, session, msg := postAs(t, hs.URL, "", tt.body, nil)
			closeSession(t, hs.URL, session)
			if status != tt.status {
				t.Errorf("status %d, want %d (%s)", status, tt.status, msg)
			}
			if tt.msg != "" && msg != tt.msg {
				t.Errorf("answer\n%s\nwant\n%s", msg, tt.msg)
			}
		})
	}
}

func TestAnUnknownLogLevelIsInvalidParams(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{}))
	defer hs.Close()
	status, session, msg := postAs(t, hs.URL, "", initBody, nil)
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q: %s", status, session, msg)
	}
	defer closeSession(t, hs.URL, session)
	if status, _, msg := postAs(t, hs.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); status != http.StatusAccepted {
		t.Fatalf("initialized: status %d: %s", status, msg)
	}
	const want = "; want one of debug, info, notice, warning, error, critical, alert, emergency"
	for _, tt := range []struct{ name, params, answer string }{
		{"a known level is set", `{"level":"warning"}`, `{"jsonrpc":"2.0","id":5,"result":{}}`},
		{"an unknown level is -32602", `{"level":"loud"}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"logging/setLevel: unknown level \"loud\"` + want + `"}}`},
		{"a level in the wrong case is -32602", `{"level":"DEBUG"}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"logging/setLevel: unknown level \"DEBUG\"` + want + `"}}`},
		{"no level is -32602", `{}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"logging/setLevel: no level` + want + `"}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, msg := postAs(t, hs.URL, session, `{"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":`+tt.params+`}`, nil)
			if msg != tt.answer {
				t.Errorf("answer\n%s\nwant\n%s", msg, tt.answer)
			}
		})
	}
}
