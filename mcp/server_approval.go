package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// approvalKey is the id of the approval question in a result's
// inputRequests.
const approvalKey = "approval"

// stateKey is the context key of a served call's *callState.
type stateKey struct{}

// callState is how a served call reaches its client: the session, and for
// a multi-round-trip client the channels its parked questions go through.
type callState struct {
	session *sdk.ServerSession
	timeout time.Duration // how long each question waits for its answer

	// Multi-round-trip calls only (events is nil otherwise).
	server  *Server
	mu      sync.Mutex               // one question at a time
	key     atomic.Pointer[string]   // the id of the question asked last
	events  chan question            // a parked question, to the waiting request
	answers chan *sdk.ElicitResult   // its answer, from the retry
	done    chan *sdk.CallToolResult // the call's result
}

// question is a question of a multi-round-trip call (an approval, or a
// tool's own), parked under token (the requestState of the retry that
// answers it); key is its id in the result's inputRequests.
type question struct {
	key    string
	params *sdk.ElicitParams
	token  string
}

// errAbandoned is a parked question nobody answered in time.
var errAbandoned = errors.New("the client did not answer the input request in time")

// question puts q to the client, as an elicitation request or, for a
// multi-round-trip call, as inputRequests[key], and waits for the answer
// at most st.timeout: past it, the question is withdrawn (the request is
// cancelled) and the error is errAbandoned. When ctx ends first (the
// request was cancelled, the session closed), the error is ctx's.
func (st *callState) question(ctx context.Context, key string, q *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	if st.events != nil {
		return st.ask(ctx, key, q)
	}
	qctx, cancel := context.WithTimeoutCause(ctx, st.timeout, errAbandoned)
	defer cancel()
	res, err := st.session.Elicit(qctx, q)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(qctx), errAbandoned) {
		return nil, errAbandoned
	}
	if sessionEnded(err) && ctx.Err() == nil {
		// The SDK fails the question as the connection ends, then cancels
		// the call's request in the same step: wait for that (briefly), so
		// that the call ends as cancelled, as when it was first to know.
		t := time.NewTimer(sessionEndWait)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	return res, err
}

// sessionEndWait bounds question's wait for the end of a call whose
// session's connection ended under its question.
const sessionEndWait = time.Second

// ask puts q to the client of a multi-round-trip call, as inputRequests[key],
// and waits for the retry that answers it.
func (st *callState) ask(ctx context.Context, key string, q *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.key.Store(&key)
	token := st.server.park(st)
	select {
	case st.events <- question{key: key, params: q, token: token}:
	case <-ctx.Done():
		if st.unpark(token) {
			return nil, ctx.Err()
		}
		return <-st.answers, nil
	}
	timer := time.NewTimer(st.timeout)
	defer timer.Stop()
	select {
	case a := <-st.answers:
		return a, nil
	case <-ctx.Done():
		if st.unpark(token) {
			return nil, ctx.Err()
		}
	case <-timer.C:
		if st.unpark(token) {
			return nil, errAbandoned
		}
	}
	// A retry took the question first: its answer is on its way.
	return <-st.answers, nil
}

// unpark removes the question parked under token, reporting whether it
// was still there (no retry has taken it).
func (st *callState) unpark(token string) bool {
	s := st.server
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.parked[token] != st {
		return false
	}
	delete(s.parked, token)
	return true
}

// Approval returns the approval service of served calls: an ask decision
// of a call a [Server] runs becomes an elicitation request to its client
// ("Allow <tool> once?"). Accept is allowed-once (unless the form's
// "approve" is false), decline is a rejection, cancel is a cancelled
// approval, and a client without the elicitation capability, or one whose
// answer is an error, leaves it unavailable; a client that does not answer
// within the server's ApprovalTimeout has the question withdrawn, and the
// call is denied as timed out ([engine.ApprovalTimeoutError]). Every one
// but accept denies the call; a call whose request is cancelled, or whose
// session closes, while it waits is cancelled. Calls that did not come
// over MCP go to fallback (nil: unavailable).
func Approval(fallback engine.ApprovalService) engine.ApprovalService {
	return engine.ApprovalFunc(func(ctx context.Context, req engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
		st, _ := ctx.Value(stateKey{}).(*callState)
		if st == nil {
			if fallback == nil {
				return engine.Unavailable, nil
			}
			return fallback.Approve(ctx, req)
		}
		if !canElicit(st.session) {
			return engine.Unavailable, nil
		}
		q := form(req)
		res, err := st.question(ctx, approvalKey, q)
		switch {
		case ctx.Err() != nil, sessionEnded(err):
			return engine.Cancelled, nil
		case errors.Is(err, errAbandoned):
			return "", &engine.ApprovalTimeoutError{Timeout: st.timeout}
		case err != nil:
			return engine.Unavailable, nil
		}
		switch res.Action {
		case "accept":
			if v, ok := res.Content["approve"].(bool); ok && !v {
				return engine.Rejected, nil
			}
			return engine.AllowedOnce, nil
		case "decline":
			return engine.Rejected, nil
		}
		return engine.Cancelled, nil
	})
}

// sessionEnded reports whether err is a question's failure because its
// session's connection ended (the client left, or its stream closed). The
// SDK fails the question before it cancels the call's request, in the same
// step, so the call's context may not say so yet: the call is cancelled
// all the same.
func sessionEnded(err error) bool {
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, sdk.ErrConnectionClosed))
}

// canElicit reports whether the client declared the elicitation capability
// (form mode, or neither mode, which the spec reads as form).
func canElicit(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil
}

// form is the elicitation for req: a message saying which tool asks
// and why, and a form with one boolean, "approve" (default true).
func form(req engine.ApprovalRequest) *sdk.ElicitParams {
	reason := req.DisplayReason
	if reason == "" {
		reason = req.Reason
	}
	msg := fmt.Sprintf("Allow %s once?", req.ToolName)
	if reason != "" {
		msg = fmt.Sprintf("%s asks for approval: %s\nAllow it once?", req.ToolName, reason)
	}
	return &sdk.ElicitParams{
		Mode:    "form",
		Message: msg,
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"approve": map[string]any{
					"type":        "boolean",
					"title":       "Allow once",
					"description": fmt.Sprintf("Run %s (call %s) this once", req.ToolName, display.Line(req.CallID, display.MaxName)),
					"default":     true,
				},
			},
		},
	}
}
