package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxSessions is the default of [HTTPOptions.MaxSessions].
const DefaultMaxSessions = 1000

// CodeTooManySessions is the JSON-RPC error code of a request refused a
// new HTTP session because every session is busy: -32000, sent with 503
// Service Unavailable.
const CodeTooManySessions = -32000

// tooManySessionsMessage is the message of a [CodeTooManySessions] error.
func tooManySessionsMessage(max int) string {
	return "Service Unavailable: all " + strconv.Itoa(max) +
		" HTTP sessions (the cap set by --http-max-sessions) are busy; retry once one ends"
}

// sessionCap bounds the sessions the SDK's handler holds. An initialize
// POSTed without a session ID, which opens one, finds a place first: when max
// sessions are open, the one idle for longest (none of its POSTs in
// flight; an open GET stream does not count, it is how a client listens)
// is closed to make room, and when none is idle the request is refused
// with 503 and a [CodeTooManySessions] error. The sessions are those the
// handler's responses named (Mcp-Session-Id) that the server still has.
type sessionCap struct {
	s    *Server
	next http.Handler
	max  int

	mu       sync.Mutex
	opening  int // new-session POSTs in flight: their places are taken
	sessions map[string]*capSession
}

// capSession is what the cap knows of a session.
type capSession struct {
	busy int       // POSTs in flight
	last time.Time // when its last POST ended (or it opened)
}

// capSessions puts a cap of max sessions in front of next (max <= 0:
// none).
func (s *Server) capSessions(next http.Handler, max int) http.Handler {
	if max <= 0 {
		return next
	}
	return &sessionCap{s: s, next: next, max: max, sessions: map[string]*capSession{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r)
		return
	}
	if id := r.Header.Get(sessionIDHeader); id != "" {
		c.serveIn(w, r, id)
		return
	}
	// The guard in front read the body whole, within its cap.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "Bad Request: reading the body: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "initialize" || !validID(msg.ID) {
		c.next.ServeHTTP(w, r) // opens no session
		return
	}
	ok, evict := c.reserve()
	if !ok {
		c.refuse(w, msg.ID)
		return
	}
	if evict != "" {
		c.s.closeSession(evict)
	}
	rec := &sessionRecorder{ResponseWriter: w}
	defer func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.opening--
		if rec.id != "" && c.sessions[rec.id] == nil {
			c.sessions[rec.id] = &capSession{last: time.Now()}
		}
	}()
	c.next.ServeHTTP(rec, r)
}

// serveIn serves a POST of session id, which is busy meanwhile.
func (c *sessionCap) serveIn(w http.ResponseWriter, r *http.Request, id string) {
	c.mu.Lock()
	sess := c.sessions[id]
	if sess != nil {
		sess.busy++
	}
	c.mu.Unlock()
	defer func() {
		if sess != nil {
			c.mu.Lock()
			sess.busy--
			sess.last = time.Now()
			c.mu.Unlock()
		}
	}()
	c.next.ServeHTTP(w, r)
}

// reserve takes a place for a new session and reports whether there is
// one; when all were taken, the place is that of the session idle for
// longest, evict, to be closed.
func (c *sessionCap) reserve() (ok bool, evict string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	live := map[string]bool{}
	for ss := range c.s.server.Sessions() {
		live[ss.ID()] = true
	}
	for id := range c.sessions {
		if !live[id] {
			delete(c.sessions, id) // closed by its client or timed out
		}
	}
	if len(c.sessions)+c.opening < c.max {
		c.opening++
		return true, ""
	}
	oldest := ""
	for id, sess := range c.sessions {
		if sess.busy == 0 && (oldest == "" || sess.last.Before(c.sessions[oldest].last)) {
			oldest = id
		}
	}
	if oldest == "" {
		return false, ""
	}
	delete(c.sessions, oldest)
	c.opening++
	return true, oldest
}

// refuse answers a request that finds no place for its session.
func (c *sessionCap) refuse(w http.ResponseWriter, id json.RawMessage) {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: CodeTooManySessions, Message: tooManySessionsMessage(c.max)}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(bytes.TrimSpace(b))
}

// closeSession closes the served session id (its calls cancelled first,
// as a DELETE would); the SDK's handler forgets it, and its next request
// gets 404.
func (s *Server) closeSession(id string) {
	s.cancelSession(id)
	for ss := range s.server.Sessions() {
		if ss.ID() == id {
			_ = ss.Close()
			return
		}
	}
}

// sessionRecorder notes the session ID a response names.
type sessionRecorder struct {
	http.ResponseWriter
	id string
}

func (r *sessionRecorder) WriteHeader(code int) {
	if code < 300 {
		r.id = r.Header().Get(sessionIDHeader)
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *sessionRecorder) Write(b []byte) (int, error) {
	if r.id == "" {
		r.id = r.Header().Get(sessionIDHeader)
	}
	return r.ResponseWriter.Write(b)
}

// Flush passes a flush on, for the SDK's event streams.
func (r *sessionRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (r *sessionRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
