package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/oauthtest"
	"github.com/dsh-go/dsh/mcp"
)

// TestOAuthImport runs the authorization flow of an HTTP import against an
// in-process authorization server: login, stored tokens, refresh, expiry,
// revocation and logout.
func TestOAuthImport(t *testing.T) {
	f := newFixture(t)
	s := oauthtest.New(t, f.srv.HTTPHandler(mcp.HTTPOptions{}))
	spec := mcp.ServerSpec{Name: "up", URL: s.RS.URL + "/mcp"}
	dir := filepath.Join(t.TempDir(), "oauth")
	store := mcp.FileTokenStore{Dir: dir}
	key := mcp.TokenKey(spec.Name, spec.URL)
	var out bytes.Buffer // the logs, prompts and diagnostics, to look for secrets in
	connect := func(t *testing.T, opts mcp.OAuthOptions) (*engine.Service, []mcp.Diagnostic) {
		t.Helper()
		svc := engine.New()
		opts.Store = store
		client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec},
			mcp.Options{OAuth: opts, Logger: slog.New(slog.NewTextHandler(&out, nil)), MinBackoff: time.Hour})
		t.Cleanup(func() { _ = client.Close() })
		for _, d := range diags {
			fmt.Fprintln(&out, d.Error())
		}
		return svc, diags
	}
	wordCount := func(t *testing.T, svc *engine.Service) {
		t.Helper()
		r := impCall(svc, context.Background(), "up__word_count", impObj(t, `{"text":"a b c"}`))
		if text, _ := dsl.Marshal(r.Value); r.IsError || string(text) != `{"words":3}` {
			t.Fatalf("result %s", impJSON(t, r))
		}
	}
	expire := func(t *testing.T) string {
		t.Helper()
		st, err := store.Load(key)
		if err != nil || st == nil {
			t.Fatalf("stored token %v, %v", st, err)
		}
		st.Token.Expiry = time.Now().Add(-time.Minute)
		if err := store.Save(key, st); err != nil {
			t.Fatal(err)
		}
		return st.Token.AccessToken
	}
	needsLogin := []mcp.Diagnostic{{Server: "up", Reason: "needs a login: run dsh mcp login up"}}

	t.Run("without tokens a non-interactive import needs a login, in one line", func(t *testing.T) {
		svc, diags := connect(t, mcp.OAuthOptions{})
		if fmt.Sprint(diags) != fmt.Sprint(needsLogin) {
			t.Fatalf("diagnostics %q, want %q", diags, needsLogin)
		}
		if names := impToolNames(svc); len(names) != 0 {
			t.Errorf("tools %v, want none", names)
		}
	})
	t.Run("a login stores the tokens in a file only the user can read", func(t *testing.T) {
		var prompt bytes.Buffer
		if err := mcp.Login(context.Background(), spec, mcp.OAuthOptions{Store: store, Open: oauthtest.Follow, Prompt: &prompt}); err != nil {
			t.Fatal(err)
		}
		out.Write(prompt.Bytes())
		if !strings.Contains(prompt.String(), "dsh: MCP server up asks for a login: open this URL to authorize dsh:\n"+s.AS.URL+"/authorize?") {
			t.Errorf("prompt %q", prompt.String())
		}
		if _, _, resources := s.Counts(); len(resources) != 1 || resources[0] != spec.URL {
			t.Errorf("resource parameters %q, want %q", resources, spec.URL)
		}
		if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("token directory %v, %v, want mode 0700", fi.Mode(), err)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 || entries[0].Name() != key+".json" {
			t.Fatalf("token directory holds %v, want %s.json alone", entries, key)
		}
		fi, err := os.Stat(filepath.Join(dir, key+".json"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("token file %v, %v, want mode 0600", fi.Mode(), err)
		}
	})
	t.Run("an import uses the stored tokens without a login", func(t *testing.T) {
		_, before, _ := s.Counts()
		svc, diags := connect(t, mcp.OAuthOptions{})
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		wordCount(t, svc)
		if _, after, _ := s.Counts(); after != before {
			t.Errorf("%d authorization requests, want none", after-before)
		}
	})
	t.Run("an expired token is refreshed by itself and the new one stored", func(t *testing.T) {
		old := expire(t)
		svc, diags := connect(t, mcp.OAuthOptions{})
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		wordCount(t, svc)
		if n, _, _ := s.Counts(); n != 1 {
			t.Errorf("%d refreshes, want 1", n)
		}
		st, err := store.Load(key)
		if err != nil || st.Token.AccessToken == old || !st.Token.Expiry.After(time.Now()) {
			t.Errorf("stored token not replaced by the refreshed one (%v)", err)
		}
	})
	t.Run("a token the server refuses before its expiry is refreshed, and the call retried", func(t *testing.T) {
		s.Revoke(false)
		before, _, _ := s.Counts()
		svc, diags := connect(t, mcp.OAuthOptions{})
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		wordCount(t, svc)
		if after, _, _ := s.Counts(); after != before+1 {
			t.Errorf("%d refreshes, want 1", after-before)
		}
	})
	t.Run("a refresh that fails is one clear line, and the tokens are forgotten", func(t *testing.T) {
		expire(t)
		s.Revoke(true)
		svc, diags := connect(t, mcp.OAuthOptions{})
		if fmt.Sprint(diags) != fmt.Sprint(needsLogin) {
			t.Fatalf("diagnostics %q, want %q", diags, needsLogin)
		}
		if names := impToolNames(svc); len(names) != 0 {
			t.Errorf("tools %v, want none", names)
		}
		if st, err := store.Load(key); st != nil || err != nil {
			t.Errorf("stored token %v, %v after a failed refresh, want none", st != nil, err)
		}
	})
	t.Run("the first call on a terminal starts the login itself", func(t *testing.T) {
		var prompt bytes.Buffer
		svc, diags := connect(t, mcp.OAuthOptions{Interactive: true, Open: oauthtest.Follow, Prompt: &prompt})
		out.Write(prompt.Bytes())
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		wordCount(t, svc)
		if st, err := store.Load(key); st == nil || err != nil {
			t.Errorf("no stored token after the login (%v)", err)
		}
	})
	t.Run("logout forgets the tokens", func(t *testing.T) {
		if err := mcp.Logout(spec, store); err != nil {
			t.Fatal(err)
		}
		if st, err := store.Load(key); st != nil || err != nil {
			t.Errorf("stored token %v, %v after logout, want none", st != nil, err)
		}
		if err := mcp.Logout(spec, store); err != nil {
			t.Errorf("a second logout: %v, want no error", err)
		}
	})
	t.Run("no token appears in the logs, prompts or diagnostics", func(t *testing.T) {
		toks := s.Tokens()
		if len(toks) < 6 {
			t.Fatalf("%d tokens issued, want at least 6", len(toks))
		}
		for _, tok := range toks {
			if strings.Contains(out.String(), tok) {
				t.Errorf("token %s… in the output:\n%s", tok[:4], out.String())
			}
		}
	})
}

