package mcp

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28; servers on 2025-11-25 and older still log through it.

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/textcap"
)

// UpstreamLogLevel is the level the import client asks of a server that
// declares the logging capability (logging/setLevel, right after the
// handshake): a server of the Go SDK sends no log until a client sets one,
// and "info" passes what a server means for its users without its debug
// chatter.
const UpstreamLogLevel = "info"

// Bounds of a relayed log line (as a served call's own log lines).
const (
	maxUpstreamLogMessage = 16 << 10
	maxUpstreamLogData    = 64 << 10
)

// relayLog logs the server's notifications/message with dsh's logger, as
// dsh's own log lines are: under the context of the call it belongs to,
// when dsh has exactly one call to the server in flight (so that dsh serve
// sends it to that call's client as its own notifications/message, see
// [LogHandler]; a server's log names no request, so with several calls in
// flight, or none, it goes to dsh's own log alone), with the attribute
// server=NAME,
// the server's logger name as "logger", and its data as the message when
// it is a string, else as "data". The message is cut at 16 KiB
// (textcap.Marker marks the cut), and data over 64 KiB as JSON is left out.
func (s *server) relayLog(ctx context.Context, req *sdk.LoggingMessageRequest) {
	defer s.logs.sawHandled()
	p := req.Params
	if p == nil {
		return
	}
	attrs := []any{"server", s.spec.Name}
	if p.Logger != "" {
		attrs = append(attrs, "logger", textcap.String(p.Logger, 256))
	}
	msg := "MCP server log"
	switch d := p.Data.(type) {
	case string:
		msg = textcap.String(d, maxUpstreamLogMessage)
	case nil:
	default:
		text, err := json.Marshal(d)
		var v any
		if err == nil && len(text) <= maxUpstreamLogData {
			v, err = dsl.Unmarshal(text)
		}
		if err != nil || len(text) > maxUpstreamLogData {
			v = "(left out: over 64 KiB)"
		}
		attrs = append(attrs, "data", v)
	}
	if call, n := s.calls.only(); n == 1 {
		ctx = call
	}
	s.c.logger.Log(ctx, slogLevel(p.Level), msg, attrs...)
}

// slogLevel maps a protocol log level to slog's.
func slogLevel(l sdk.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	case "error", "critical", "alert", "emergency":
		return slog.LevelError
	}
	return slog.LevelInfo // a level the protocol does not name
}

// setLogLevel asks the server for its logs at UpstreamLogLevel when it
// declares logging; a server that refuses is left as it is.
func (s *server) setLogLevel(ctx context.Context, sess *sdk.ClientSession) {
	init := sess.InitializeResult()
	if init == nil || init.Capabilities == nil || init.Capabilities.Logging == nil {
		return
	}
	if err := sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: UpstreamLogLevel}); err != nil {
		s.c.logger.Debug("MCP server refused logging/setLevel", "server", s.spec.Name, "error", err)
	}
}

// askLogs asks, in a call's _meta, for the server's log lines during the
// call at UpstreamLogLevel when the session speaks protocol 2026-07-28 or
// later, where the level is each request's own rather than the session's.
func askLogs(sess *sdk.ClientSession, p *sdk.CallToolParams) {
	init := sess.InitializeResult()
	if init == nil || init.ProtocolVersion < "2026-07-28" {
		return
	}
	if p.Meta == nil {
		p.Meta = sdk.Meta{}
	}
	p.Meta[sdk.MetaKeyLogLevel] = UpstreamLogLevel
}

// maxLogWait bounds how long a call's result waits for the server's log
// lines read before it to be relayed.
const maxLogWait = 500 * time.Millisecond

// logSeq counts one connection's notifications/message read (by the
// connection's taskWatch, which sees every message) and handled (by
// relayLog), so that a call can wait for the log lines the server sent
// before its result: the SDK's client hands a response to its caller as
// it reads it, and notifications to their handlers later, in order, on a
// goroutine of their own, so without the wait a call's last lines would
// reach the handler after the call ended.
type logSeq struct {
	mu            sync.Mutex
	read, handled uint64
	moved         chan struct{} // closed when handled grows, then replaced; nil when nobody waits
}

// reset starts the counts of a new connection.
func (l *logSeq) reset() *logSeq {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.read, l.handled = 0, 0
	return l
}

func (l *logSeq) sawRead() {
	l.mu.Lock()
	l.read++
	l.mu.Unlock()
}

func (l *logSeq) sawHandled() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.handled++
	if l.moved != nil {
		close(l.moved)
		l.moved = nil
	}
}

// await waits until every log line read so far is handled, at most
// maxLogWait and while ctx lasts.
func (l *logSeq) await(ctx context.Context) {
	l.mu.Lock()
	target := l.read
	l.mu.Unlock()
	var timeout <-chan time.Time
	for {
		l.mu.Lock()
		if l.handled >= target {
			l.mu.Unlock()
			return
		}
		if l.moved == nil {
			l.moved = make(chan struct{})
		}
		moved := l.moved
		l.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(maxLogWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return
		case <-timeout:
			return
		}
	}
}
