package mcp

import (
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configures [Server.HTTPHandler].
type HTTPOptions struct {
	// Token, when set, is the bearer token every request must carry
	// ("Authorization: Bearer <token>", the scheme in any case); others
	// get 401.
	Token string
	// Resource, when set, makes the server an OAuth protected resource:
	// every request must carry an access token it verifies (see
	// [ResourceServer]), and Token is not consulted. Mount its
	// MetadataHandler at its MetadataPaths.
	Resource *ResourceServer
	// AllowedHosts are the host names (without port) a request's Host may
	// name besides the loopback ones (localhost, 127.0.0.1, ::1); "*"
	// allows any. An Origin whose host is one of them by name is allowed
	// too; "*" opens the Host check only, never the Origin check.
	AllowedHosts []string
	// AllowedOrigins are origins ("https://app.example") allowed besides
	// loopback ones and those of AllowedHosts' names.
	AllowedOrigins []string
	// MaxRequestBytes caps a request body (413 past it); zero is
	// sdk.DefaultMaxRequestBodyBytes (4 MiB).
	MaxRequestBytes int64
	// SessionTimeout closes a session that sent no request for this long
	// (zero: [DefaultSessionTimeout]; negative: never), so that clients
	// that vanish do not hold their sessions forever.
	SessionTimeout time.Duration
	// ReplayBytes bounds the events kept for clients resuming a broken
	// stream (Last-Event-ID), over all sessions (zero:
	// [DefaultReplayBytes]; negative: no resumption).
	ReplayBytes int
	// MaxSessions caps the sessions open at once (zero:
	// [DefaultMaxSessions]; negative: no cap). A new session past it
	// closes the session idle for longest, or is refused with 503 and a
	// [CodeTooManySessions] error when every session is busy.
	MaxSessions int
	// PollAfter, when positive, closes the stream of a request still
	// running after this long, with a retry delay of [PollRetry], so that
	// no response stream stays open longer than a proxy may allow: the
	// client reconnects with Last-Event-ID and gets the answer from the
	// replay store (SEP-1699). It needs the replay store (ReplayBytes not
	// negative) and applies to clients of protocol versions 2025-11-25 up
	// to 2026-07-28; zero or negative: never.
	PollAfter time.Duration
}

// Defaults of [HTTPOptions].
const (
	DefaultSessionTimeout = 30 * time.Minute
	DefaultReplayBytes    = 10 << 20
)

// HTTPHandler returns the streamable HTTP handler of the server, behind
// checks against DNS rebinding and cross-site requests: a Host that is not
// loopback or allowed is refused with 403, and so is an Origin header that
// is neither (a request without Origin, from a client that is not a
// browser, passes); then a missing or wrong bearer token gets 401 with a
// WWW-Authenticate challenge, and a body longer than the cap 413. A POST
// without an Mcp-Session-Id header that is a request other than
// initialize (or ping) gets 400 with a JSON-RPC error -32600 (see
// [CodeNoSession]). A request whose Mcp-Protocol-Version names an older
// version than its session negotiated is served as its session's (see
// sessionVersions), and with PollAfter set long requests are polled (see
// [HTTPOptions.PollAfter]).
func (s *Server) HTTPHandler(opts HTTPOptions) http.Handler {
	max := opts.MaxRequestBytes
	if max <= 0 {
		max = sdk.DefaultMaxRequestBodyBytes
	}
	sopts := &sdk.StreamableHTTPOptions{
		Logger:              s.logger,
		MaxRequestBodyBytes: max,
		SessionTimeout:      opts.SessionTimeout,
	}
	switch {
	case sopts.SessionTimeout == 0:
		sopts.SessionTimeout = DefaultSessionTimeout
	case sopts.SessionTimeout < 0:
		sopts.SessionTimeout = 0
	}
	if opts.ReplayBytes >= 0 {
		store := sdk.NewMemoryEventStore(nil)
		if opts.ReplayBytes > 0 {
			store.SetMaxBytes(opts.ReplayBytes)
		} else {
			store.SetMaxBytes(DefaultReplayBytes)
		}
		sopts.EventStore = store
	}
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.server }, sopts)
	maxSessions := opts.MaxSessions
	if maxSessions == 0 {
		maxSessions = DefaultMaxSessions
	}
	if opts.PollAfter > 0 && sopts.EventStore != nil {
		s.pollAfter.Store(int64(opts.PollAfter))
	}
	g := &guard{next: s.sessionVersions(s.capSessions(s.endingSessions(h), maxSessions)), opts: opts, max: max}
	if opts.Resource != nil {
		g.next = opts.Resource.tokenInfo(g.next)
	}
	return g
}

// guard is the checks in front of the SDK's handler.
type guard struct {
	next http.Handler
	opts HTTPOptions
	max  int64
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(hostname(r.Host)) {
		http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		http.Error(w, "Forbidden: invalid Origin header", http.StatusForbidden)
		return
	}
	if g.opts.Resource != nil {
		var ok bool
		if r, ok = g.opts.Resource.authorize(w, r); !ok {
			return
		}
	} else if g.opts.Token != "" {
		got, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.opts.Token)) != 1 {
			challenge := `Bearer realm="dsh"`
			if ok {
				challenge += `, error="invalid_token"`
			}
			w.Header().Set("WWW-Authenticate", challenge)
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
	}
	if r.ContentLength > g.max {
		http.Error(w, "Request Entity Too Large", http.StatusRequestEntityTooLarge)
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && !g.sessionless(w, r) {
		return
	}
	g.next.ServeHTTP(w, r)
}

// bearerToken returns the token of an Authorization header of the Bearer
// scheme, whose name is case-insensitive (RFC 9110 §11.1), and whether it
// is one.
func bearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimSpace(token), true
}

// hostAllowed reports whether a Host (or Origin) host name is loopback or
// allowed.
func (g *guard) hostAllowed(host string) bool {
	if host == "" {
		return false
	}
	return isLoopback(host) || slices.Contains(g.opts.AllowedHosts, "*") ||
		slices.ContainsFunc(g.opts.AllowedHosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// originAllowed reports whether an Origin header is allowed: listed in
// AllowedOrigins, or naming a loopback host or one AllowedHosts names. The
// wildcard "*" of AllowedHosts, which a server bound to every interface
// needs for its Host check, does not count: a page from any site would
// otherwise reach the server through the browser of a user on it.
func (g *guard) originAllowed(origin string) bool {
	if slices.Contains(g.opts.AllowedOrigins, origin) {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	host := u.Hostname()
	return isLoopback(host) ||
		slices.ContainsFunc(g.opts.AllowedHosts, func(h string) bool { return h != "*" && strings.EqualFold(h, host) })
}

// hostname is a Host header without its port and brackets.
func hostname(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// isLoopback reports whether host names the local machine: localhost (or a
// name under .localhost) or a loopback address.
func isLoopback(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
