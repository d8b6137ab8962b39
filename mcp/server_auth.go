package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/dsh-go/dsh/engine"
)

// Bounds of the resource server.
const (
	// TokenSkew is the clock skew allowed on a token's exp and nbf.
	TokenSkew = 60 * time.Second
	// maxTokenBytes caps an access token: a longer one is refused
	// unparsed.
	maxTokenBytes = 16 << 10
	// issuerTimeout bounds each request to the authorization server
	// (metadata, JWKS).
	issuerTimeout = 10 * time.Second
	// wellKnownResource is the path of protected-resource metadata
	// (RFC 9728 §3).
	wellKnownResource = "/.well-known/oauth-protected-resource"
)

// tokenAlgorithms are the JWS algorithms an access token may be signed
// with: asymmetric ones only, never "none" or an HMAC (whose secret a
// resource server would have to share, and which a forger would key with
// the public key).
var tokenAlgorithms = []string{"RS256", "PS256", "ES256", "EdDSA"}

// ResourceOptions configures [NewResourceServer].
type ResourceOptions struct {
	// Issuer is the authorization server's issuer identifier (an https
	// URL, or http on loopback): tokens must name it in "iss", and its
	// keys are found through its metadata (RFC 8414, then OpenID
	// discovery).
	Issuer string
	// Audience is the resource identifier, the URL clients reach the
	// server at (such as https://mcp.example.com/mcp): tokens must name it
	// in "aud", and the protected-resource metadata names it.
	Audience string
	// ToolScopes, when set, is used by [Server] (ServerOptions.ToolScopes)
	// to decide which tools a token sees; here it only names the scopes
	// the metadata lists as supported.
	ToolScopes *ToolScopes
	// Client fetches the issuer's metadata and keys (default: a client
	// with a 10 s timeout). Responses are bounded at 1 MiB.
	Client *http.Client
	// Logger receives refused tokens' reasons (never the tokens) and
	// the issuer's problems (default: discarded).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Introspection, when set, has every token checked by the issuer's
	// introspection endpoint (RFC 7662) instead of verified as a JWT
	// (server_auth_introspect.go).
	Introspection *Introspection
}

// ResourceServer makes dsh serve an OAuth protected resource (RFC 9728):
// it publishes its metadata, and verifies each request's bearer token, a
// JWT access token signed by the issuer with one of RS256, PS256, ES256 or
// EdDSA, against the issuer's JWKS: its signature, "iss", "aud" (the
// audience), "exp" (required) and "nbf" within [TokenSkew]. The JWKS
// location comes from the issuer's metadata, found once (and again after
// a failure, at most every 30 s); the set is cached an hour and fetched
// again for a key id it lacks, at most every 30 s (jwks.go). With
// ResourceOptions.Introspection, the issuer's introspection endpoint
// judges every token instead (RFC 7662).
type ResourceServer struct {
	opts   ResourceOptions
	keys   *keySet
	logger *slog.Logger

	mu       sync.Mutex
	jwksURL  string
	located  time.Time // of the last failed discovery
	locErr   error
	metadata *oauthex.ProtectedResourceMetadata
}

// NewResourceServer checks opts and returns the resource server. Nothing
// is fetched yet: the issuer's metadata and keys are fetched on the first
// token.
func NewResourceServer(opts ResourceOptions) (*ResourceServer, error) {
	if err := checkOAuthURL("issuer", opts.Issuer); err != nil {
		return nil, err
	}
	if err := checkOAuthURL("audience", opts.Audience); err != nil {
		return nil, err
	}
	if in := opts.Introspection; in != nil {
		if err := checkOAuthURL("introspection endpoint", in.URL); err != nil {
			return nil, err
		}
		if in.ClientID == "" {
			return nil, fmt.Errorf("OAuth introspection endpoint %q: no client id to authenticate with", in.URL)
		}
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: issuerTimeout}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	rs := &ResourceServer{opts: opts, logger: opts.Logger}
	rs.keys = &keySet{client: opts.Client, locate: rs.locateJWKS, now: opts.Now}
	rs.metadata = &oauthex.ProtectedResourceMetadata{
		Resource:               opts.Audience,
		AuthorizationServers:   []string{opts.Issuer},
		BearerMethodsSupported: []string{"header"},
		ScopesSupported:        opts.ToolScopes.Scopes(),
		ResourceName:           "dsh",
	}
	return rs, nil
}

