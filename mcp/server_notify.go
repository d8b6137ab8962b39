package mcp

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28, and issue 17 asks for it: clients on 2025-11-25 use it, and servers keep it through the deprecation window.

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"sync"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Bounds of what a call sends its client besides its result.
const (
	// maxPendingNotes is how many notifications of one call may wait to be
	// sent; more are dropped (a script logging in a tight loop must not
	// grow dsh's memory, nor hold its own call up).
	maxPendingNotes = 1024
	// maxLogMessage bounds a log notification's message, in bytes.
	maxLogMessage = 16 << 10
	// maxLogData bounds a log notification's data as JSON, in bytes;
	// fields past it are left out.
	maxLogData = 64 << 10
)

// notes sends one tools/call's notifications to its client (progress
// reports and log lines made under the call's context), in order, from a
// goroutine of its own, so that a script reporting never waits on the
// client. Notes made once the call is over are dropped.
type notes struct {
	ss    *sdk.ServerSession
	ctx   context.Context // the request's values, not its cancellation
	token any             // the request's progress token, or nil

	mu       sync.Mutex
	queue    []func(context.Context)
	running  bool // a sender goroutine is draining queue
	over     bool
	idle     *sync.Cond
	progress float64 // the last progress sent; reports must increase
	sent     bool    // a progress report was sent
}

type notesKey struct{}

// withNotes returns ctx carrying a call's notifications to ss: engine
// progress reports when the request asked for them, and the log lines
// [LogHandler] sees under the returned context.
func withNotes(ctx context.Context, ss *sdk.ServerSession, req *sdk.CallToolParamsRaw) (context.Context, *notes) {
	if ss == nil {
		return ctx, nil
	}
	n := &notes{ss: ss, ctx: context.WithoutCancel(ctx), token: req.GetProgressToken()}
	n.idle = sync.NewCond(&n.mu)
	ctx = context.WithValue(ctx, notesKey{}, n)
	if n.token != nil {
		ctx = engine.WithProgress(ctx, n.reportProgress)
	}
	return ctx, n
}

// notesFrom returns the call notes ctx carries, or nil.
func notesFrom(ctx context.Context) *notes {
	n, _ := ctx.Value(notesKey{}).(*notes)
	return n
}

// reportProgress queues a progress notification; one that does not
// increase on the last is dropped, as the protocol requires.
func (n *notes) reportProgress(p engine.Progress) {
	n.mu.Lock()
	if n.sent && p.Progress <= n.progress {
		n.mu.Unlock()
		return
	}
	n.progress, n.sent = p.Progress, true
	n.mu.Unlock()
	params := &sdk.ProgressNotificationParams{ProgressToken: n.token, Progress: p.Progress, Total: p.Total, Message: p.Message}
	n.push(func(ctx context.Context) { _ = n.ss.NotifyProgress(ctx, params) })
}

// log queues a log notification; the session drops it below the level
// its client set.
func (n *notes) log(params *sdk.LoggingMessageParams) {
	n.push(func(ctx context.Context) { _ = n.ss.Log(ctx, params) })
}

// push queues send, starting the sender if none runs.
func (n *notes) push(send func(context.Context)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.over || len(n.queue) >= maxPendingNotes {
		return
	}
	n.queue = append(n.queue, send)
	if !n.running {
		n.running = true
		go n.drain()
	}
}

// drain sends what is queued until the queue is empty.
func (n *notes) drain() {
	n.mu.Lock()
	for len(n.queue) > 0 {
		send := n.queue[0]
		n.queue[0] = nil
		n.queue = n.queue[1:]
		n.mu.Unlock()
		send(n.ctx)
		n.mu.Lock()
	}
	n.running = false
	n.idle.Broadcast()
	n.mu.Unlock()
}

// finish ends the call's notifications: what was queued is sent before the
// result, and what comes later is dropped.
func (n *notes) finish() {
	if n == nil {
		return
	}
	n.mu.Lock()
	n.over = true
	for n.running {
		n.idle.Wait()
	}
	n.mu.Unlock()
}

// LogHandler returns a handler that passes every record to next and also
// sends those made under the context of a tools/call that a [Server] runs
// (a script's log.* during the call, say) to the calling client as
// notifications/message, at or above the level the client set. The
// record's "plugin" attribute names the logger; its message and other
// attributes are the data. Wrap the handler of the logger the script
// hosts log to.
func LogHandler(next slog.Handler) slog.Handler {
	return &logHandler{next: next}
}

type logHandler struct {
	next   slog.Handler
	attrs  []slog.Attr // from WithAttrs, with the groups' names in their keys
	groups string      // the open groups' prefix, "a.b."
}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return notesFrom(ctx) != nil || h.next.Enabled(ctx, l)
}

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if n := notesFrom(ctx); n != nil {
		n.log(h.message(r))
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(attrs)
	c.attrs = append(c.attrs[:len(c.attrs):len(c.attrs)], prefixed(h.groups, attrs)...)
	return &c
}

func (h *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.next = h.next.WithGroup(name)
	c.groups += name + "."
	return &c
}

// prefixed returns attrs with prefix before each key.
func prefixed(prefix string, attrs []slog.Attr) []slog.Attr {
	if prefix == "" {
		return attrs
	}
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = slog.Attr{Key: prefix + a.Key, Value: a.Value}
	}
	return out
}

// message is r as a logging notification: the level, the "plugin"
// attribute as the logger, and {"message": ..., attributes...} as the
// data, bounded in size.
func (h *logHandler) message(r slog.Record) *sdk.LoggingMessageParams {
	p := &sdk.LoggingMessageParams{Level: mcpLevel(r.Level)}
	members := []dsl.Member{{Key: "message", Value: truncate(r.Message, maxLogMessage)}}
	add := func(a slog.Attr) {
		if a.Key == "plugin" && p.Logger == "" {
			p.Logger = a.Value.String()
			return
		}
		if a.Key != "" && a.Key != "message" {
			members = append(members, dsl.Member{Key: a.Key, Value: jsonValue(a.Value)})
		}
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(slog.Attr{Key: h.groups + a.Key, Value: a.Value})
		return true
	})
	data, err := dsl.Marshal(dsl.NewObject(members...))
	if err != nil || len(data) > maxLogData {
		data, _ = dsl.Marshal(dsl.NewObject(members[0], dsl.Member{Key: "fields", Value: "(left out: over 64 KiB)"}))
	}
	p.Data = json.RawMessage(data)
	return p
}

// jsonValue is v as a value dsl.Marshal takes: scripts' fields are dsl
// values already; Go's own become strings or numbers.
func jsonValue(v slog.Value) any {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return v.String()
	case slog.KindBool:
		return v.Bool()
	case slog.KindInt64:
		return float64(v.Int64())
	case slog.KindUint64:
		return float64(v.Uint64())
	case slog.KindFloat64:
		if f := v.Float64(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	case slog.KindAny:
		a := v.Any()
		if err, ok := a.(error); ok {
			return err.Error()
		}
		if _, err := dsl.Marshal(a); err == nil {
			return a
		}
	}
	return v.String()
}

// mcpLevel maps a slog level to the protocol's.
func mcpLevel(l slog.Level) sdk.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warning"
	default:
		return "error"
	}
}

// truncate cuts s to at most n bytes, at a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "… (truncated)"
}
