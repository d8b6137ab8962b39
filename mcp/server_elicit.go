package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// elicitKey is the id of a tool's own question in a result's
// inputRequests.
const elicitKey = "elicitation"

// errNoURLMode is why a URL-mode question is not put to a client that
// did not declare URL-mode elicitation: an [engine.ErrNoElicitation].
var errNoURLMode error = noURLMode{}

type noURLMode struct{}

func (noURLMode) Error() string {
	return "no user can be asked: the caller does not take URL-mode questions (elicitation)"
}

func (noURLMode) Is(target error) bool { return target == engine.ErrNoElicitation }

// canElicitURL reports whether the client declared URL-mode elicitation.
func canElicitURL(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil && p.Capabilities.Elicitation.URL != nil
}

// elicit is the engine.ElicitFunc of served calls: a tool body's question
// (engine.Elicit) becomes an elicitation request to the calling client,
// asked as approvals are (a request of the server's own, or an input
// request in the result for a multi-round-trip client), in form mode, or
// in URL mode when the question has a URL. A client without the
// elicitation capability, or without URL mode for a URL-mode question,
// cannot be asked ([engine.ErrNoElicitation]);
// one that does not answer within the server's ApprovalTimeout, on any
// protocol version, has the question withdrawn and answers "cancel".
func elicit(ctx context.Context, e engine.Elicitation) (engine.ElicitResult, error) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil {
		return engine.ElicitResult{}, engine.ErrNoElicitation
	}
	var q *sdk.ElicitParams
	if e.URL != "" {
		if !canElicitURL(st.session) {
			return engine.ElicitResult{}, errNoURLMode
		}
		q = &sdk.ElicitParams{Mode: "url", Message: e.Message, URL: e.URL, ElicitationID: e.ID}
	} else {
		if !canElicit(st.session) {
			return engine.ElicitResult{}, engine.ErrNoElicitation
		}
		schema := e.Schema
		if schema == nil {
			schema = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject()})
		}
		text, err := dsl.Marshal(schema)
		if err != nil {
			return engine.ElicitResult{}, fmt.Errorf("the form's schema: %w", err)
		}
		q = &sdk.ElicitParams{Mode: "form", Message: e.Message, RequestedSchema: json.RawMessage(text)}
	}
	res, err := st.question(ctx, elicitKey, q)
	switch {
	case ctx.Err() != nil:
		return engine.ElicitResult{}, ctx.Err()
	case sessionEnded(err):
		return engine.ElicitResult{}, context.Canceled
	case errors.Is(err, errAbandoned):
		return engine.ElicitResult{Action: "cancel"}, nil
	case err != nil:
		return engine.ElicitResult{}, fmt.Errorf("asking the client: %w", err)
	}
	out := engine.ElicitResult{Action: res.Action}
	if res.Action == "accept" && res.Content != nil {
		text, err := json.Marshal(res.Content)
		if err == nil {
			out.Content, err = dsl.Unmarshal(text)
		}
		if err != nil {
			return engine.ElicitResult{}, fmt.Errorf("the client's answer: %w", err)
		}
	}
	return out, nil
}
