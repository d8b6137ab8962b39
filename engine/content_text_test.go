package engine_test

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// annotatedText is an imported MCP text block with annotations, kept raw
// because a typed TextBlock would strip them.
func annotatedText(text any) engine.Block {
	return engine.RawBlock{Value: dsl.NewObject(
		dsl.Member{Key: "type", Value: "text"},
		dsl.Member{Key: "text", Value: text},
		dsl.Member{Key: "annotations", Value: dsl.NewObject(dsl.Member{Key: "audience", Value: []any{"user"}})},
	)}
}

func TestBlockText(t *testing.T) {
	for _, c := range []struct {
		name   string
		block  engine.Block
		want   string
		isText bool
	}{
		{"a text block is its text", engine.Text("hi"), "hi", true},
		{"a raw text block with annotations is its text", annotatedText("hi"), "hi", true},
		{"a raw text block whose text is not a string is not text", annotatedText(1.0), "", false},
		{"a raw text block without text is not text", engine.RawBlock{Value: dsl.NewObject(dsl.Member{Key: "type", Value: "text"})}, "", false},
		{"a raw image block is not text", engine.RawBlock{Value: dsl.NewObject(dsl.Member{Key: "type", Value: "image"}, dsl.Member{Key: "text", Value: "x"})}, "", false},
		{"a reasoning block is not visible text", engine.ReasoningBlock{Text: "why"}, "", false},
		{"a raw block that is not an object is not text", engine.RawBlock{Value: "text"}, "", false},
		{"no block is not text", nil, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := engine.BlockText(c.block)
			if got != c.want || ok != c.isText {
				t.Errorf("BlockText = %q, %v; want %q, %v", got, ok, c.want, c.isText)
			}
		})
	}
}

func TestBlockMessageReadsAnnotatedText(t *testing.T) {
	for _, c := range []struct {
		name     string
		feedback []engine.Block
		want     string
	}{
		{"an annotated text block gives its text", []engine.Block{annotatedText("not for the model")}, "not for the model"},
		{"annotated and plain text are joined by newlines", []engine.Block{engine.Text("a"), annotatedText("b")}, "a\nb"},
		{"a raw text block whose text is not a string is content", []engine.Block{annotatedText(2.0)}, "[text content]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := engine.New()
			cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
			svc.Global().OnPostExecute(cfPost(func(*engine.Result) (engine.PostDecision, error) { return engine.BlockResult(c.feedback), nil }))
			r := cfCall(svc, "echo", cfObj())
			if !r.IsError || r.Error == nil || r.Error.Message != c.want {
				t.Errorf("error = %+v, want message %q", r.Error, c.want)
			}
		})
	}
}
