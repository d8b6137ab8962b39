package mcp

import (
	"context"
	"errors"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNoLogin is the error of [Login] for a server that answered without
// asking for an authorization.
var ErrNoLogin = errors.New("the server does not ask for a login")

// Login runs the authorization flow of spec, an HTTP import, whatever
// tokens are stored for it: it connects without a token, and the server's
// challenge starts the flow (opts.Interactive is taken as set). The tokens
// are stored in opts.Store. A server that answers without asking for a
// login is [ErrNoLogin].
func Login(ctx context.Context, spec ServerSpec, opts OAuthOptions) error {
	if spec.URL == "" {
		return errors.New("a login applies to an HTTP server (a url), not a command")
	}
	opts.Interactive = true
	imp := newOAuthImport(spec, opts)
	imp.fresh = true
	var rt http.RoundTripper = &oauthTransport{base: http.DefaultTransport, imp: imp}
	if len(spec.Headers) > 0 {
		rt = &oauthTransport{base: headerTransport{base: http.DefaultTransport, headers: spec.Headers}, imp: imp}
	}
	hc := &http.Client{Transport: rt}
	var t sdk.Transport = &sdk.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: hc}
	if spec.SSE {
		t = &sdk.SSEClientTransport{Endpoint: spec.URL, HTTPClient: hc}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: version()}, nil)
	sess, err := client.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	_ = sess.Close()
	imp.mu.Lock()
	flowed := imp.flowed
	imp.mu.Unlock()
	if !flowed {
		return ErrNoLogin
	}
	return nil
}

// Logout forgets the tokens stored for spec (none stored is no error).
func Logout(spec ServerSpec, store TokenStore) error {
	if store == nil {
		store = defaultStore{}
	}
	return store.Delete(TokenKey(spec.Name, spec.URL))
}
