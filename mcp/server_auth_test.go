package mcp_test

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/mcp"
)

// testIssuer is a small authorization server: RFC 8414 metadata and a JWKS
// of keys the test swaps, issuing tokens signed with them.
type testIssuer struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	keys      map[string]crypto.Signer // by kid, the ones published
	jwksHits  atomic.Int32
	metaPaths []string // the metadata paths asked for
}

func newTestIssuer(t *testing.T) *testIssuer {
	t.Helper()
	is := &testIssuer{t: t, keys: map[string]crypto.Signer{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		is.metaPaths = append(is.metaPaths, r.URL.Path)
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"code_challenge_methods_supported":["S256"],"response_types_supported":["code"]}`,
			is.srv.URL, is.srv.URL+"/authorize", is.srv.URL+"/token", is.srv.URL+"/jwks")
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		is.mu.Lock()
		defer is.mu.Unlock()
		var keys []map[string]string
		for kid, k := range is.keys {
			keys = append(keys, jwkOf(kid, k.Public()))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// publish adds a key to the JWKS; unpublish removes one.
func (is *testIssuer) publish(kid string, k crypto.Signer) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys[kid] = k
}

func (is *testIssuer) unpublish(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	delete(is.keys, kid)
}

// jwkOf is a public key as a JWK.
func jwkOf(kid string, pub crypto.PublicKey) map[string]string {
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := pub.(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, _ := k.Bytes()
		return map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "x": b64(b[1:33]), "y": b64(b[33:])}
	case ed25519.PublicKey:
		return map[string]string{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64(k)}
	}
	panic(fmt.Sprintf("key type %T", pub))
}

// sign returns a token of claims signed by k under kid with method.
func sign(t *testing.T, method jwt.SigningMethod, kid string, k any, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	rsaKeyOnce sync.Once
	rsaKeys    [2]*rsa.PrivateKey
)

// rsaKey returns one of two RSA keys generated once for the package.
func rsaKey(t *testing.T, i int) *rsa.PrivateKey {
	rsaKeyOnce.Do(func() {
		for j := range rsaKeys {
			k, err := rsa.GenerateKey(rand.Reader, 2048)
			if err != nil {
				panic(err)
			}
			rsaKeys[j] = k
		}
	})
	return rsaKeys[i]
}

// authFixture is a dsh server protected by a resource server trusting a
// test issuer, its clock shiftable, its logs captured.
type authFixture struct {
	is       *testIssuer
	rs       *mcp.ResourceServer
	url      string // the /mcp endpoint
	base     string
	audience string
	shift    atomic.Int64 // added to the resource server's clock
	logs     *syncbuf.Buffer
	key      *rsa.PrivateKey
}

// whoami is the Go tool that reports the caller the engine sees.
type whoami struct {
	Subject  string   `json:"subject"`
	ClientID string   `json:"clientId"`
	Scopes   []string `json:"scopes"`
	Anon     bool     `json:"anonymous"`
}

// whoamiServer serves three tools that report the caller the engine sees
// (engine.CallerFrom): whoami, admin_reset and admin_audit.
func whoamiServer(t *testing.T, ts *mcp.ToolScopes, logger *slog.Logger, setups ...func(*engine.Service)) *mcp.Server {
	t.Helper()
	svc := engine.New()
	agent := engine.NewAgent("main", nil)
	for _, name := range []string{"whoami", "admin_reset", "admin_audit"} {
		def, err := engine.DefineTool(engine.ToolOptions[any, whoami]{
			Name:   name,
			Output: dsl.ObjectOf(true, dsl.Prop("subject", dsl.String().Required())),
			Render: func(_ any, out whoami) ([]engine.Block, error) {
				b, err := json.Marshal(out)
				return []engine.Block{engine.Text(string(b))}, err
			},
			Execute: func(ctx context.Context, _ any, _ *engine.Run) (whoami, error) {
				c := engine.CallerFrom(ctx)
				if c == nil {
					return whoami{Anon: true}, nil
				}
				return whoami{Subject: c.Subject, ClientID: c.ClientID, Scopes: c.Scopes}, nil
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Global().Register(def); err != nil {
			t.Fatal(err)
		}
	}
	for _, setup := range setups {
		setup(svc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := mcp.NewServer(ctx, svc, mcp.ServerOptions{Agent: agent, Logger: logger, ToolScopes: ts})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)

	return srv
}

func newAuthFixture(t *testing.T, toolScopes string, setups ...func(*engine.Service)) *authFixture {
	t.Helper()
	f := &authFixture{is: newTestIssuer(t), logs: &syncbuf.Buffer{}, key: rsaKey(t, 0)}
	f.is.publish("k1", f.key)
	logger := slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	var ts *mcp.ToolScopes
	if toolScopes != "" {
		var err error
		if ts, err = mcp.ParseToolScopes(strings.NewReader(toolScopes)); err != nil {
			t.Fatal(err)
		}
	}
	srv := whoamiServer(t, ts, logger, setups...)
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	f.base, f.url, f.audience = hs.URL, hs.URL+"/mcp", hs.URL+"/mcp"
	var err error
	f.rs, err = mcp.NewResourceServer(mcp.ResourceOptions{
		Issuer: f.is.srv.URL, Audience: f.audience, ToolScopes: ts, Logger: logger,
		Now: func() time.Time { return time.Now().Add(time.Duration(f.shift.Load())) },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.rs.MetadataPaths() {
		mux.Handle(p, f.rs.MetadataHandler())
	}
	mux.Handle("/mcp", srv.HTTPHandler(mcp.HTTPOptions{Resource: f.rs}))
	return f
}

// claims are a valid token's claims, with edits.
func (f *authFixture) claims(edit func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": f.is.srv.URL, "aud": f.audience, "sub": "alice", "client_id": "cli-1",
		"scope": "tools:read", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

// token is a valid token, RS256 under k1, with edits.
func (f *authFixture) token(t *testing.T, edit func(jwt.MapClaims)) string {
	return sign(t, jwt.SigningMethodRS256, "k1", f.key, f.claims(edit))
}

// initialize POSTs initialize with the token ("" sends none) and returns
// the status and the WWW-Authenticate header.
func (f *authFixture) initialize(t *testing.T, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if session := res.Header.Get("Mcp-Session-Id"); session != "" {
		del, _ := http.NewRequest(http.MethodDelete, f.url, nil)
		del.Header.Set("Mcp-Session-Id", session)
		del.Header.Set("Authorization", "Bearer "+token)
		if r, err := http.DefaultClient.Do(del); err == nil {
			r.Body.Close()
		}
	}
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

func TestAResourceServerVerifiesAccessTokens(t *testing.T) {
	f := newAuthFixture(t, "")
	meta := fmt.Sprintf("Bearer resource_metadata=%q", f.base+"/.well-known/oauth-protected-resource/mcp")
	refused := func(reason string) string {
		return meta + fmt.Sprintf(`, error="invalid_token", error_description=%q`, reason)
	}
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	f.is.publish("ec", ec)
	f.is.publish("ed", ed)
	otherKey := rsaKey(t, 1)
	pubDER, _ := x509.MarshalPKIXPublicKey(&f.key.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})

	tampered := func() string {
		parts := strings.Split(f.token(t, nil), ".")
		payload, _ := json.Marshal(f.claims(func(c jwt.MapClaims) { c["sub"] = "root" }))
		parts[1] = base64.RawURLEncoding.EncodeToString(payload)
		return strings.Join(parts, ".")
	}
	for _, tt := range []struct {
		name      string
		token     string
		status    int
		challenge string
	}{
		{"a valid RS256 token is served", f.token(t, nil), http.StatusOK, ""},
		{"a valid PS256 token is served", sign(t, jwt.SigningMethodPS256, "k1", f.key, f.claims(nil)), http.StatusOK, ""},
		{"a valid ES256 token is served", sign(t, jwt.SigningMethodES256, "ec", ec, f.claims(nil)), http.StatusOK, ""},
		{"a valid EdDSA token is served", sign(t, jwt.SigningMethodEdDSA, "ed", ed, f.claims(nil)), http.StatusOK, ""},
		{"a token with aud among several is served", f.token(t, func(c jwt.MapClaims) { c["aud"] = []string{"https://other.example", f.audience} }), http.StatusOK, ""},
		{"a token expired within the skew is served", f.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-30 * time.Second).Unix() }), http.StatusOK, ""},
		{"a request without a token gets the challenge", "", http.StatusUnauthorized, meta},
		{"a token for another audience is refused", f.token(t, func(c jwt.MapClaims) { c["aud"] = "https://other.example/mcp" }),
			http.StatusUnauthorized, refused("the token is not for this resource (aud)")},
		{"a token from another issuer is refused", f.token(t, func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }),
			http.StatusUnauthorized, refused("the token is not from the issuer (iss)")},
		{"a token with a tampered payload is refused", tampered(), http.StatusUnauthorized,
			refused("the token's signature does not verify (or its algorithm is not one of RS256, PS256, ES256, EdDSA)")},
		{"a token signed by another key under a known kid is refused", sign(t, jwt.SigningMethodRS256, "k1", otherKey, f.claims(nil)), http.StatusUnauthorized,
			refused("the token's signature does not verify (or its algorithm is not one of RS256, PS256, ES256, EdDSA)")},
		{"a token of alg none is refused", sign(t, jwt.SigningMethodNone, "k1", jwt.UnsafeAllowNoneSignatureType, f.claims(nil)), http.StatusUnauthorized,
			refused("the token's signature does not verify (or its algorithm is not one of RS256, PS256, ES256, EdDSA)")},
		{"an HS256 token keyed with the public key is refused", sign(t, jwt.SigningMethodHS256, "k1", pubPEM, f.claims(nil)), http.StatusUnauthorized,
			refused("the token's signature does not verify (or its algorithm is not one of RS256, PS256, ES256, EdDSA)")},
		{"an RS256 token under an EC key's kid is refused", sign(t, jwt.SigningMethodRS256, "ec", f.key, f.claims(nil)), http.StatusUnauthorized,
			refused("the token's key does not fit its algorithm")},
		{"an expired token is refused", f.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() }),
			http.StatusUnauthorized, refused("the token has expired")},
		{"a token not valid yet is refused", f.token(t, func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(2 * time.Minute).Unix() }),
			http.StatusUnauthorized, refused("the token is not valid yet")},
		{"a token without exp is refused", f.token(t, func(c jwt.MapClaims) { delete(c, "exp") }),
			http.StatusUnauthorized, refused("the token has no expiry (exp)")},
		{"a token without sub is refused", f.token(t, func(c jwt.MapClaims) { delete(c, "sub") }),
			http.StatusUnauthorized, refused("the token has no subject")},
		{"a token that is not a JWT is refused", "opaque-token-value", http.StatusUnauthorized, refused("the token is not a well-formed JWT")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, challenge := f.initialize(t, tt.token)
			if status != tt.status || challenge != tt.challenge {
				t.Errorf("status %d, challenge %s\nwant %d, %s", status, challenge, tt.status, tt.challenge)
			}
			if tt.token != "" && strings.Contains(f.logs.String(), tt.token) {
				t.Errorf("the token is in the logs:\n%s", f.logs.String())
			}
		})
	}
	if hits := f.is.jwksHits.Load(); hits != 1 {
		t.Errorf("the JWKS was fetched %d times, want once (unknown kids were not asked for)", hits)
	}
}

func TestAResourceServerFollowsKeyRotation(t *testing.T) {
	f := newAuthFixture(t, "")
	if status, _ := f.initialize(t, f.token(t, nil)); status != http.StatusOK {
		t.Fatalf("the first token: status %d", status)
	}
	// The issuer rotates: k2 in, k1 out.
	k2 := rsaKey(t, 1)
	f.is.publish("k2", k2)
	f.is.unpublish("k1")
	f.shift.Store(int64(31 * time.Second)) // past the least time between fetches
	rotated := sign(t, jwt.SigningMethodRS256, "k2", k2, f.claims(nil))
	if status, _ := f.initialize(t, rotated); status != http.StatusOK {
		t.Fatalf("a token under the new key: status %d, want 200 (the JWKS fetched again)", status)
	}
	if hits := f.is.jwksHits.Load(); hits != 2 {
		t.Errorf("the JWKS was fetched %d times, want 2", hits)
	}
	// An unknown kid, right after a fetch, is refused without asking the
	// issuer again.
	bogus := sign(t, jwt.SigningMethodRS256, "k3", k2, f.claims(nil))
	status, challenge := f.initialize(t, bogus)
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `error_description="the token's key is not in the issuer's JWKS"`) {
		t.Errorf("an unknown kid: status %d, challenge %s", status, challenge)
	}
	if hits := f.is.jwksHits.Load(); hits != 2 {
		t.Errorf("an unknown kid within 30 s of a fetch fetched the JWKS (%d fetches, want 2)", hits)
	}
	// The removed key's tokens stop working once the set is fetched again
	// (here: past the TTL).
	f.shift.Store(int64(time.Hour + 2*time.Minute))
	old := f.token(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(2 * time.Hour).Unix() })
	status, challenge = f.initialize(t, old)
	if status != http.StatusUnauthorized || !strings.Contains(challenge, `error_description="the token's key is not in the issuer's JWKS"`) {
		t.Errorf("a token of the removed key: status %d, challenge %s", status, challenge)
	}
	if hits := f.is.jwksHits.Load(); hits != 3 {
		t.Errorf("the JWKS was fetched %d times, want 3", hits)
	}
}

func TestAResourceServerPublishesItsMetadata(t *testing.T) {
	f := newAuthFixture(t, "whoami\nadmin_* admin tools:read\n")
	want := fmt.Sprintf(`{"resource":%q,"authorization_servers":[%q],"scopes_supported":["admin","tools:read"],"bearer_methods_supported":["header"],"resource_name":"dsh"}`,
		f.audience, f.is.srv.URL)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		t.Run("GET "+path+" answers the metadata", func(t *testing.T) {
			res, err := http.Get(f.base + path)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusOK || strings.TrimSpace(string(b)) != want || res.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d, %s: %s\nwant %s", res.StatusCode, res.Header.Get("Content-Type"), b, want)
			}
		})
	}
}

// bearerClient connects an MCP client to f with token.
func (f *authFixture) connect(t *testing.T, token string) *sdk.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport{token: token}}
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestATokenSeesAndCallsOnlyTheToolsItsScopesCover(t *testing.T) {
	f := newAuthFixture(t, "# tool scopes\nwhoami\nadmin_* admin tools:read\n")
	for _, tt := range []struct {
		name    string
		scope   string
		tools   []string
		refused []string
	}{
		{"a token of tools:read sees only the open tool", "tools:read", []string{"whoami"}, []string{"admin_audit", "admin_reset"}},
		{"a token of admin alone sees only the open tool", "admin", []string{"whoami"}, []string{"admin_reset"}},
		{"a token of admin and tools:read sees every tool", "admin tools:read", []string{"admin_audit", "admin_reset", "whoami"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := f.connect(t, f.token(t, func(c jwt.MapClaims) { c["scope"] = tt.scope }))
			lr, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range lr.Tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.tools) {
				t.Errorf("tools %v, want %v", names, tt.tools)
			}
			for _, name := range tt.refused {
				_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("unknown tool %q", name)) {
					t.Errorf("calling %s: %v, want unknown tool", name, err)
				}
			}
			for _, name := range tt.tools {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil || res.IsError {
					t.Errorf("calling %s: %v %+v", name, err, res)
				}
			}
		})
	}
}

func TestACallRunsForTheTokensCaller(t *testing.T) {
	f := newAuthFixture(t, "")
	for _, tt := range []struct {
		name   string
		edit   func(jwt.MapClaims)
		caller string
	}{
		{"scope and client_id are read", nil, `{"subject":"alice","clientId":"cli-1","scopes":["tools:read"],"anonymous":false}`},
		{"azp stands for client_id and scp for scope", func(c jwt.MapClaims) {
			delete(c, "client_id")
			delete(c, "scope")
			c["azp"] = "cli-2"
			c["scp"] = []string{"a", "b"}
		}, `{"subject":"alice","clientId":"cli-2","scopes":["a","b"],"anonymous":false}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := f.connect(t, f.token(t, tt.edit))
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*sdk.TextContent).Text; got != tt.caller {
				t.Errorf("caller %s, want %s", got, tt.caller)
			}
		})
	}
}