// checkOAuthURL checks that u is an absolute https URL, or http on a
// loopback host, without a fragment.
func checkOAuthURL(what, u string) error {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && p.Scheme != "http") {
		return fmt.Errorf("OAuth %s %q: want an absolute https URL", what, u)
	}
	if p.Scheme == "http" && !isLoopback(p.Hostname()) {
		return fmt.Errorf("OAuth %s %q: want https (http only on loopback)", what, u)
	}
	if p.Fragment != "" || p.RawQuery != "" {
		return fmt.Errorf("OAuth %s %q: want a URL without query or fragment", what, u)
	}
	return nil
}

// MetadataURL is the URL of the protected-resource metadata that the 401
// challenges name: the audience's origin, the well-known path, then the
// audience's path (RFC 9728 §3.1).
func (rs *ResourceServer) MetadataURL() string {
	u, _ := url.Parse(rs.opts.Audience)
	return u.Scheme + "://" + u.Host + rs.metadataPaths()[len(rs.metadataPaths())-1]
}

// MetadataPaths are the paths the metadata is served at: the well-known
// path alone and, for an audience with a path, suffixed with it (such as
// /.well-known/oauth-protected-resource/mcp).
func (rs *ResourceServer) MetadataPaths() []string { return rs.metadataPaths() }

func (rs *ResourceServer) metadataPaths() []string {
	u, _ := url.Parse(rs.opts.Audience)
	paths := []string{wellKnownResource}
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		paths = append(paths, wellKnownResource+p)
	}
	return paths
}

// MetadataHandler serves the protected-resource metadata (RFC 9728): the
// audience as the resource, the issuer as its authorization server, the
// scopes ToolScopes names.
func (rs *ResourceServer) MetadataHandler() http.Handler {
	return auth.ProtectedResourceMetadataHandler(rs.metadata)
}

// locateJWKS returns the issuer's jwks_uri from its metadata (RFC 8414,
// then OpenID discovery), found once; a failure is retried at most every
// jwksMinRefetch.
func (rs *ResourceServer) locateJWKS(ctx context.Context) (string, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.jwksURL != "" {
		return rs.jwksURL, nil
	}
	if rs.locErr != nil && rs.opts.Now().Sub(rs.located) < jwksMinRefetch {
		return "", rs.locErr
	}
	u, err := rs.discover(ctx)
	if err != nil {
		rs.located, rs.locErr = rs.opts.Now(), err
		return "", err
	}
	rs.jwksURL, rs.locErr = u, nil
	return u, nil
}

func (rs *ResourceServer) discover(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, issuerTimeout)
	defer cancel()
	meta, err := auth.GetAuthServerMetadata(ctx, rs.opts.Issuer, rs.opts.Client)
	if err != nil {
		return "", fmt.Errorf("the issuer's metadata: %v", err)
	}
	if meta == nil {
		return "", fmt.Errorf("the issuer %s publishes no authorization-server or OpenID metadata", rs.opts.Issuer)
	}
	if meta.JWKSURI == "" {
		return "", fmt.Errorf("the issuer %s's metadata names no jwks_uri", rs.opts.Issuer)
	}
	if err := checkOAuthURL("jwks_uri", meta.JWKSURI); err != nil {
		return "", err
	}
	return meta.JWKSURI, nil
}

// tokenError is a refused token: why, in words that never quote it, and
// whether the fault is the issuer's (its keys could not be had) rather
// than the token's.
type tokenError struct {
	reason string
	issuer bool
}

func (e *tokenError) Error() string { return e.reason }

// Verify checks an access token, as a JWT or, with Introspection set, at
// the introspection endpoint, and returns what the request carries on:
// its scopes, expiry and subject, with the client id in Extra
// ("client_id") and, as UserID, the issuer and subject (which the SDK
// binds each HTTP session to). Errors are *tokenError values.
func (rs *ResourceServer) Verify(ctx context.Context, token string) (*auth.TokenInfo, error) {
	if len(token) > maxTokenBytes {
		return nil, &tokenError{reason: "the token is too long"}
	}
	if rs.opts.Introspection != nil {
		return rs.introspect(ctx, token)
	}
	claims := jwt.MapClaims{}
	var keyErr error
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		k, err := rs.keys.key(ctx, kid)
		keyErr = err
		return k, err
	},
		jwt.WithValidMethods(tokenAlgorithms),
		jwt.WithIssuer(rs.opts.Issuer),
		jwt.WithAudience(rs.opts.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(TokenSkew),
		jwt.WithTimeFunc(rs.opts.Now),
	)
	if err != nil {
		return nil, tokenFailure(err, keyErr)
	}
	sub, _ := claims["sub"].(string)
	if sub == "" {
		return nil, &tokenError{reason: "the token has no subject"}
	}
	exp, _ := claims.GetExpirationTime()
	client, _ := claims["client_id"].(string)
	if client == "" {
		client, _ = claims["azp"].(string)
	}
	return &auth.TokenInfo{
		Scopes:     tokenScopes(claims),
		Expiration: exp.Time,
		UserID:     rs.opts.Issuer + " " + sub,
		Extra:      map[string]any{"sub": sub, "client_id": client},
	}, nil
}

