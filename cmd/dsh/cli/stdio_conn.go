package cli

import (
	"context"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// lineConn is the MCP connection of "dsh serve" on stdio: the messages of
// stdioLines, decoded once as they are checked, and each message written
// as one line in one Write. It does what the SDK's IOTransport does over
// the same streams (a goroutine reads ahead, so that Close unblocks a Read;
// Read and Write fail once their context is done) without decoding each
// line twice more: the SDK's reader re-reads the JSON text, tries it as a
// batch, then decodes it again (each decode of the SDK's allocating a
// 32 KiB buffer), where dsh's check has decoded it already (BENCHMARKS.md,
// "MCP gateway (issue 26)"). Batches never reach it: stdioLines answers
// them, so it needs none of the SDK's batch handling.
type lineConn struct {
	in       *stdioLines
	out      io.Writer
	incoming chan lineMsg
	closed   chan struct{}
	once     sync.Once
	closeErr error
}

// lineMsg is a message read, or the error that ended the reading.
type lineMsg struct {
	msg jsonrpc.Message
	err error
}

// newLineConn starts reading in's messages, and returns the connection
// that hands them over and writes to out.
func newLineConn(in *stdioLines, out io.Writer) *lineConn {
	c := &lineConn{in: in, out: out, incoming: make(chan lineMsg), closed: make(chan struct{})}
	go c.read()
	return c
}

// read reads the messages until the input ends or fails, or the
// connection is closed.
func (c *lineConn) read() {
	for {
		msg, err := c.in.message()
		select {
		case c.incoming <- lineMsg{msg, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read implements sdk.Connection.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case m := <-c.incoming:
		return m.msg, m.err
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements sdk.Connection: msg as one newline-ended line, in one
// Write (out is shared with stdioLines' answers).
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// Close implements sdk.Connection: it closes the input (see
// stdioLines.Close) and unblocks a Read.
func (c *lineConn) Close() error {
	c.once.Do(func() {
		c.closeErr = c.in.Close()
		close(c.closed)
	})
	return c.closeErr
}

// SessionID implements sdk.Connection: a stdio connection has none.
func (c *lineConn) SessionID() string { return "" }