func TestACallWithoutAVerifiedTokenHasNoCaller(t *testing.T) {
	srv := whoamiServer(t, nil, nil)
	hs := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{Token: "s3cret"}))
	t.Cleanup(hs.Close) // after the client's session closes
	cs := (&authFixture{url: hs.URL}).connect(t, "s3cret")
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Content[0].(*sdk.TextContent).Text, `{"subject":"","clientId":"","scopes":null,"anonymous":true}`; got != want {
		t.Errorf("caller %s, want %s", got, want)
	}
}

func TestAnIssuersFailuresAreTheServersNotTheTokens(t *testing.T) {
	key := rsaKey(t, 0)
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc // the issuer; meta writes its metadata
		log     string
	}{
		{"an issuer without metadata answers 503", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			"publishes no authorization-server or OpenID metadata"},
		{"a JWKS over 1 MiB answers 503", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/jwks" {
				fmt.Fprintf(w, `{"keys":[],"pad":%q}`, strings.Repeat("x", 1<<20))
				return
			}
			http.NotFound(w, r)
		}, "is over 1048576 bytes"},
		{"a JWKS answering 500 answers 503", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down", http.StatusInternalServerError)
		}, "500 Internal Server Error"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var srv *httptest.Server
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/.well-known/oauth-authorization-server" && !strings.Contains(tt.name, "without metadata") {
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprintf(w, `{"issuer":%q,"jwks_uri":%q,"code_challenge_methods_supported":["S256"]}`, srv.URL, srv.URL+"/jwks")
					return
				}
				tt.handler(w, r)
			}))
			defer srv.Close()
			logs := &syncbuf.Buffer{}
			rs, err := mcp.NewResourceServer(mcp.ResourceOptions{Issuer: srv.URL, Audience: "http://127.0.0.1/mcp",
				Logger: slog.New(slog.NewTextHandler(logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(whoamiServer(t, nil, nil).HTTPHandler(mcp.HTTPOptions{Resource: rs}))
			defer hs.Close()
			token := sign(t, jwt.SigningMethodRS256, "k1", key, jwt.MapClaims{"iss": srv.URL, "aud": "http://127.0.0.1/mcp", "sub": "a", "exp": time.Now().Add(time.Minute).Unix()})
			status, _, body := postAs(t, hs.URL, "", initBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) })
			if want := "Service Unavailable: the authorization server's keys cannot be fetched\n"; status != http.StatusServiceUnavailable || body != want {
				t.Errorf("status %d, body %q; want 503, %q", status, body, want)
			}
			if !strings.Contains(logs.String(), tt.log) || strings.Contains(logs.String(), token) {
				t.Errorf("logs %s\nwant %q, and never the token", logs.String(), tt.log)
			}
		})
	}
}