// tokenFailure turns a parse error into a refusal that names its reason
// and never the token's content.
func tokenFailure(err, keyErr error) error {
	if keyErr != nil && !errors.Is(keyErr, errUnknownKey) {
		return &tokenError{reason: "the issuer's keys are unavailable: " + keyErr.Error(), issuer: true}
	}
	var reason string
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		reason = "the token is not a well-formed JWT"
	case errors.Is(err, jwt.ErrInvalidKeyType):
		reason = "the token's key does not fit its algorithm"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		reason = "the token's signature does not verify (or its algorithm is not one of " + strings.Join(tokenAlgorithms, ", ") + ")"
	case errors.Is(err, jwt.ErrTokenUnverifiable) && errors.Is(keyErr, errUnknownKey):
		reason = "the token's key is not in the issuer's JWKS"
	case errors.Is(err, jwt.ErrTokenExpired):
		reason = "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		reason = "the token is not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		reason = "the token is not for this resource (aud)"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		reason = "the token is not from the issuer (iss)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		reason = "the token has no expiry (exp)"
	default:
		reason = "the token is invalid"
	}
	return &tokenError{reason: reason}
}

// tokenScopes reads "scope" (space-separated, RFC 8693 and 9068) or "scp"
// (a list or a string, as some issuers write it).
func tokenScopes(claims jwt.MapClaims) []string {
	if s, ok := claims["scope"].(string); ok {
		return strings.Fields(s)
	}
	switch v := claims["scp"].(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// verifiedKey carries a request's verified token info from authorize to
// the SDK's middleware (tokenInfo).
type verifiedKey struct{}

// authorize is the guard's check when a resource server is set: a request
// without a bearer token gets 401 with a challenge naming the metadata, one
// whose token is refused 401 with error="invalid_token" and the reason (or
// 503 when the issuer's keys cannot be had); one that passes is returned
// with its token info on its context, for tokenInfo.
func (rs *ResourceServer) authorize(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok || token == "" {
		rs.challenge(w, "")
		return nil, false
	}
	ti, err := rs.Verify(r.Context(), token)
	if err != nil {
		var te *tokenError
		if errors.As(err, &te) && te.issuer {
			rs.logger.Warn("access token not verified", "reason", te.reason)
			http.Error(w, "Service Unavailable: the authorization server's keys cannot be fetched", http.StatusServiceUnavailable)
			return nil, false
		}
		rs.logger.Info("access token refused", "reason", err.Error())
		rs.challenge(w, err.Error())
		return nil, false
	}
	r = r.WithContext(context.WithValue(r.Context(), verifiedKey{}, ti))
	// RequireBearerToken (tokenInfo) reads the header again, with
	// strings.Fields: one token after the scheme.
	r.Header = r.Header.Clone()
	r.Header.Set("Authorization", "Bearer "+token)
	return r, true
}

// tokenInfo puts an authorized request's token info where the SDK reads it
// (auth.RequireBearerToken, with the verification authorize made), so that
// each tools/call learns its caller (RequestExtra.TokenInfo) and each
// session stays its user's.
func (rs *ResourceServer) tokenInfo(next http.Handler) http.Handler {
	return auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		if ti, ok := ctx.Value(verifiedKey{}).(*auth.TokenInfo); ok {
			return ti, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: rs.MetadataURL(), ClockSkew: TokenSkew,
		AllowMissingExpiration: rs.opts.Introspection != nil, // an active token without exp
	})(next)
}

// challenge answers 401 with a Bearer challenge naming the metadata and,
// for a refused token, error="invalid_token" and the reason (RFC 6750
// §3).
func (rs *ResourceServer) challenge(w http.ResponseWriter, reason string) {
	c := fmt.Sprintf(`Bearer resource_metadata=%q`, rs.MetadataURL())
	if reason != "" {
		c += fmt.Sprintf(`, error="invalid_token", error_description=%q`, reason)
	}
	w.Header().Set("WWW-Authenticate", c)
	http.Error(w, "Unauthorized", http.StatusUnauthorized)
}

// callerOf is the identity of a request's verified token, or nil.
func callerOf(extra *sdk.RequestExtra) *engine.Caller {
	if extra == nil || extra.TokenInfo == nil {
		return nil
	}
	ti := extra.TokenInfo
	sub, _ := ti.Extra["sub"].(string)
	client, _ := ti.Extra["client_id"].(string)
	return &engine.Caller{Subject: sub, ClientID: client, Scopes: append([]string(nil), ti.Scopes...)}
}
