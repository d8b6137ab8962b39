package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine is the longest line "dsh serve" hands the MCP SDK on stdio:
// the SDK's own bound on a frame, past which it ends the session.
const maxStdioLine = sdk.DefaultMaxLineLength

// maxStdioDepth is the deepest nesting of arrays and objects a message may
// have: the SDK's decoder refuses a deeper one, and ends the session.
const maxStdioDepth = 1000

// stdioLines is the standard input of "dsh serve" on stdio, message by
// message. Only lines the MCP SDK can take become messages: a line the
// SDK's reader would end the session on (a line over maxStdioLine, which is
// read through without being held; a line that is not JSON; a message
// nested deeper than maxStdioDepth; a batch; anything that is not a
// JSON-RPC 2.0 message) is answered on out with the JSON-RPC error it
// earns, reported with warn, and dropped. A blank line is dropped. Each
// line is decoded once, by the check (see lineConn). It closes the input
// it reads.
type stdioLines struct {
	src  io.Reader
	in   *boundedLines
	out  io.Writer // shared with the SDK: one Write per message, never interleaved
	warn func(line int, msg string)
}

func newStdioLines(src io.Reader, out io.Writer, warn func(line int, msg string)) *stdioLines {
	return &stdioLines{src: src, in: newBoundedLines(src, maxStdioLine), out: out, warn: warn}
}

// message returns the next message the SDK can take.
func (s *stdioLines) message() (jsonrpc.Message, error) {
	for {
		line, err := s.in.next()
		var long *longLineError
		switch {
		case err == nil:
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			msg, bad := decodeStdioLine(line)
			if bad != nil {
				s.answer(s.in.n, bad)
				continue
			}
			return msg, nil
		case errors.As(err, &long):
			s.answer(long.Line, &badLine{
				id:      readableID(long.Head),
				code:    jsonrpc.CodeInvalidRequest,
				message: fmt.Sprintf("invalid request: the message has %d bytes, over the %d a message may have", long.Bytes, long.Max),
			})
		default:
			return nil, err
		}
	}
}

// answer writes bad's error response, and warns of it.
func (s *stdioLines) answer(line int, bad *badLine) {
	s.warn(line, bad.message)
	// A failed write is the client gone: the SDK's next write ends the session.
	_, _ = s.out.Write(bad.response())
}

// Close closes the input when it can be closed.
func (s *stdioLines) Close() error {
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// badLine is a line of standard input the SDK cannot take, and the error
// that answers it.
type badLine struct {
	id      json.RawMessage // the request's id as sent, or null
	code    int64
	message string
}

// response is the JSON-RPC error response to the line, newline ended, in
// the SDK's field order.
func (b *badLine) response() []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", b.id, jsonrpc.Error{Code: b.code, Message: b.message}})
	return buf.Bytes()
}

// decodeStdioLine decodes line as the SDK does, or returns what is wrong
// with it for the SDK.
func decodeStdioLine(line []byte) (jsonrpc.Message, *badLine) {
	if depth := jsonDepth(line); depth > maxStdioDepth {
		return nil, &badLine{id: readableID(line), code: jsonrpc.CodeInvalidRequest,
			message: fmt.Sprintf("invalid request: the message is nested deeper than the %d levels it may have", maxStdioDepth)}
	}
	if !json.Valid(line) {
		var raw json.RawMessage
		err := json.Unmarshal(line, &raw)
		msg := "parse error"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &badLine{id: readableID(line), code: jsonrpc.CodeParseError, message: msg}
	}
	switch bytes.TrimLeft(line, " \t\r\n")[0] {
	case '[':
		return nil, &badLine{id: null, code: jsonrpc.CodeInvalidRequest, message: "batch requests are not supported"}
	case '{':
	default:
		return nil, &badLine{id: null, code: jsonrpc.CodeInvalidRequest, message: "invalid request: a message is a JSON object"}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		m := readMembers(line)
		reason := "invalid request: " + err.Error()
		var wire *jsonrpc.Error
		switch {
		case string(m.version) != `"2.0"`:
			reason = `invalid request: "jsonrpc" must be "2.0"`
		case m.badID:
			reason = `invalid request: "id" must be a string, a number or null`
		case errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidRequest:
			reason = `invalid request: a message has a "method", or answers an "id"`
		}
		return nil, &badLine{id: m.id, code: jsonrpc.CodeInvalidRequest, message: reason}
	}
	return msg, nil
}

var null = json.RawMessage("null")

// jsonDepth returns how deep the arrays and objects of a JSON text nest, as
// the SDK's decoder counts them (strings skipped, brackets counted).
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return deepest
}