func TestResourceOptionsAreChecked(t *testing.T) {
	for _, tt := range []struct {
		name             string
		issuer, audience string
		err              string
	}{
		{"an http issuer beyond loopback is refused", "http://auth.example", "https://mcp.example/mcp", `OAuth issuer "http://auth.example": want https (http only on loopback)`},
		{"a relative audience is refused", "https://auth.example", "/mcp", `OAuth audience "/mcp": want an absolute https URL`},
		{"an audience with a fragment is refused", "https://auth.example", "https://mcp.example/mcp#x", `OAuth audience "https://mcp.example/mcp#x": want a URL without query or fragment`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.NewResourceServer(mcp.ResourceOptions{Issuer: tt.issuer, Audience: tt.audience})
			if err == nil || err.Error() != tt.err {
				t.Errorf("error %v, want %s", err, tt.err)
			}
		})
	}
}

func TestToolScopes(t *testing.T) {
	ts, err := mcp.ParseToolScopes(strings.NewReader("# comment\n\nread_* read # files\ngithub__* repo read:org\nping   # open\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		tool   string
		scopes []string
		want   bool
	}{
		{"a tool of a rule is covered by its scope", "read_file", []string{"read"}, true},
		{"a tool of a rule is not covered without its scope", "read_file", []string{"write"}, false},
		{"a rule of two scopes needs both", "github__issues", []string{"repo"}, false},
		{"a rule of two scopes is met by both", "github__issues", []string{"read:org", "repo"}, true},
		{"a rule without scopes opens its tool to any token", "ping", nil, true},
		{"a tool no rule matches is covered by no token", "shell", []string{"read", "repo", "read:org"}, false},
		{"the first matching rule decides", "read_secret", []string{"read"}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := ts.Covers(tt.tool, tt.scopes); got != tt.want {
				t.Errorf("Covers(%q, %v) = %v, want %v", tt.tool, tt.scopes, got, tt.want)
			}
		})
	}
	if got, want := ts.Scopes(), []string{"read", "read:org", "repo"}; !slices.Equal(got, want) {
		t.Errorf("Scopes() = %v, want %v", got, want)
	}
	if _, err := mcp.ParseToolScopes(strings.NewReader("ok\n[bad x\n")); err == nil || err.Error() != `line 2: "[bad" is not a valid glob` {
		t.Errorf("a bad glob: %v", err)
	}
}

