package mcp

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxPendingRequests is the default of
// [Options.MaxPendingRequests].
const DefaultMaxPendingRequests = 64

// CodeTooManyRequests is the JSON-RPC error code with which dsh refuses a
// request from an imported server that has too many requests in flight
// already: -32000, the first of the codes JSON-RPC leaves to servers.
const CodeTooManyRequests = -32000

func (o *Options) maxPendingRequests() int {
	if o.MaxPendingRequests > 0 {
		return o.MaxPendingRequests
	}
	return DefaultMaxPendingRequests
}

// tooManyRequests is the error answering a request past the cap.
func tooManyRequests(max int) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    CodeTooManyRequests,
		Message: "too many requests in flight from this server: at most " + strconv.Itoa(max) + " at once",
	}
}

// boundRequests bounds what an imported server's requests to dsh (roots,
// sampling, elicitation, ping) hold, in two ways:
//
//   - on a stream transport (stdio, or one of a Dial that is not the SDK's
//     HTTP client), a request counts from the moment it is read until its
//     answer is written: past the cap, the reader answers it with a
//     [CodeTooManyRequests] error itself, and a server that does not read
//     its answers blocks that write and so stops being read. The requests
//     held, and the goroutines answering them, are at most the cap.
//   - over the SDK's streamable HTTP and SSE transports, whose connections
//     a wrapper would break, a request counts from the moment its event is
//     read until the POST of its answer is answered, and at the cap dsh
//     stops reading the server's event streams (see watchHTTP): a server
//     that does not read its answers stalls its own streams.
//   - on every transport, a receiving middleware counts the requests being
//     handled and answers past the cap with the same error at once, so
//     that handlers that wait (a question forwarded to a person) do not
//     hold the place of the others for long.
func (s *server) boundRequests(client *sdk.Client, t sdk.Transport) sdk.Transport {
	max := s.c.opts.maxPendingRequests()
	client.AddReceivingMiddleware(pendingMiddleware(max))
	if t, ok := watchHTTP(t, func(h *httpWatch) { h.pending = newHTTPPending(max) }); ok {
		return t
	}
	return &pendingTransport{Transport: t, max: max}
}

// pendingMiddleware refuses requests past max being handled at once.
func pendingMiddleware(max int) sdk.Middleware {
	var n atomic.Int64
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			if n.Add(1) > int64(max) {
				n.Add(-1)
				return nil, tooManyRequests(max)
			}
			defer n.Add(-1)
			return next(ctx, method, req)
		}
	}
}

// pendingTransport makes connections that count the server's requests in
// flight (see [server.boundRequests]).
type pendingTransport struct {
	sdk.Transport
	max int
}

func (t *pendingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &pendingConn{Connection: conn, max: t.max, inFlight: map[jsonrpc.ID]struct{}{}}, nil
}

// pendingConn is a connection whose peer's requests are counted from
// their reading to the writing of their answers.
type pendingConn struct {
	sdk.Connection
	max int

	mu       sync.Mutex
	inFlight map[jsonrpc.ID]struct{}
}

// Read returns the next message, answering the requests past the cap with
// an error instead of returning them.
func (c *pendingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return msg, nil
		}
		c.mu.Lock()
		_, reused := c.inFlight[req.ID] // the SDK answers it: the ID is in use
		full := !reused && len(c.inFlight) >= c.max
		if !reused && !full {
			c.inFlight[req.ID] = struct{}{}
		}
		c.mu.Unlock()
		if !full {
			return msg, nil
		}
		if err := c.Connection.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: tooManyRequests(c.max)}); err != nil {
			return nil, err
		}
	}
}

// Write writes msg; an answer frees its request's place.
func (c *pendingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	err := c.Connection.Write(ctx, msg)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.inFlight, resp.ID)
		c.mu.Unlock()
	}
	return err
}
