package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// askServer serves "ask": it asks the user for a name and returns the
// answer as {action, content} JSON, or fails with the error.
func askServer(t *testing.T) *fixture {
	t.Helper()
	return serveEngine(t, askEngine(t))
}

// askEngine is an engine with askServer's tool.
func askEngine(t *testing.T) *engine.Service {
	t.Helper()
	svc := engine.New()
	schema, err := dsl.Unmarshal([]byte(`{"type":"object","properties":{"name":{"type":"string","default":"Ada"}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	def, err := engine.DefineTool(engine.ToolOptions[any, any]{
		Name: "ask", Output: dsl.String(), Render: renderString,
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			r, err := engine.Elicit(ctx, engine.Elicitation{Message: "Who are you?", Schema: schema})
			if err != nil {
				return nil, err
			}
			text, err := dsl.Marshal(dsl.NewObject(dsl.Member{Key: "action", Value: r.Action}, dsl.Member{Key: "content", Value: r.Content}))
			return string(text), err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestAToolAsksItsClient(t *testing.T) {
	answers := []struct {
		name   string
		answer *sdk.ElicitResult
		want   string
	}{
		{"an accepted form comes back with its values", &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}},
			`{"action":"accept","content":{"name":"Grace"}}`},
		{"a decline comes back without values", &sdk.ElicitResult{Action: "decline"}, `{"action":"decline","content":null}`},
		{"a cancel comes back without values", &sdk.ElicitResult{Action: "cancel"}, `{"action":"cancel","content":null}`},
	}
	for _, version := range []string{legacy, multiRoundTrip} {
		for _, a := range answers {
			t.Run("on "+version+", "+a.name, func(t *testing.T) {
				f := askServer(t)
				var asked *sdk.ElicitParams
				cs := f.connect(t, version, &sdk.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
						asked = req.Params
						return a.answer, nil
					},
				})
				r := call(t, cs, "ask", `{}`)
				if got := text(r); r.IsError || got != a.want {
					t.Errorf("result %q (isError %v), want %q", got, r.IsError, a.want)
				}
				if asked == nil {
					t.Fatal("the client was not asked")
				}
				schema, _ := json.Marshal(asked.RequestedSchema)
				if asked.Message != "Who are you?" || string(schema) != `{"properties":{"name":{"default":"Ada","type":"string"}},"required":["name"],"type":"object"}` {
					t.Errorf("asked %q with %s", asked.Message, schema)
				}
			})
		}
	}
	t.Run("a client without elicitation cannot be asked", func(t *testing.T) {
		cs := askServer(t).connect(t, legacy, nil)
		r := call(t, cs, "ask", `{}`)
		if want := "Error: " + engine.ErrNoElicitation.Error(); !r.IsError || text(r) != want {
			t.Errorf("result %q, want the failure %q", text(r), want)
		}
	})
}
