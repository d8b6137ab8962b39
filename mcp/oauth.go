package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// OAuthConfig is an HTTP import's "oauth" settings (a config entry's
// "oauth" object, in the shape Claude Code writes it). Every HTTP import
// that is not given an Authorization header runs the authorization flow
// when its server asks for one (401 with a WWW-Authenticate challenge);
// OAuthConfig only tunes it.
type OAuthConfig struct {
	// ClientID and ClientSecret are a client registered beforehand with
	// the authorization server (clientId, clientSecret; the secret
	// usually "${VAR}"). Without them dsh registers itself (RFC 7591),
	// or uses ClientMetadataURL where the server supports it.
	ClientID, ClientSecret string
	// Scopes replace the scopes dsh would request (those of the server's
	// challenge, or of its metadata).
	Scopes []string
	// CallbackPort is the port of the loopback redirect
	// http://127.0.0.1:PORT/callback (a free port when 0); RedirectURI
	// replaces the whole redirect (a loopback http URL).
	CallbackPort int
	RedirectURI  string
	// ClientMetadataURL is the https URL of a client ID metadata document
	// describing dsh as a client, used as its client id by the
	// authorization servers that support it.
	ClientMetadataURL string
}

// OAuthOptions are the process-wide settings of the authorization flow
// of HTTP imports (see [OAuthConfig]).
type OAuthOptions struct {
	// Store keeps each import's tokens across runs (a [FileTokenStore] in
	// the user's config directory when nil).
	Store TokenStore
	// Interactive lets an import start the flow itself (a terminal, or a
	// browser command configured). When false, an import whose server
	// asks for a login is not connected, with [ErrNeedsLogin].
	Interactive bool
	// Open shows the user the authorization URL (a browser); nil, or an
	// error, leaves the URL printed on Prompt for the user to open. It
	// runs beside the wait for the redirect, which waits for it at most
	// 2 s more.
	Open func(ctx context.Context, url string) error
	// Prompt hears the authorization URL; nil discards it.
	Prompt io.Writer
	// HTTPClient makes the flow's requests (discovery, registration,
	// tokens); a client with DefaultOAuthRequestTimeout when nil.
	HTTPClient *http.Client
	// LoginTimeout bounds the wait for the user to authorize
	// (DefaultLoginTimeout when 0).
	LoginTimeout time.Duration
}

// DefaultLoginTimeout is how long a flow waits for the browser's redirect,
// and DefaultOAuthRequestTimeout bounds each of the flow's requests.
const (
	DefaultLoginTimeout        = 5 * time.Minute
	DefaultOAuthRequestTimeout = 30 * time.Second
)

// ErrNeedsLogin is the error of an import whose server asks for an
// authorization the process cannot get by itself (not interactive, or the
// stored tokens can no longer be refreshed).
var ErrNeedsLogin = errors.New("needs a login")

// needsLogin is the reason an import is not connected without a login.
func needsLogin(server string) string {
	return "needs a login: run dsh mcp login " + server
}

// oauthFor returns the authorization of spec's imports: nil for a stdio
// server or one given an Authorization header.
func (c *Client) oauthFor(spec ServerSpec) *oauthImport {
	if spec.URL == "" {
		return nil
	}
	for k := range spec.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil
		}
	}
	c.oauthMu.Lock()
	defer c.oauthMu.Unlock()
	if c.oauth == nil {
		c.oauth = map[string]*oauthImport{}
	}
	imp := c.oauth[spec.Name]
	if imp == nil {
		imp = newOAuthImport(spec, c.opts.OAuth)
		c.oauth[spec.Name] = imp
	}
	return imp
}

// oauthImport is the authorization of one HTTP import: its stored token,
// refreshed by itself, and the SDK's authorization code handler, made at
// the first flow and kept for the step-up flows that follow.
type oauthImport struct {
	spec  ServerSpec
	opts  OAuthOptions
	store TokenStore
	key   string
	hc    *http.Client

	flow    sync.Mutex // one flow at a time: the requests refused together wait for it
	mu      sync.Mutex
	ts      oauth2.TokenSource // nil: no token yet
	handler *auth.AuthorizationCodeHandler
	port    int  // the loopback redirect's port, fixed at the first flow
	fresh   bool // a login: the stored token is not used
	flowed  bool // a flow ran
}