func TestASessionStaysItsCallers(t *testing.T) {
	f := newAuthFixture(t, "")
	alice := f.token(t, nil)
	mallory := f.token(t, func(c jwt.MapClaims) { c["sub"] = "mallory" })
	status, session, _ := postAs(t, f.url, "", initBody, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+alice) })
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: status %d, session %q", status, session)
	}
	defer func() {
		req, _ := http.NewRequest(http.MethodDelete, f.url, nil)
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Authorization", "Bearer "+alice)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}()
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	status, _, body := postAs(t, f.url, session, list, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+mallory) })
	if want := "session user mismatch\n"; status != http.StatusForbidden || body != want {
		t.Errorf("another subject's request: status %d, body %q; want 403, %q", status, body, want)
	}
	status, _, _ = postAs(t, f.url, session, list, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+alice) })
	if status != http.StatusOK {
		t.Errorf("the session's own caller: status %d, want 200", status)
	}
}

// Hostile tokens and issuers: each is refused with a short reason within
// its bound, and the next good request is served.
func TestHostileTokensAndIssuers(t *testing.T) {
	t.Run("a token over 16 KiB is refused unparsed", func(t *testing.T) {
		f := newAuthFixture(t, "")
		long := f.token(t, func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", 20<<10) })
		status, challenge := f.initialize(t, long)
		if status != http.StatusUnauthorized || !strings.HasSuffix(challenge, `error_description="the token is too long"`) {
			t.Errorf("status %d, challenge %s", status, challenge)
		}
		if hits := f.is.jwksHits.Load(); hits != 0 {
			t.Errorf("the JWKS was fetched %d times for a token too long, want 0", hits)
		}
		if status, _ := f.initialize(t, f.token(t, nil)); status != http.StatusOK {
			t.Errorf("the next good token: status %d", status)
		}
	})
	t.Run("a JWKS of 5000 keys is cut to 100", func(t *testing.T) {
		f := newAuthFixture(t, "")
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		for i := range 5000 {
			f.is.publish(fmt.Sprintf("x%04d", i), ed)
		}
		// The test issuer writes its keys in map order, so which 100 are
		// kept varies; count how many of 20 sampled key ids verify.
		var served int
		for i := range 5000 {
			if i%250 != 0 {
				continue
			}
			tok := sign(t, jwt.SigningMethodEdDSA, fmt.Sprintf("x%04d", i), ed, f.claims(nil))
			if status, _ := f.initialize(t, tok); status == http.StatusOK {
				served++
			}
		}
		if served == 20 {
			t.Errorf("every sampled key of 5000 verified: the set is not bounded")
		}
	})
	t.Run("a hanging issuer answers 503 within the client's timeout, and recovers", func(t *testing.T) {
		var hang atomic.Bool
		hang.Store(true)
		release := make(chan struct{})
		defer close(release)
		is := newTestIssuer(t)
		key := rsaKey(t, 0)
		is.publish("k1", key)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hang.Load() {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			is.srv.Config.Handler.ServeHTTP(w, r)
		}))
		defer front.Close()
		var shift atomic.Int64
		rs, err := mcp.NewResourceServer(mcp.ResourceOptions{Issuer: is.srv.URL, Audience: "http://127.0.0.1/mcp",
			Client: &http.Client{Timeout: 300 * time.Millisecond, Transport: redirectTo(front.URL)},
			Now:    func() time.Time { return time.Now().Add(time.Duration(shift.Load())) }})
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(whoamiServer(t, nil, nil).HTTPHandler(mcp.HTTPOptions{Resource: rs}))
		t.Cleanup(hs.Close)
		token := sign(t, jwt.SigningMethodRS256, "k1", key, jwt.MapClaims{"iss": is.srv.URL, "aud": "http://127.0.0.1/mcp", "sub": "a", "exp": time.Now().Add(time.Hour).Unix()})
		auth := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
		start := time.Now()
		status, _, _ := postAs(t, hs.URL, "", initBody, auth)
		if elapsed := time.Since(start); status != http.StatusServiceUnavailable || elapsed > 5*time.Second {
			t.Errorf("status %d after %v, want 503 within the client's timeout", status, elapsed)
		}
		hang.Store(false)
		shift.Store(int64(31 * time.Second)) // past the least time between attempts
		status, session, _ := postAs(t, hs.URL, "", initBody, auth)
		if status != http.StatusOK {
			t.Errorf("after the issuer recovered: status %d, want 200", status)
		}
		if session != "" {
			req, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
			req.Header.Set("Mcp-Session-Id", session)
			auth(req)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		}
	})
}

