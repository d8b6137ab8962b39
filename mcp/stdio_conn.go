package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one message a stdio server writes, as the SDK's
// IOTransport does by default: past it the connection ends.
const maxFrame = sdk.DefaultMaxLineLength

// errFrameTooLarge ends a connection whose server wrote a message over
// maxFrame.
var errFrameTooLarge = fmt.Errorf("the server wrote a message over %d bytes", maxFrame)

// frameConn is the connection to an imported stdio server: newline
// delimited JSON-RPC over the server's standard output and input, as the
// SDK's IOTransport reads and writes it (a goroutine reads ahead so that
// Close unblocks a Read; a message may span lines but must end its line;
// a batch is taken apart), with each message decoded once: the SDK's
// reader first tries every message as a batch, a second decode of each
// (with its own 32 KiB buffer) that the first byte settles
// (BENCHMARKS.md, "MCP gateway (issue 26)").
type frameConn struct {
	r io.ReadCloser  // the server's standard output
	w io.WriteCloser // its standard input

	writeMu sync.Mutex

	incoming chan frameMsgs
	closed   chan struct{}
	queue    []jsonrpc.Message // the rest of a batch; Read is never concurrent with itself

	once     sync.Once
	closeErr error
}

// frameMsgs is what one frame held, or the error that ended the reading.
type frameMsgs struct {
	msgs []jsonrpc.Message
	err  error
}

// newFrameConn starts reading r and returns the connection.
func newFrameConn(r io.ReadCloser, w io.WriteCloser) *frameConn {
	c := &frameConn{r: r, w: w, incoming: make(chan frameMsgs), closed: make(chan struct{})}
	go c.read()
	return c
}

// read decodes the frames until the output ends or fails, or the
// connection is closed.
func (c *frameConn) read() {
	limit := &frameLimit{r: c.r, left: maxFrame}
	dec := json.NewDecoder(limit)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == nil {
			err = endsLine(dec)
		}
		var msgs []jsonrpc.Message
		if err == nil {
			msgs, err = decodeFrame(raw)
		}
		select {
		case c.incoming <- frameMsgs{msgs, err}:
		case <-c.closed:
			return
		}
		if err != nil {
			return
		}
		limit.left = maxFrame
	}
}

// endsLine reports an error unless what follows the value dec just read
// (in its buffer) is the end of its line, or nothing yet.
func endsLine(dec *json.Decoder) error {
	var next [1]byte
	n, err := dec.Buffered().Read(next[:])
	if n == 0 {
		if err != nil && err != io.EOF {
			return err
		}
		return nil
	}
	if next[0] != '\n' && next[0] != '\r' {
		return errors.New("invalid trailing data at the end of a message")
	}
	return nil
}

// decodeFrame decodes one JSON value read from the server: a message, or
// a batch of them.
func decodeFrame(raw json.RawMessage) ([]jsonrpc.Message, error) {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{msg}, nil
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(raw, &batch); err != nil {
		return nil, err
	}
	if len(batch) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, len(batch))
	for i, m := range batch {
		msg, err := jsonrpc.DecodeMessage(m)
		if err != nil {
			return nil, err
		}
		msgs[i] = msg
	}
	return msgs, nil
}

// frameLimit reads at most left bytes for the frame being decoded.
type frameLimit struct {
	r    io.Reader
	left int
}

func (l *frameLimit) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errFrameTooLarge
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= n
	return n, err
}

// Read implements sdk.Connection.
func (c *frameConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		msg := c.queue[0]
		c.queue = c.queue[1:]
		return msg, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case f := <-c.incoming:
		if f.err != nil {
			select {
			case <-c.closed: // the error is Close's own
				return nil, io.EOF
			default:
			}
			return nil, f.err
		}
		c.queue = f.msgs[1:]
		return f.msgs[0], nil
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write implements sdk.Connection: msg as one line, in one Write.
func (c *frameConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding the message: %w", err)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err = c.w.Write(append(data, '\n'))
	return err
}

// Close implements sdk.Connection: it closes both streams and unblocks a
// Read.
func (c *frameConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

// SessionID implements sdk.Connection: a stdio connection has none.
func (c *frameConn) SessionID() string { return "" }
