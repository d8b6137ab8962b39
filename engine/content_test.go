package engine_test

import (
	"context"
	"math"
	"regexp"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestContentRoundTrips(t *testing.T) {
	tests := []struct {
		name string
		in   string
		typ  any // the Go type the first block reads as
	}{
		{"a text block reads as a TextBlock", `[{"type":"text","text":"hi"}]`, engine.TextBlock{}},
		{"a reasoning block reads as a ReasoningBlock", `[{"type":"reasoning","text":"hmm"}]`, engine.ReasoningBlock{}},
		{"an image block keeps its attachment", `[{"type":"image","attachment":{"id":"a1","mime":"image/png"}}]`, engine.ImageBlock{}},
		{"a tool-call block keeps the raw arguments text", `[{"type":"tool-call","id":"c1","name":"echo","arguments":"{\"x\":1}"}]`, engine.ToolCallBlock{}},
		{"a tool-result block nests content", `[{"type":"tool-result","toolCallId":"c1","content":[{"type":"text","text":"ok"},{"type":"chart","data":[1,2]}],"isError":false}]`, engine.ToolResultBlock{}},
		{"a tool-result block without isError", `[{"type":"tool-result","toolCallId":"c1","content":[]}]`, engine.ToolResultBlock{}},
		{"an unknown block type is kept verbatim", `[{"type":"chart","data":{"z":1,"a":[true,null]}}]`, engine.RawBlock{}},
		{"a text block with an extra key is kept verbatim", `[{"type":"text","text":"hi","cache":true}]`, engine.RawBlock{}},
		{"a text block without text is kept verbatim", `[{"type":"text"}]`, engine.RawBlock{}},
		{"a block that is not an object is kept verbatim", `["just a string"]`, engine.RawBlock{}},
		{"a tool-result with a non-boolean isError is kept verbatim", `[{"type":"tool-result","toolCallId":"c1","content":[],"isError":"no"}]`, engine.RawBlock{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := dsl.Unmarshal([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := engine.ContentFromJSON(v)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := typeName(blocks[0]), typeName(tt.typ); got != want {
				t.Errorf("block type %s, want %s", got, want)
			}
			if got := mustJSON(t, engine.ContentJSON(blocks)); got != tt.in {
				t.Errorf("round trip\n got %s\nwant %s", got, tt.in)
			}
		})
	}
}

func typeName(v any) string {
	switch v.(type) {
	case engine.TextBlock:
		return "TextBlock"
	case engine.ReasoningBlock:
		return "ReasoningBlock"
	case engine.ImageBlock:
		return "ImageBlock"
	case engine.ToolCallBlock:
		return "ToolCallBlock"
	case engine.ToolResultBlock:
		return "ToolResultBlock"
	case engine.RawBlock:
		return "RawBlock"
	}
	return "?"
}

func TestContentFromJSONRefusesWhatIsNotLosslessContent(t *testing.T) {
	if _, err := engine.ContentFromJSON([]any{math.NaN()}); err == nil || err.Error() != "value[0]: NaN is not lossless JSON" {
		t.Errorf("NaN: err = %v", err)
	}
	if _, err := engine.ContentFromJSON(dsl.NewObject()); err == nil || err.Error() != "content must be an array of blocks, not an object" {
		t.Errorf("object: err = %v", err)
	}
}

func TestUserMessagesHaveFreshIDs(t *testing.T) {
	a := engine.NewUserMessage([]engine.Block{engine.Text("x")}, dsl.NewObject(dsl.Member{Key: "kind", Value: "user"}))
	b := engine.NewUserMessage(nil, nil)
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(a.ID) || a.ID == b.ID || a.Role != "user" {
		t.Fatalf("ids %q %q role %q", a.ID, b.ID, a.Role)
	}
	got := mustJSON(t, a.JSON())
	want := `{"id":"` + a.ID + `","role":"user","content":[{"type":"text","text":"x"}],"source":{"kind":"user"}}`
	if got != want {
		t.Errorf("JSON %s", got)
	}
	back, err := engine.MessageFromJSON(a.JSON())
	if err != nil || mustJSON(t, back.JSON()) != want {
		t.Errorf("MessageFromJSON = %v, %v", back, err)
	}
}

func TestResultJSONLeavesUnusedKeysOut(t *testing.T) {
	ok := &engine.Result{Value: "hi", Content: []engine.Block{engine.Text("hi")}}
	if got := mustJSON(t, ok.JSON()); got != `{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}` {
		t.Errorf("success: %s", got)
	}
	nullMeta := &engine.Result{Value: nil, Content: []engine.Block{}, HasMeta: true, ConcludesTurn: true}
	if got := mustJSON(t, nullMeta.JSON()); got != `{"isError":false,"value":null,"content":[],"meta":null,"concludesTurn":true}` {
		t.Errorf("null meta: %s", got)
	}
	fail := &engine.Result{IsError: true, Error: &engine.Failure{Message: "disk full", Info: &engine.ErrorInfo{Name: "HarnessError", Code: "ENOSPC", Reason: "quota"}},
		Content: []engine.Block{engine.Text("Error: disk full")}}
	if got := mustJSON(t, fail.JSON()); got != `{"isError":true,"error":{"message":"disk full","info":{"name":"HarnessError","code":"ENOSPC","reason":"quota"}},"content":[{"type":"text","text":"Error: disk full"}]}` {
		t.Errorf("failure: %s", got)
	}
}

// panicBlock is a custom block whose JSON method panics.
type panicBlock struct{}

func (panicBlock) BlockType() string { return "bad" }
func (panicBlock) JSON() any         { panic("block exploded") }

func TestABlockThatPanicsIsNotLosslessContent(t *testing.T) {
	svc := engine.New()
	_, err := svc.Global().Register(&engine.Definition{
		Name: "t", Parameters: dsl.NewObject(),
		Output: engine.Output{Schema: dsl.NewObject(), Render: func(_, _ any) ([]engine.Block, error) {
			return []engine.Block{panicBlock{}}, nil
		}},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "x", nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "t", Arguments: dsl.NewObject()})
	if got := mustJSON(t, r.JSON()); got != `{"isError":true,"error":{"message":"tool \"t\" returned invalid output: output.render returned non-lossless JSON","info":{"name":"ToolOutputError","code":"INVALID_TOOL_OUTPUT"}},"content":[{"type":"text","text":"Error: tool \"t\" returned invalid output: output.render returned non-lossless JSON"}]}` {
		t.Errorf("result %s", got)
	}
}