func newOAuthImport(spec ServerSpec, opts OAuthOptions) *oauthImport {
	imp := &oauthImport{spec: spec, opts: opts, store: opts.Store, key: TokenKey(spec.Name, spec.URL), hc: opts.HTTPClient}
	if imp.store == nil {
		imp.store = defaultStore{}
	}
	if imp.hc == nil {
		// A refresh runs outside any call's context: the timeout bounds
		// an authorization server that never answers.
		imp.hc = &http.Client{Timeout: DefaultOAuthRequestTimeout}
	}
	return imp
}

// tokenSource is the import's current token source, loaded from the store
// at first; nil when there is no token.
func (imp *oauthImport) tokenSource() oauth2.TokenSource {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if imp.ts == nil && !imp.fresh && !imp.flowed {
		st, err := imp.store.Load(imp.key)
		if err == nil && st != nil && st.Token != nil {
			imp.ts = imp.persisting(st.config(), st.Token, st)
		}
	}
	return imp.ts
}

// dropToken forgets a token that cannot be refreshed any more.
func (imp *oauthImport) dropToken(ts oauth2.TokenSource) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if imp.ts == ts {
		imp.ts = nil
		_ = imp.store.Delete(imp.key)
	}
}

// persisting is a token source refreshing tok with cfg that stores every
// new token with the registration st describes.
func (imp *oauthImport) persisting(cfg *oauth2.Config, tok *oauth2.Token, st *StoredToken) oauth2.TokenSource {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, imp.hc)
	return &storingSource{imp: imp, ctx: ctx, cfg: cfg, base: oauth2.ReuseTokenSource(tok, cfg.TokenSource(ctx, tok)), last: tok.AccessToken, st: st}
}

// storingSource saves each token its base source refreshes.
type storingSource struct {
	imp  *oauthImport
	ctx  context.Context // the refreshes' (with the flow's HTTP client)
	cfg  *oauth2.Config
	mu   sync.Mutex
	base oauth2.TokenSource
	last string
	st   *StoredToken
}

// refreshNow refreshes the token before its expiry: the server refused
// it (revoked, or its expiry unknown).
func (s *storingSource) refreshNow() error {
	s.mu.Lock()
	if s.st.Token == nil || s.st.Token.RefreshToken == "" {
		s.mu.Unlock()
		return errors.New("no refresh token")
	}
	tok := *s.st.Token
	tok.AccessToken = "" // invalid: the next Token refreshes
	s.base = oauth2.ReuseTokenSource(nil, s.cfg.TokenSource(s.ctx, &tok))
	s.mu.Unlock()
	_, err := s.Token()
	return err
}

func (s *storingSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	base := s.base
	s.mu.Unlock()
	tok, err := base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.last {
		s.last = tok.AccessToken
		st := *s.st
		st.Token = tok
		if tok.RefreshToken == "" && s.st.Token != nil {
			st.Token.RefreshToken = s.st.Token.RefreshToken
		}
		s.st = &st
		_ = s.imp.store.Save(s.imp.key, &st)
	}
	return tok, nil
}

// authorize runs the flow for the request r that its server refused with
// resp (the SDK's handler does the discovery, registration, PKCE and token
// exchange); it closes resp's body.
func (imp *oauthImport) authorize(ctx context.Context, r *http.Request, resp *http.Response) error {
	if !imp.opts.Interactive {
		_ = resp.Body.Close()
		return ErrNeedsLogin
	}
	h, err := imp.codeHandler()
	if err != nil {
		_ = resp.Body.Close()
		return err
	}
	imp.mu.Lock()
	imp.flowed = true
	imp.mu.Unlock()
	if err := h.Authorize(ctx, r, resp); err != nil {
		return fmt.Errorf("authorization failed: %w", err)
	}
	ts, err := h.TokenSource(ctx)
	if err != nil {
		return err
	}
	imp.mu.Lock()
	imp.ts = ts
	imp.mu.Unlock()
	return nil
}