// redirectTo sends every request to base's host instead.
type redirectTo string

func (b redirectTo) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Host = strings.TrimPrefix(string(b), "http://")
	return http.DefaultTransport.RoundTrip(r)
}

func TestAResourceServerCanIntrospectTokens(t *testing.T) {
	var answers = map[string]string{
		"opaque-good":     `{"active":true,"sub":"carol","client_id":"cli-9","scope":"read write","exp":%d}`,
		"opaque-revoked":  `{"active":false}`,
		"opaque-elsewise": `{"active":true,"sub":"carol","aud":["https://other.example/mcp"]}`,
		"opaque-expired":  `{"active":true,"sub":"carol","exp":%d}`,
	}
	introspect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id, secret, ok := r.BasicAuth(); !ok || id != "rs" || secret != "rs-secret" {
			http.Error(w, "unauthorized client", http.StatusUnauthorized)
			return
		}
		tok := r.PostFormValue("token")
		if tok == "opaque-down" {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		exp := time.Now().Add(time.Minute).Unix()
		if tok == "opaque-expired" {
			exp = time.Now().Add(-time.Hour).Unix()
		}
		if a, ok := answers[tok]; ok {
			fmt.Fprint(w, strings.ReplaceAll(a, "%d", fmt.Sprint(exp)))
			return
		}
		fmt.Fprint(w, `{"active":false}`)
	}))
	defer introspect.Close()
	logs := &syncbuf.Buffer{}
	rs, err := mcp.NewResourceServer(mcp.ResourceOptions{Issuer: "https://auth.example", Audience: "http://127.0.0.1/mcp",
		Introspection: &mcp.Introspection{URL: introspect.URL, ClientID: "rs", ClientSecret: "rs-secret"},
		Logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(whoamiServer(t, nil, nil).HTTPHandler(mcp.HTTPOptions{Resource: rs}))
	t.Cleanup(hs.Close)
	refused := func(reason string) string {
		return `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="` + reason + `"`
	}
	for _, tt := range []struct {
		name, token string
		status      int
		challenge   string
	}{
		{"an active token is served", "opaque-good", http.StatusOK, ""},
		{"a revoked token is refused", "opaque-revoked", http.StatusUnauthorized, refused("the token is not active (introspection)")},
		{"a token for another audience is refused", "opaque-elsewise", http.StatusUnauthorized, refused("the token is not for this resource (aud)")},
		{"an expired token is refused", "opaque-expired", http.StatusUnauthorized, refused("the token has expired")},
		{"an endpoint that fails answers 503", "opaque-down", http.StatusServiceUnavailable, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(initBody))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+tt.token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if s := res.Header.Get("Mcp-Session-Id"); s != "" {
				del, _ := http.NewRequest(http.MethodDelete, hs.URL, nil)
				del.Header.Set("Mcp-Session-Id", s)
				del.Header.Set("Authorization", "Bearer "+tt.token)
				if r, err := http.DefaultClient.Do(del); err == nil {
					r.Body.Close()
				}
			}
			if res.StatusCode != tt.status || res.Header.Get("WWW-Authenticate") != tt.challenge {
				t.Errorf("status %d, challenge %s\nwant %d, %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), tt.status, tt.challenge)
			}
		})
	}
	t.Run("the caller is the introspected one", func(t *testing.T) {
		cs := (&authFixture{url: hs.URL}).connect(t, "opaque-good")
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Content[0].(*sdk.TextContent).Text, `{"subject":"carol","clientId":"cli-9","scopes":["read","write"],"anonymous":false}`; got != want {
			t.Errorf("caller %s, want %s", got, want)
		}
	})
	for _, secret := range []string{"opaque-", "rs-secret"} {
		if strings.Contains(logs.String(), secret) {
			t.Errorf("%q is in the logs:\n%s", secret, logs.String())
		}
	}
}
