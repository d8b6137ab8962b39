package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sseTransport is the SDK's legacy HTTP+SSE client transport (a config's
// type "sse") with its stream's life made the connection's own: the SDK's
// transport reads its event stream under the context given to Connect,
// which for an import is the attempt's (bounded by the connect timeout,
// cancelled when the attempt ends). Here that context bounds Connect only;
// the stream then lasts until the connection is closed.
type sseTransport struct {
	t *sdk.SSEClientTransport
}

// Connect opens the event stream and waits for its endpoint, giving up
// when ctx ends first.
func (t *sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.t.Connect(sctx)
	if err != nil || !stop() {
		// Failed, or ctx ended (and cancelled the stream) as it connected.
		cancel()
		if err == nil {
			_ = conn.Close()
			err = context.Cause(ctx)
		}
		return nil, err
	}
	return &sseConn{Connection: conn, cancel: cancel}, nil
}

// sseConn is a connection of an sseTransport: closing it also ends its
// stream's context.
type sseConn struct {
	sdk.Connection
	cancel context.CancelFunc
}

// Close closes the connection.
func (c *sseConn) Close() error {
	defer c.cancel()
	return c.Connection.Close()
}