// codeHandler makes the SDK's handler at the first flow.
func (imp *oauthImport) codeHandler() (*auth.AuthorizationCodeHandler, error) {
	imp.mu.Lock()
	defer imp.mu.Unlock()
	if imp.handler != nil {
		return imp.handler, nil
	}
	o := imp.spec.OAuth
	if o == nil {
		o = &OAuthConfig{}
	}
	redirect, err := imp.redirectURL(o)
	if err != nil {
		return nil, err
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: imp.fetchCode,
		RequestRefreshToken:      true,
		Client:                   imp.hc,
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:  []string{redirect},
			ClientName:    "dsh",
			GrantTypes:    []string{"authorization_code", "refresh_token"},
			ResponseTypes: []string{"code"},
		}},
		NewTokenSource: func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			st := &StoredToken{Server: imp.spec.Name, URL: imp.spec.URL, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
				TokenURL: c.Endpoint.TokenURL, AuthStyle: int(c.Endpoint.AuthStyle), Scopes: c.Scopes, Token: tok}
			if err := imp.store.Save(imp.key, st); err != nil {
				return nil, fmt.Errorf("storing the tokens: %w", err)
			}
			return imp.persisting(st.config(), tok, st), nil
		},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	}
	if len(o.Scopes) > 0 {
		scopes := o.Scopes
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		return nil, err
	}
	imp.handler = h
	return h, nil
}

// redirectURL is the flow's loopback redirect; a free port is picked
// once, at the first flow, when none is configured.
func (imp *oauthImport) redirectURL(o *OAuthConfig) (string, error) {
	if o.RedirectURI != "" {
		return o.RedirectURI, nil
	}
	port := o.CallbackPort
	if port == 0 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("finding a port for the login's redirect: %w", err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
	}
	imp.port = port
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/callback", nil
}

