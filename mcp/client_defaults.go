package mcp

import (
	"context"
	"encoding/json"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// formDefaults wraps the import client's elicitation handler so that an
// imported server whose form is accepted gets the form's defaults for the
// fields the answer leaves out (SEP-1034: a client applies the defaults a
// form's schema names). The SDK's client fills in the defaults of an
// answer that has content, but passes an accept without content (a user
// who confirmed the form as shown, or a caller whose answers carry no
// content) on as it is: here such an answer gets the defaults as its
// content, when the form has any, and the SDK then checks it against the
// form as it checks any answer.
func formDefaults(h elicitHandler) elicitHandler {
	return func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		res, err := h(ctx, req)
		if err != nil || res == nil || res.Action != "accept" || res.Content != nil || req.Params == nil {
			return res, err
		}
		if d := schemaDefaults(req.Params.RequestedSchema); len(d) > 0 {
			out := *res
			out.Content = d
			return &out, nil
		}
		return res, nil
	}
}

// elicitHandler is the type of the SDK client's elicitation handler.
type elicitHandler = func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error)

// schemaDefaults returns the defaults of a form's properties (an object
// schema, as an elicitation request carries it), by property name.
func schemaDefaults(schema any) map[string]any {
	text, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	var form struct {
		Properties map[string]struct {
			Default json.RawMessage `json:"default"`
		} `json:"properties"`
	}
	if json.Unmarshal(text, &form) != nil {
		return nil
	}
	out := map[string]any{}
	for name, p := range form.Properties {
		var v any
		if len(p.Default) > 0 && json.Unmarshal(p.Default, &v) == nil && v != nil {
			out[name] = v
		}
	}
	return out
}