// TestOAuthLoginErrors covers the logins that cannot succeed.
func TestOAuthLoginErrors(t *testing.T) {
	f := newFixture(t)
	plain := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{}))
	defer plain.Close()
	t.Run("a login to a server that asks for none is ErrNoLogin", func(t *testing.T) {
		err := mcp.Login(context.Background(), mcp.ServerSpec{Name: "up", URL: plain.URL}, mcp.OAuthOptions{Store: mcp.FileTokenStore{Dir: t.TempDir()}})
		if !errors.Is(err, mcp.ErrNoLogin) {
			t.Errorf("error %v, want ErrNoLogin", err)
		}
	})
	t.Run("a login nobody completes in the browser ends at its timeout", func(t *testing.T) {
		s := oauthtest.New(t, f.srv.HTTPHandler(mcp.HTTPOptions{}))
		opened := false
		err := mcp.Login(context.Background(), mcp.ServerSpec{Name: "up", URL: s.RS.URL + "/mcp"}, mcp.OAuthOptions{
			Store:        mcp.FileTokenStore{Dir: t.TempDir()},
			Open:         func(context.Context, string) error { opened = true; return errors.New("no browser") },
			LoginTimeout: 200 * time.Millisecond,
		})
		if err == nil || !strings.HasSuffix(err.Error(), "authorization failed: no authorization within 200ms") || !opened {
			t.Errorf("error %v (browser asked: %v), want the timeout", err, opened)
		}
	})
	t.Run("a login to a command is refused", func(t *testing.T) {
		err := mcp.Login(context.Background(), mcp.ServerSpec{Name: "up", Command: "true"}, mcp.OAuthOptions{})
		if err == nil || err.Error() != "a login applies to an HTTP server (a url), not a command" {
			t.Errorf("error %v", err)
		}
	})
	t.Run("a server whose 401 publishes no OAuth metadata keeps its own answer", func(t *testing.T) {
		hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{Token: "s3cret"}))
		defer hs.Close()
		svc := engine.New()
		client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", URL: hs.URL}},
			mcp.Options{OAuth: mcp.OAuthOptions{Store: mcp.FileTokenStore{Dir: t.TempDir()}}, MinBackoff: time.Hour})
		defer client.Close()
		if len(diags) != 1 || !strings.HasPrefix(diags[0].Reason, "cannot connect: ") || !strings.Contains(diags[0].Reason, "Unauthorized") {
			t.Errorf("diagnostics %q, want the server's Unauthorized", diags)
		}
	})
}

// TestOAuthImportOverSSE logs in to a legacy SSE server behind OAuth at
// its first connection, on a terminal, and calls its tool.
func TestOAuthImportOverSSE(t *testing.T) {
	srv := impServer(nil, nil)
	s := oauthtest.New(t, sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	store := mcp.FileTokenStore{Dir: t.TempDir()}
	spec := mcp.ServerSpec{Name: "old", URL: s.RS.URL + "/mcp", SSE: true}
	svc := engine.New()
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec},
		mcp.Options{OAuth: mcp.OAuthOptions{Store: store, Interactive: true, Open: oauthtest.Follow}, MinBackoff: time.Hour})
	defer client.Close()
	if len(diags) != 0 {
		t.Fatalf("diagnostics %v", diags)
	}
	if r := impCall(svc, context.Background(), "old__echo", impObj(t, `{"text":"over sse"}`)); r.IsError || r.Value != "echo: over sse" {
		t.Errorf("result = %s", impJSON(t, r))
	}
	if st, err := store.Load(mcp.TokenKey(spec.Name, spec.URL)); st == nil || err != nil {
		t.Errorf("no stored token after the login (%v)", err)
	}
}
