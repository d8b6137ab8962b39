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

// elicit is the engine.ElicitFunc of served calls: a tool body's question
// (engine.Elicit) becomes an elicitation request to the calling client,
// asked as approvals are (a request of the server's own, or an input
// request in the result for a multi-round-trip client). A client without
// the elicitation capability cannot be asked ([engine.ErrNoElicitation]);
// one that does not answer within the server's ApprovalTimeout, on any
// protocol version, has the question withdrawn and answers "cancel".
func elicit(ctx context.Context, e engine.Elicitation) (engine.ElicitResult, error) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil || !canElicit(st.session) {
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
	q := &sdk.ElicitParams{Mode: "form", Message: e.Message, RequestedSchema: json.RawMessage(text)}
	res, err := st.question(ctx, elicitKey, q)
	switch {
	case ctx.Err() != nil:
		return engine.ElicitResult{}, ctx.Err()
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
