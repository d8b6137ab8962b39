//lint:file-ignore SA1019 roots and sampling are deprecated in protocol 2026-07-28 (SEP-2577), and still what servers send on older versions, which dsh passes through.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// CodeNobodyToAsk is the JSON-RPC error code with which dsh answers an
// imported server's elicitation or sampling request that it cannot put
// to anyone: -32010, one of the codes JSON-RPC leaves to servers and the
// MCP SDKs give no meaning of their own (the Go SDK replaces the message
// of a -32601, "method not found", and reads -32003 as a closed
// connection). The message says why: no call of dsh's to the server is in
// flight, several are and MCP does not say which one asks, or the caller
// of the call takes no questions (no elicitation) or no sampling
// requests.
const CodeNobodyToAsk = -32010

// inflight is the contexts of dsh's calls to one server that await their
// results: a request the server makes meanwhile is put to the caller of
// one of them.
type inflight struct {
	mu    sync.Mutex
	next  uint64
	calls map[uint64]context.Context
}

// add records ctx as a call in flight until the returned func is called.
func (f *inflight) add(ctx context.Context) (done func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[uint64]context.Context{}
	}
	f.next++
	id := f.next
	f.calls[id] = ctx
	return func() {
		f.mu.Lock()
		delete(f.calls, id)
		f.mu.Unlock()
	}
}

// only returns the context of the one call in flight, and how many there
// are.
func (f *inflight) only() (context.Context, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ctx := range f.calls {
		if len(f.calls) == 1 {
			return ctx, 1
		}
	}
	return nil, len(f.calls)
}

// callKey marks the context of dsh's call to a server (the *server).
type callKey struct{}

// caller is the context of the call whose caller a request of the server
// (what: "elicitation", "sampling") goes to, ctx being the context the
// SDK handles the request on:
//   - on a multi-round-trip protocol version the server asks inside the
//     call's result, and the SDK's client answers on the call's own
//     context: that call's.
//   - otherwise the request arrives on its own, and the MCP Go SDK's
//     client does not say which of dsh's requests it relates to (over
//     streamable HTTP it arrives on the call's stream, but the SDK's
//     transport does not pass that on; over stdio nothing relates them):
//     it goes to dsh's one call to the server in flight. With none in
//     flight, or several, nobody is asked and the error says why.
func (s *server) caller(ctx context.Context, what string) (context.Context, error) {
	if ctx.Value(callKey{}) == s {
		return ctx, nil
	}
	ctx, n := s.calls.only()
	switch {
	case n == 0:
		return nil, &jsonrpc.Error{Code: CodeNobodyToAsk, Message: fmt.Sprintf("dsh cannot forward this %s request: no call of dsh's to server %q is in flight", what, s.spec.Name)}
	case n > 1:
		return nil, &jsonrpc.Error{Code: CodeNobodyToAsk, Message: fmt.Sprintf("dsh cannot forward this %s request: %d calls of dsh's to server %q are in flight, and MCP does not say which one asks", what, n, s.spec.Name)}
	}
	return ctx, nil
}

// track records ctx as a call to s in flight, until done is called, and
// marks it as one (see caller).
func (s *server) track(ctx context.Context) (_ context.Context, done func()) {
	ctx = context.WithValue(ctx, callKey{}, s)
	return ctx, s.calls.add(ctx)
}

// elicit is the import client's elicitation handler: the server's
// question goes to the caller of dsh's call to it (engine.Elicit: a
// client of dsh serve that declared elicitation, which waits at most
// the serve's approval timeout and answers "cancel" past it), and the
// answer, accept with its content, decline or cancel, goes back as it
// came. A URL-mode question goes as one (its URL and elicitationId), to
// a caller that takes them; notifications/elicitation/complete is not
// passed on.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	p := req.Params
	ctx, err := s.caller(ctx, "elicitation")
	if err != nil {
		return nil, err
	}
	q := engine.Elicitation{Message: p.Message}
	if p.Mode == "url" {
		q.URL, q.ID = p.URL, p.ElicitationID
	}
	if p.RequestedSchema != nil {
		var schema any
		text, err := json.Marshal(p.RequestedSchema)
		if err == nil {
			schema, err = dsl.Unmarshal(text)
		}
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("requestedSchema: %v", err)}
		}
		q.Schema = schema
	}
	res, err := engine.Elicit(ctx, q)
	switch {
	case errors.Is(err, engine.ErrNoElicitation):
		return nil, &jsonrpc.Error{Code: CodeNobodyToAsk, Message: "dsh cannot forward this elicitation request: " + err.Error()}
	case ctx.Err() != nil:
		// The call ended (cancelled, or its caller went away) while
		// the question waited.
		return &sdk.ElicitResult{Action: "cancel"}, nil
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "dsh could not forward this elicitation request: " + err.Error()}
	}
	out := &sdk.ElicitResult{Action: res.Action}
	if res.Content != nil {
		text, err := dsl.Marshal(res.Content)
		if err == nil {
			err = json.Unmarshal(text, &out.Content)
		}
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the answer's content: " + err.Error()}
		}
	}
	return out, nil
}

// sample is the import client's sampling handler: the server's
// sampling/createMessage goes to the caller of dsh's call to it
// (engine.Sample: a client of dsh serve that declared sampling, waited
// for at most the serve's approval timeout), and the answer comes back as
// the caller gave it. A caller that takes no sampling requests makes it a
// [CodeNobodyToAsk] error.
func (s *server) sample(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	ctx, err := s.caller(ctx, "sampling")
	if err != nil {
		return nil, err
	}
	params, err := json.Marshal(req.Params)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	answer, err := engine.Sample(ctx, params)
	if errors.Is(err, engine.ErrNoSampling) {
		return nil, &jsonrpc.Error{Code: CodeNobodyToAsk, Message: "dsh cannot forward this sampling request: " + err.Error()}
	}
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return nil, rpc // the caller's own error, as it gave it
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "dsh could not forward this sampling request: " + err.Error()}
	}
	var res sdk.CreateMessageResult
	if err := json.Unmarshal(answer, &res); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the sampling answer: " + err.Error()}
	}
	return &res, nil
}

// questionCapabilities are the import client's capabilities beside
// those its handlers imply (sampling): roots, with list_changed, as the
// SDK's default, and elicitation in form and URL modes.
func questionCapabilities() *sdk.ClientCapabilities {
	return &sdk.ClientCapabilities{
		RootsV2:     &sdk.RootCapabilities{ListChanged: true},
		Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}},
	}
}

// roots are the import client's roots: each directory of Options.Roots
// as a file:// URI of its absolute path (as given when that cannot be
// known), named by its last element.
func (o *Options) roots() []*sdk.Root {
	roots := make([]*sdk.Root, 0, len(o.Roots))
	for _, dir := range o.Roots {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}
		roots = append(roots, &sdk.Root{URI: u.String(), Name: filepath.Base(dir)})
	}
	return roots
}
