package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxTools is the most tools dsh imports from one server whose spec
// sets no MaxTools: a listing that goes past it stops there.
const DefaultMaxTools = 10_000

// maxMaxTools bounds a configured cap on tools.
const maxMaxTools = 1_000_000

// maxTools is the most tools dsh imports from the server.
func (s ServerSpec) maxTools() int {
	if s.MaxTools > 0 {
		return s.MaxTools
	}
	return DefaultMaxTools
}

// listTools lists the server's tools, page after page, within ctx (the
// connect timeout: a server that stalls mid-listing ends the attempt with
// ctx's error). It keeps the first spec.MaxTools tools: when the server lists
// more, the listing stops and a diagnostic says the rest are not imported.
// A tool that requires task-augmented execution (execution.taskSupport
// "required"), which dsh does not support, is left out with a diagnostic.
func (s *server) listTools(ctx context.Context, sess *sdk.ClientSession) ([]*sdk.Tool, []Diagnostic, error) {
	limit := s.spec.maxTools()
	var tools []*sdk.Tool
	var diags []Diagnostic
	for t, err := range sess.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, fmt.Errorf("listing the tools: %w", err)
		}
		if len(tools) == limit {
			diags = append(diags, Diagnostic{Server: s.spec.Name, Capped: true,
				Reason: fmt.Sprintf("the server lists more than %d tools; the rest are not imported", limit)})
			break
		}
		tools = append(tools, t)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("listing the tools: %w", err)
	}
	if s.tasks == nil {
		return tools, diags, nil
	}
	required := s.tasks.take()
	kept := tools[:0]
	for _, t := range tools {
		if required[t.Name] {
			diags = append(diags, Diagnostic{Server: s.spec.Name, Tool: t.Name, Reason: errTaskRequired})
			continue
		}
		kept = append(kept, t)
	}
	return kept, diags, nil
}

// errTaskRequired is the reason a tool requiring tasks is not imported.
const errTaskRequired = `not imported: it requires task-augmented execution (execution.taskSupport "required"), which dsh does not support`

// taskWatch learns, from the tools/list responses of one connection, which
// tools require task-augmented execution: the SDK's Tool has no execution
// field, so the responses are read beside it.
type taskWatch struct {
	mu       sync.Mutex
	pending  map[any]bool    // the ids of tools/list requests awaiting their response
	required map[string]bool // tools listed with execution.taskSupport "required"
	logs     *logSeq         // counts the notifications/message read, when set (upstream_log.go)
}

func newTaskWatch() *taskWatch {
	return &taskWatch{pending: map[any]bool{}, required: map[string]bool{}}
}

// sent notes a tools/list request.
func (w *taskWatch) sent(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/list" || !req.ID.IsValid() {
		return
	}
	w.mu.Lock()
	w.pending[req.ID.Raw()] = true
	w.mu.Unlock()
}

// received reads the tools of a tools/list response (and counts a log
// line).
func (w *taskWatch) received(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/message" && w.logs != nil {
		w.logs.sawRead()
	}
	res, ok := msg.(*jsonrpc.Response)
	if !ok || !res.ID.IsValid() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.pending[res.ID.Raw()] {
		return
	}
	delete(w.pending, res.ID.Raw())
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if res.Error != nil || json.Unmarshal(res.Result, &page) != nil {
		return // the SDK reports the failure
	}
	for _, t := range page.Tools {
		if t.Execution != nil && t.Execution.TaskSupport == "required" {
			w.required[t.Name] = true
		}
	}
}

// take returns the tools seen requiring tasks since the last take.
func (w *taskWatch) take() map[string]bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	required := w.required
	w.required = map[string]bool{}
	return required
}

// watchTasks wraps t so that w reads its tools/list responses. The SDK's
// streamable HTTP and SSE transports tell their connections of the
// session's state through an unexported method a wrapper would hide (and
// with it the protocol version header and the standalone SSE stream), so
// for them w reads the messages in the transport's http.Client instead
// (see watchHTTP).
func watchTasks(t sdk.Transport, w *taskWatch) sdk.Transport {
	if t, ok := watchHTTP(t, func(h *httpWatch) { h.tasks = w }); ok {
		return t
	}
	return &taskTransport{Transport: t, w: w}
}

// taskTransport is a transport whose connection feeds a taskWatch.
type taskTransport struct {
	sdk.Transport
	w *taskWatch
}

func (t *taskTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{Connection: conn, w: t.w}, nil
}

// taskConn is a connection whose messages feed a taskWatch.
type taskConn struct {
	sdk.Connection
	w *taskWatch
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.w.received(msg)
	}
	return msg, err
}

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.w.sent(msg) // before the write: the response may come at once
	return c.Connection.Write(ctx, msg)
}
