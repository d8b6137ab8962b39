package mcp

import (
	"context"
	"net/http"
	"slices"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// PollRetry is the reconnection delay (the SSE retry field) a client is
// told to wait when the server closes the stream of a call still running
// past [HTTPOptions.PollAfter].
const PollRetry = time.Second

// Protocol versions that change how streams are resumed: 2025-11-25 brought
// the priming event and the server's closing of a request's stream
// (SEP-1699), 2026-07-28 removed resumption (SEP-2575).
const (
	resumableVersion   = "2025-11-25"
	unresumableVersion = "2026-07-28"
)

// protocolVersionHeader is the streamable HTTP header that names the
// protocol version of a request.
const protocolVersionHeader = "Mcp-Protocol-Version"

// pollCalls is a receiving middleware that, over streamable HTTP with
// polling on (see [HTTPOptions.PollAfter]), closes the stream of a request
// still running after the poll period, telling the client to come back in
// [PollRetry]: the client reconnects with a GET naming the last event it
// saw (Last-Event-ID) and gets the answer there, from the replay store.
// Only a request of a protocol version that resumes streams (2025-11-25 up
// to 2026-07-28, whose streams start with a priming event that carries an
// event ID) is polled; others, and stdio, are left alone.
func (s *Server) pollCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		after := time.Duration(s.pollAfter.Load())
		extra := req.GetExtra()
		if after <= 0 || extra == nil || extra.CloseSSEStream == nil || !resumable(extra.Header.Get(protocolVersionHeader)) {
			return next(ctx, method, req)
		}
		t := time.AfterFunc(after, func() { extra.CloseSSEStream(sdk.CloseSSEStreamArgs{RetryAfter: PollRetry}) })
		defer t.Stop()
		return next(ctx, method, req)
	}
}

// resumable reports whether a protocol version resumes streams.
func resumable(version string) bool {
	return version >= resumableVersion && version < unresumableVersion
}

// sessionVersions puts in front of next the session's protocol version in
// place of an older one a request's header names. The version is
// negotiated once, at initialize; a client that names an older one on a
// later request (the conformance suite's SSE polling scenario sends
// 2025-03-26 in a 2025-11-25 session) would otherwise lose, for that
// request, what its session's version brings: the priming event that lets
// it resume a stream, and the server's closing of the stream with a retry
// delay. A header naming no version, an unsupported one (which the SDK
// answers with 400), or a newer one than the session's is left alone.
func (s *Server) sessionVersions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		header := r.Header.Get(protocolVersionHeader)
		if id != "" && header != "" && header < resumableVersion &&
			slices.Contains(sdk.SupportedProtocolVersions(), header) {
			if v := s.sessionVersion(id); resumable(v) {
				r = r.Clone(r.Context())
				r.Header.Set(protocolVersionHeader, v)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sessionVersion returns the protocol version the session id asked for at
// initialize, when the SDK supports it (and so negotiated it), or "".
func (s *Server) sessionVersion(id string) string {
	for ss := range s.server.Sessions() {
		if ss.ID() != id {
			continue
		}
		if p := ss.InitializeParams(); p != nil && slices.Contains(sdk.SupportedProtocolVersions(), p.ProtocolVersion) {
			return p.ProtocolVersion
		}
		return ""
	}
	return ""
}