// fetchCode shows the user the authorization URL and waits for the
// browser's redirect to the loopback address.
func (imp *oauthImport) fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	imp.mu.Lock()
	redirect := imp.handlerRedirect()
	imp.mu.Unlock()
	u, err := url.Parse(redirect)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", u.Host)
	if err != nil {
		return nil, fmt.Errorf("listening for the login's redirect on %s: %w", u.Host, err)
	}
	results := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != cmp.Or(u.Path, "/") {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if q.Get("error") != "" {
			fmt.Fprintln(w, "dsh: the authorization was refused; you may close this window.")
		} else {
			fmt.Fprintln(w, "dsh: logged in; you may close this window.")
		}
		select {
		case results <- q:
		default:
		}
	})}
	go func() { _ = srv.Serve(l) }()
	defer func() { _ = srv.Close() }()

	if w := imp.opts.Prompt; w != nil {
		fmt.Fprintf(w, "dsh: MCP server %s asks for a login: open this URL to authorize dsh:\n%s\n", imp.spec.Name, args.URL)
	}
	if open := imp.opts.Open; open != nil {
		// The URL is printed: a missing browser is no failure. The
		// browser may run on (Open may wait for it): the flow waits for
		// it a little after the redirect, then leaves it.
		opened := make(chan struct{})
		go func() {
			defer close(opened)
			_ = open(ctx, args.URL)
		}()
		defer func() {
			t := time.NewTimer(2 * time.Second)
			defer t.Stop()
			select {
			case <-opened:
			case <-t.C:
			}
		}()
	}
	wait := imp.opts.LoginTimeout
	if wait <= 0 {
		wait = DefaultLoginTimeout
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case q := <-results:
		if e := q.Get("error"); e != "" {
			return nil, fmt.Errorf("the authorization server refused: %s", oauthErrorText(e, q.Get("error_description")))
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	case <-t.C:
		return nil, fmt.Errorf("no authorization within %s", wait)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// handlerRedirect is the redirect URL the handler was made with.
func (imp *oauthImport) handlerRedirect() string {
	if o := imp.spec.OAuth; o != nil && o.RedirectURI != "" {
		return o.RedirectURI
	}
	return "http://127.0.0.1:" + strconv.Itoa(imp.port) + "/callback"
}

// oauthErrorText is an authorization error's code and description, on
// one bounded line.
func oauthErrorText(code, desc string) string {
	s := code
	if desc != "" {
		s += " (" + desc + ")"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// oauthTransport sends an import's requests with its bearer token and runs
// the flow when the server asks for one: a 401, or a 403 with the
// insufficient_scope error (a step-up), retried once after the flow.
type oauthTransport struct {
	base http.RoundTripper
	imp  *oauthImport
}

func (t *oauthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, sent, err := t.send(r)
	if err != nil || !challenged(resp) {
		return resp, err
	}
	if r.Body != nil && r.Body != http.NoBody && r.GetBody == nil {
		return resp, nil // the request cannot be sent again
	}
	if s, ok := sent.(*storingSource); ok && resp.StatusCode == http.StatusUnauthorized {
		// The server refused a token it had not seen expire: refresh it
		// and try once more before asking for a login.
		if s.refreshNow() != nil {
			t.imp.dropToken(sent)
		} else {
			r2, err := replay(r)
			if err != nil {
				return resp, nil
			}
			drain(resp)
			if resp, _, err = t.send(r2); err != nil || !challenged(resp) {
				return resp, err
			}
		}
	}
	if !t.imp.opts.Interactive && !t.imp.oauthCapable(r.Context(), resp) {
		// A server that publishes no OAuth metadata (a static token's
		// challenge) is not one to log in to: its 401 stands.
		return resp, nil
	}
	t.imp.flow.Lock()
	defer t.imp.flow.Unlock()
	if cur := t.imp.tokenSource(); cur == nil || cur == sent {
		// No flow got a newer token while this request waited.
		if err := t.imp.authorize(r.Context(), r, resp); err != nil {
			return nil, err
		}
	} else {
		drain(resp)
	}
	r2, err := replay(r)
	if err != nil {
		return nil, err
	}
	resp, _, err = t.send(r2)
	return resp, err
}

// replay is r again, with its body anew.
func replay(r *http.Request) (*http.Request, error) {
	r2 := r.Clone(r.Context())
	if r.GetBody != nil {
		var err error
		if r2.Body, err = r.GetBody(); err != nil {
			return nil, err
		}
	}
	return r2, nil
}

// drain reads and closes a response that is not returned.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
}

// send sends r with the current token, if any, which it returns. A token
// that cannot be refreshed is dropped, and r goes without one: the
// server's challenge then starts a new flow.
func (t *oauthTransport) send(r *http.Request) (*http.Response, oauth2.TokenSource, error) {
	r = r.Clone(r.Context())
	ts := t.imp.tokenSource()
	if ts != nil {
		tok, err := ts.Token()
		if err != nil {
			t.imp.dropToken(ts)
			ts = nil
		} else {
			r.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		}
	}
	resp, err := t.base.RoundTrip(r)
	return resp, ts, err
}

// challenged reports whether resp asks for an OAuth authorization: a 401
// with a Bearer challenge (WWW-Authenticate), or a 403 whose Bearer
// challenge says insufficient_scope. A 401 without one is the server's
// answer, left as it is.
func challenged(resp *http.Response) bool {
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		return false
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	for _, c := range cs {
		if c.Scheme != "bearer" {
			continue
		}
		if resp.StatusCode == http.StatusUnauthorized || c.Params["error"] == "insufficient_scope" {
			return true
		}
	}
	return false
}

// oauthCapable reports whether the server that answered resp publishes
// what an OAuth login needs: its challenge names its resource metadata,
// or that metadata (RFC 9728), or authorization server metadata at its
// root (the 2025-03-26 fallback, RFC 8414 or OpenID discovery), is found at
// the well-known URLs. A flow that cannot start is not asked for.
func (imp *oauthImport) oauthCapable(ctx context.Context, resp *http.Response) bool {
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err == nil {
		for _, c := range cs {
			if c.Params["resource_metadata"] != "" {
				return true
			}
		}
	}
	u, err := url.Parse(imp.spec.URL)
	if err != nil {
		return false
	}
	root := &url.URL{Scheme: u.Scheme, Host: u.Host}
	// The metadata at the endpoint's path describes the endpoint; the one
	// at the root, the origin (as the SDK's discovery has it).
	for _, p := range [][2]string{
		{"/.well-known/oauth-protected-resource/" + strings.TrimLeft(u.Path, "/"), imp.spec.URL},
		{"/.well-known/oauth-protected-resource", root.String()},
	} {
		m := *root
		m.Path = p[0]
		if prm, err := oauthex.GetProtectedResourceMetadata(ctx, m.String(), p[1], imp.hc); err == nil && prm != nil {
			return true
		}
	}
	asm, err := auth.GetAuthServerMetadata(ctx, root.String(), imp.hc)
	return err == nil && asm != nil
}
