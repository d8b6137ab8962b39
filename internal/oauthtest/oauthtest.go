// Package oauthtest is a small OAuth 2.1 authorization server and a
// protected MCP resource in front of a handler, for the tests of dsh's
// import client (mcp, cmd/dsh/cli): RFC 8414 metadata, dynamic client
// registration (RFC 7591), the authorization code grant with PKCE (S256
// checked), refresh tokens, and RFC 9728 protected resource metadata.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a small OAuth authorization server (RFC 8414 metadata,
// dynamic registration, the authorization code grant with PKCE, refresh)
// in front of an MCP endpoint that accepts only its access tokens, as a
// protected resource publishing its metadata (RFC 9728).
type Server struct {
	// AS is the authorization server; RS the protected resource, its MCP
	// endpoint at /mcp.
	AS, RS *httptest.Server

	mu         sync.Mutex
	challenges map[string]string    // code → PKCE challenge
	access     map[string]time.Time // access token → expiry
	refresh    map[string]bool      // refresh token → valid
	issued     []string             // every token issued, to look for in the output
	refreshes  int                  // refresh grants answered with a token
	authorized int                  // authorization requests
	resources  []string             // the resource parameter of each authorization request
}

// New starts the authorization server and the protected resource, which
// passes the requests bearing a valid access token on to resource; the
// test's end stops them.
func New(t testing.TB, resource http.Handler) *Server {
	t.Helper()
	s := &Server{challenges: map[string]string{}, access: map[string]time.Time{}, refresh: map[string]bool{}}
	s.AS = httptest.NewServer(http.HandlerFunc(s.serveAS))
	t.Cleanup(s.AS.Close)
	rsMux := http.NewServeMux()
	rsMux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"resource": s.RS.URL + "/mcp", "authorization_servers": []string{s.AS.URL}})
	})
	rsMux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, ok := s.access[tok]
		s.mu.Unlock()
		if !ok || time.Now().After(exp) {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+s.RS.URL+`/.well-known/oauth-protected-resource/mcp"`)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		resource.ServeHTTP(w, r)
	}))
	s.RS = httptest.NewServer(rsMux)
	t.Cleanup(s.RS.Close)
	return s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serveAS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": s.AS.URL, "authorization_endpoint": s.AS.URL + "/authorize", "token_endpoint": s.AS.URL + "/token",
			"registration_endpoint": s.AS.URL + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	case "/register":
		writeJSON(w, http.StatusCreated, map[string]any{"client_id": "dsh-client", "redirect_uris": []string{}, "token_endpoint_auth_method": "none"})
	case "/authorize":
		q := r.URL.Query()
		s.authorized++
		s.resources = append(s.resources, q.Get("resource"))
		code := "code-" + rand.Text()
		s.challenges[code] = q.Get("code_challenge")
		to, err := url.Parse(q.Get("redirect_uri"))
		if err != nil || q.Get("code_challenge_method") != "S256" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		to.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	case "/token":
		_ = r.ParseForm()
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			want, ok := s.challenges[r.PostForm.Get("code")]
			sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
			if !ok || base64.RawURLEncoding.EncodeToString(sum[:]) != want {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			delete(s.challenges, r.PostForm.Get("code"))
		case "refresh_token":
			if !s.refresh[r.PostForm.Get("refresh_token")] {
				writeJSON(w, http.StatusBadRequest, map[string]any{"error": "invalid_grant"})
				return
			}
			s.refreshes++
		default:
			writeJSON(w, http.StatusBadRequest, map[string]any{"error": "unsupported_grant_type"})
			return
		}
		at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
		s.access[at] = time.Now().Add(time.Hour)
		s.refresh[rt] = true
		s.issued = append(s.issued, at, rt)
		writeJSON(w, http.StatusOK, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600, "refresh_token": rt})
	default:
		http.NotFound(w, r)
	}
}

// Revoke makes every access token invalid, and with refresh every refresh
// token too.
func (s *Server) Revoke(refresh bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if refresh {
		clear(s.refresh)
	}
	clear(s.access)
}

// Tokens are the tokens issued so far.
func (s *Server) Tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Follow is a headless browser: it follows the authorization URL to the
// loopback redirect, as a user who authorizes at once.
func Follow(ctx context.Context, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s", resp.Status)
	}
	return nil
}

// Counts are the refresh grants answered with a token and the
// authorization requests so far, and each authorization request's resource
// parameter.
func (s *Server) Counts() (refreshes, authorized int, resources []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshes, s.authorized, append([]string(nil), s.resources...)
}
