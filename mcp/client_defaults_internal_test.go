package mcp

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAnAcceptedFormGetsItsDefaults puts the SEP-1034 form of the
// conformance suite (a default of every primitive type) from an SDK server
// to an SDK client whose elicitation handler is wrapped as the import
// client's is, and checks what the server receives.
func TestAnAcceptedFormGetsItsDefaults(t *testing.T) {
	const form = `{"type":"object","properties":{
		"name":{"type":"string","default":"John Doe"},
		"age":{"type":"integer","default":30},
		"score":{"type":"number","default":95.5},
		"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
		"verified":{"type":"boolean","default":true},
		"note":{"type":"string"}}}`
	const plain = `{"type":"object","properties":{"note":{"type":"string"}}}`
	cases := []struct {
		name   string
		schema string
		answer *sdk.ElicitResult
		want   string // the result the server gets, as JSON
	}{
		{"an accept without content gets every default as its content",
			form, &sdk.ElicitResult{Action: "accept"},
			`{"action":"accept","content":{"age":30,"name":"John Doe","score":95.5,"status":"active","verified":true}}`},
		{"an accept with content keeps its values and gets the defaults of the fields it leaves out",
			form, &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "note": "hi"}},
			`{"action":"accept","content":{"age":30,"name":"Ada","note":"hi","score":95.5,"status":"active","verified":true}}`},
		{"a decline stays a decline without content",
			form, &sdk.ElicitResult{Action: "decline"},
			`{"action":"decline"}`},
		{"an accept without content of a form without defaults stays without content",
			plain, &sdk.ElicitResult{Action: "accept"},
			`{"action":"accept"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := make(chan string, 1)
			srv := sdk.NewServer(&sdk.Implementation{Name: "upstream", Version: "1"}, nil)
			sdk.AddTool(srv, &sdk.Tool{Name: "ask"}, func(ctx context.Context, req *sdk.CallToolRequest, _ any) (*sdk.CallToolResult, any, error) {
				res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "fill in", RequestedSchema: json.RawMessage(c.schema)})
				if err != nil {
					got <- "error: " + err.Error()
				} else {
					b, _ := json.Marshal(res)
					got <- string(b)
				}
				return &sdk.CallToolResult{}, nil, nil
			})
			answer := func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				out := *c.answer
				return &out, nil
			}
			client := sdk.NewClient(&sdk.Implementation{Name: "dsh", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: formDefaults(answer)})
			ct, st := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(context.Background(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := client.Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				_ = cs.Close()
				_ = ss.Wait()
			}()
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g != c.want {
				t.Fatalf("the server got %s, want %s", g, c.want)
			}
		})
	}
}