// readableID returns the "id" member of the JSON object data begins with,
// when it is a string or a number read before data ends or stops being JSON
// (a line cut short, or nested past any decoder's bound after its id), or
// null.
func readableID(data []byte) json.RawMessage { return readMembers(data).id }

// members are the members of a JSON-RPC message that name it.
type members struct {
	id      json.RawMessage // a string or a number; null when absent or of another type
	badID   bool            // "id" is an object, an array or a boolean
	version json.RawMessage // "jsonrpc" when a string or a number; nil when absent
}

// readMembers reads the members of the JSON object data begins with, up to
// where data ends or stops being JSON. Containers are skipped token by
// token, so no depth bounds it.
func readMembers(data []byte) members {
	m := members{id: null}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return m
	}
	for {
		key, err := dec.Token()
		k, ok := key.(string)
		if err != nil || !ok {
			return m
		}
		val, err := dec.Token()
		if err != nil {
			return m
		}
		var raw json.RawMessage
		switch v := val.(type) {
		case json.Delim:
			if skipJSON(dec) != nil {
				return m
			}
		case string:
			raw, _ = json.Marshal(v)
		case json.Number:
			raw = json.RawMessage(v)
		}
		switch k {
		case "id":
			m.id, m.badID = raw, raw == nil && val != nil
			if raw == nil {
				m.id = null
			}
		case "jsonrpc":
			m.version = raw
		}
	}
}

// skipJSON reads the rest of the array or object whose opening token dec
// has just returned.
func skipJSON(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

// stdioTransport is dsh's MCP transport on stdio: newline delimited
// messages read from stdioLines (a lineConn), whose requests must carry ids
// not already in flight (the SDK drops a request reusing one without an
// answer: dsh answers it with an error).
type stdioTransport struct {
	in  *stdioLines
	out io.Writer
}

// Connect implements sdk.Transport.
func (t *stdioTransport) Connect(context.Context) (sdk.Connection, error) {
	return &stdioConn{Connection: newLineConn(t.in, t.out), inFlight: map[jsonrpc.ID]struct{}{}}, nil
}

// stdioConn is a connection that answers a request whose id is already in
// flight with an error, rather than handing it to the server, and gives
// the SDK's refusal of a request before initialize a JSON-RPC code.
type stdioConn struct {
	sdk.Connection
	mu       sync.Mutex
	inFlight map[jsonrpc.ID]struct{} // the ids of the client's requests not yet answered
}

// Read implements sdk.Connection.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
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
		_, dup := c.inFlight[req.ID]
		if !dup {
			c.inFlight[req.ID] = struct{}{}
		}
		c.mu.Unlock()
		if !dup {
			return msg, nil
		}
		resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "request id already in use"}}
		if err := c.Connection.Write(ctx, resp); err != nil {
			return nil, err
		}
	}
}

// Write implements sdk.Connection. A response frees its id before it is
// written: the client may reuse the id as soon as it reads the response.
// The SDK's refusals of a request out of the session's lifecycle, errors
// without a code, go out as invalid requests (see lifecycleError).
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.inFlight, resp.ID)
		c.mu.Unlock()
		if e := lifecycleError(resp.Error); e != nil {
			cp := *resp
			cp.Error = e
			msg = &cp
		}
	}
	return c.Connection.Write(ctx, msg)
}

// lifecycleError returns the error that answers a request the SDK refused
// because it came before initialize, or was a second initialize; nil when
// err is neither. The SDK (v1.8.0) refuses them with plain errors, which go
// out with code 0. The SDK alone knows which requests pass its gate (ping,
// and the sessionless requests of protocol 2026-07-28, which carry their
// version in _meta), so dsh keeps its decision and gives it code -32600
// (invalid request), as dsh serve's HTTP handler answers a request without
// a session:
//
//	method "tools/list" is invalid before initialize: send initialize first
//	duplicate "initialize" received
func lifecycleError(err error) *jsonrpc.Error {
	var wire *jsonrpc.Error
	if err == nil || errors.As(err, &wire) {
		return nil
	}
	msg := err.Error()
	if msg == `duplicate "initialize" received` {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
	}
	rest, ok := strings.CutPrefix(msg, "method ")
	if !ok {
		return nil
	}
	quoted, ok := strings.CutSuffix(rest, " is invalid during session initialization")
	if !ok {
		return nil
	}
	method, uerr := strconv.Unquote(quoted)
	if uerr != nil {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: fmt.Sprintf("method %q is invalid before initialize: send initialize first", method)}
}
