package mcp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's HTTP client transports (streamable HTTP, legacy SSE) tell their
// connections of the session's state through an unexported method that a
// wrapping sdk.Connection would hide, so over HTTP dsh reads the JSON-RPC
// messages one level down instead, in the http.Client the transport is
// given: an httpWatch sees each request body dsh posts and each response
// body the server sends (an event stream, or one JSON message), and from
// them
//
//   - feeds a taskWatch the tools/list requests and their responses (see
//     watchTasks), and
//   - bounds the server's requests to dsh as pendingConn does on a stream:
//     a request counts from the moment its event is passed to the SDK
//     until the POST carrying its answer has been answered, and while
//     MaxPendingRequests count, the event streams are not read further. A
//     server that does not read dsh's answers stalls its own streams, and
//     dsh holds at most the cap of its requests.

// watchHTTP returns t, an SDK HTTP client transport (or dsh's sseTransport
// around one), with a copy of its
// http.Client whose transport is an httpWatch (or t itself, with set
// applied to its httpWatch, when it has one already), and true; other
// transports come back as they are, with false.
func watchHTTP(t sdk.Transport, set func(*httpWatch)) (sdk.Transport, bool) {
	var hc **http.Client
	var maxEvent int
	switch x := t.(type) {
	case *sdk.StreamableClientTransport:
		c := *x
		t, hc, maxEvent = &c, &c.HTTPClient, c.MaxEventSize
	case *sdk.SSEClientTransport:
		c := *x
		t, hc, maxEvent = &c, &c.HTTPClient, c.MaxEventSize
	case *sseTransport:
		c := *x.t
		t, hc, maxEvent = &sseTransport{t: &c}, &c.HTTPClient, c.MaxEventSize
	default:
		return t, false
	}
	client := *hc
	if client == nil {
		client = http.DefaultClient
	}
	if w, ok := client.Transport.(*httpWatch); ok {
		set(w)
		return t, true
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	if maxEvent <= 0 {
		maxEvent = sdk.DefaultMaxEventSize
	}
	w := &httpWatch{base: base, maxMessage: maxEvent}
	set(w)
	copied := *client
	copied.Transport = w
	*hc = &copied
	return t, true
}

// httpWatch is an http.RoundTripper reading an MCP HTTP transport's
// messages beside the SDK's client (see watchHTTP).
type httpWatch struct {
	base       http.RoundTripper
	maxMessage int          // larger messages are not read (the SDK refuses them)
	tasks      *taskWatch   // nil: no tools/list watching
	pending    *httpPending // nil: no bound
}

// RoundTrip sends r through the base transport, reading the message it
// posts and the messages of its response.
func (w *httpWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	var answer jsonrpc.ID // the id of the server's request this post answers
	if r.Method == http.MethodPost {
		if msg := w.posted(r); msg != nil {
			if w.tasks != nil {
				w.tasks.sent(msg)
			}
			if resp, ok := msg.(*jsonrpc.Response); ok {
				answer = resp.ID
			}
		}
	}
	resp, err := w.base.RoundTrip(r)
	if answer.IsValid() && w.pending != nil {
		// Answered or failed, the answer no longer waits in dsh.
		w.pending.answered(answer)
	}
	if err != nil || resp.Body == nil {
		return resp, err
	}
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		resp.Body = &watchedBody{rc: resp.Body, w: w, ctx: r.Context(), sse: true, closed: make(chan struct{})}
	case "application/json":
		if w.tasks != nil && w.tasks.listing() {
			resp.Body = &watchedBody{rc: resp.Body, w: w, ctx: r.Context(), closed: make(chan struct{})}
		}
	}
	return resp, nil
}

// posted decodes the message r posts, or returns nil: a body the SDK made
// is in memory, and GetBody gives a copy of it.
func (w *httpWatch) posted(r *http.Request) jsonrpc.Message {
	if r.GetBody == nil || r.ContentLength > int64(w.maxMessage) {
		return nil
	}
	body, err := r.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, int64(w.maxMessage)+1))
	if err != nil || len(data) > w.maxMessage {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil
	}
	return msg
}

// received handles a message the server sent; it reports whether the
// message is a request to dsh that now counts as pending.
func (w *httpWatch) received(data []byte) bool {
	if !bytes.Contains(data, []byte(`"method"`)) && (w.tasks == nil || !w.tasks.listing()) {
		return false // a response nothing here reads (a call's result, say)
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return false
	}
	if w.tasks != nil {
		w.tasks.received(msg)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && w.pending != nil {
		return w.pending.seen(req.ID)
	}
	return false
}

// mediaType is a Content-Type's media type, lower case.
func mediaType(ct string) string {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.ToLower(strings.TrimSpace(ct))
}

// httpPending counts a server's requests that dsh read and has not yet
// answered (see httpWatch).
type httpPending struct {
	max   int
	mu    sync.Mutex
	ids   map[any]struct{} // the ids (jsonrpc.ID.Raw) of the requests pending
	freed chan struct{}    // closed when a place frees, then replaced
}

func newHTTPPending(max int) *httpPending {
	return &httpPending{max: max, ids: map[any]struct{}{}, freed: make(chan struct{})}
}

// seen counts a request read; a request reusing the id of one pending is
// not counted twice (the SDK answers it with an error at once).
func (p *httpPending) seen(id jsonrpc.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.ids[id.Raw()]; ok {
		return false
	}
	p.ids[id.Raw()] = struct{}{}
	return true
}

// answered frees the place of the request with id.
func (p *httpPending) answered(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.ids[id.Raw()]; !ok {
		return
	}
	delete(p.ids, id.Raw())
	close(p.freed)
	p.freed = make(chan struct{})
}

// room returns nil when fewer than max requests are pending, else a
// channel closed when one is answered.
func (p *httpPending) room() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ids) < p.max {
		return nil
	}
	return p.freed
}

