package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestAudioAndResourceBlocksBecomeTheirMCPContent(t *testing.T) {
	wav := base64.StdEncoding.EncodeToString([]byte("RIFF"))
	cases := []struct {
		name, block, want string
	}{
		{"an audio block with data and a MIME type is audio",
			`{"type":"audio","data":"` + wav + `","mimeType":"audio/wav"}`,
			`{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="}`},
		{"a text resource is an embedded resource",
			`{"type":"resource","resource":{"uri":"test://r","mimeType":"text/plain","text":"hi"}}`,
			`{"type":"resource","resource":{"uri":"test://r","mimeType":"text/plain","text":"hi"}}`},
		{"a binary resource is an embedded resource",
			`{"type":"resource","resource":{"uri":"test://b","blob":"` + wav + `"}}`,
			`{"type":"resource","resource":{"uri":"test://b","blob":"UklGRg=="}}`},
		{"a resource link is a resource link",
			`{"type":"resource_link","uri":"file:///a.txt","name":"a.txt","mimeType":"text/plain"}`,
			`{"type":"resource_link","mimeType":"text/plain","uri":"file:///a.txt","name":"a.txt"}`},
		{"audio without a MIME type stays JSON text",
			`{"type":"audio","data":"` + wav + `"}`,
			`{"type":"text","text":"{\"type\":\"audio\",\"data\":\"UklGRg==\"}"}`},
		{"a resource with neither text nor blob stays JSON text",
			`{"type":"resource","resource":{"uri":"test://r"}}`,
			`{"type":"text","text":"{\"type\":\"resource\",\"resource\":{\"uri\":\"test://r\"}}"}`},
		{"a resource link without a name stays JSON text",
			`{"type":"resource_link","uri":"file:///a.txt"}`,
			`{"type":"text","text":"{\"type\":\"resource_link\",\"uri\":\"file:///a.txt\"}"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			block, err := dsl.Unmarshal([]byte(c.block))
			if err != nil {
				t.Fatal(err)
			}
			svc := engine.New()
			def, err := engine.DefineTool(engine.ToolOptions[any, any]{
				Name: "media", Output: dsl.String(),
				Render: func(any, any) ([]engine.Block, error) {
					return []engine.Block{engine.RawBlock{Value: block}}, nil
				},
				Execute: func(context.Context, any, *engine.Run) (any, error) { return "ok", nil },
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Global().Register(def); err != nil {
				t.Fatal(err)
			}
			cs := serveEngine(t, svc).connect(t, legacy, nil)
			r := call(t, cs, "media", `{}`)
			if len(r.Content) != 1 {
				t.Fatalf("content %v, want one block", r.Content)
			}
			got, _ := json.Marshal(r.Content[0])
			if string(got) != c.want {
				t.Errorf("block %s\nwant %s", got, c.want)
			}
		})
	}
}