// errBodyClosed is what a read of a watched body closed meanwhile returns.
var errBodyClosed = errors.New("mcp: response body closed")

// watchedBody is a response body whose messages an httpWatch reads as the
// SDK reads them: an event stream's events (each event's data is a
// message), or a JSON body (one message). An event stream hands the SDK
// no more than one request past the moment the server's pending requests
// reach the cap, and then waits for room before reading on.
type watchedBody struct {
	rc     io.ReadCloser
	w      *httpWatch
	ctx    context.Context
	sse    bool
	closed chan struct{}
	once   sync.Once

	chunk []byte // read from rc, not yet handed out
	err   error  // rc's error, returned once chunk is handed out
	space [4096]byte

	line      []byte // SSE: the current line so far; JSON: the body so far
	lineOver  bool   // the current line, or the JSON body, is too large to read
	data      []byte // SSE: the current event's data lines
	eventOver bool   // SSE: the current event is too large to read
	cr        bool   // SSE: the last byte handed out was '\r'
}

func (b *watchedBody) Read(p []byte) (int, error) {
	if b.sse && b.w.pending != nil {
		if err := b.waitRoom(); err != nil {
			return 0, err
		}
	}
	if len(b.chunk) == 0 {
		if b.err == nil {
			n, err := b.rc.Read(b.space[:])
			b.chunk, b.err = b.space[:n], err
		}
		if len(b.chunk) == 0 {
			if b.err == io.EOF && !b.sse {
				b.endJSON()
			}
			return 0, b.err
		}
	}
	if !b.sse {
		n := copy(p, b.chunk)
		b.addJSON(b.chunk[:n])
		b.chunk = b.chunk[n:]
		return n, nil
	}
	n := 0
	for n < len(p) && len(b.chunk) > 0 {
		k, request := b.feedSSE(b.chunk[:min(len(b.chunk), len(p)-n)])
		copy(p[n:], b.chunk[:k])
		n += k
		b.chunk = b.chunk[k:]
		if request {
			break // the next Read waits for room first
		}
	}
	return n, nil
}

// waitRoom waits until the server has fewer requests pending than the cap.
func (b *watchedBody) waitRoom() error {
	for {
		freed := b.w.pending.room()
		if freed == nil {
			return nil
		}
		select {
		case <-freed:
		case <-b.ctx.Done():
			return b.ctx.Err()
		case <-b.closed:
			return errBodyClosed
		}
	}
}

func (b *watchedBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.rc.Close()
}

// feedSSE reads p up to the end of its first line, or all of it, and
// returns how many bytes it read and whether they ended an event that is
// a request to dsh (now pending).
func (b *watchedBody) feedSSE(p []byte) (int, bool) {
	if b.cr && p[0] == '\n' { // the '\n' of a "\r\n"
		b.cr = false
		return 1, false
	}
	b.cr = false
	i := bytes.IndexAny(p, "\r\n")
	if i < 0 {
		b.addLine(p)
		return len(p), false
	}
	b.addLine(p[:i])
	b.cr = p[i] == '\r'
	return i + 1, b.endLine()
}

func (b *watchedBody) addLine(p []byte) {
	if b.lineOver {
		return
	}
	if len(b.line)+len(p) > b.w.maxMessage+len("data: ") {
		b.lineOver, b.line = true, b.line[:0]
		return
	}
	b.line = append(b.line, p...)
}

// endLine ends the current line: a data line adds to the event, an empty
// line ends it. It reports whether the event ended is a pending request.
func (b *watchedBody) endLine() bool {
	line, lineOver := b.line, b.lineOver
	b.line, b.lineOver = b.line[:0], false
	if lineOver { // a line too long: its event is not read
		b.eventOver, b.data = true, b.data[:0]
		return false
	}
	if len(line) == 0 { // the event ends
		data, over := b.data, b.eventOver
		b.data, b.eventOver = b.data[:0], false
		if over || len(data) == 0 {
			return false
		}
		return b.w.received(data)
	}
	if b.eventOver {
		return false
	}
	value, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return false // event:, id:, retry: or a comment
	}
	value, _ = bytes.CutPrefix(value, []byte(" "))
	if len(b.data)+1+len(value) > b.w.maxMessage {
		b.eventOver, b.data = true, b.data[:0]
		return false
	}
	if len(b.data) > 0 {
		b.data = append(b.data, '\n')
	}
	b.data = append(b.data, value...)
	return false
}

func (b *watchedBody) addJSON(p []byte) {
	if b.lineOver {
		return
	}
	if len(b.line)+len(p) > b.w.maxMessage {
		b.lineOver, b.line = true, nil
		return
	}
	b.line = append(b.line, p...)
}

func (b *watchedBody) endJSON() {
	if !b.lineOver && len(b.line) > 0 {
		b.w.received(b.line)
	}
	b.line = nil
}

// listing reports whether a tools/list request awaits its response.
func (w *taskWatch) listing() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending) > 0
}
