package js

import (
	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// contentBlocks types content a script returned, already converted by toGo:
// a list of text blocks ({type: "text", text}, the shape nearly every
// renderer returns) is typed here, without the copy engine.ContentFromJSON
// makes of a value it does not own (toGo's value is fresh, lossless JSON,
// owned by the caller); anything else goes to engine.ContentFromJSON, which
// types it the same way.
func contentBlocks(g any) ([]engine.Block, error) {
	list, ok := g.([]any)
	if !ok {
		return engine.ContentFromJSON(g)
	}
	blocks := make([]engine.Block, len(list))
	for k, e := range list {
		text, ok := textBlock(e)
		if !ok {
			return engine.ContentFromJSON(g)
		}
		blocks[k] = engine.TextBlock{Text: text}
	}
	return blocks, nil
}

// textBlock reads {type: "text", text: string} with no other member.
func textBlock(e any) (string, bool) {
	o, ok := e.(*dsl.Object)
	if !ok || o.Len() != 2 {
		return "", false
	}
	if t, _ := o.Get("type"); t != "text" {
		return "", false
	}
	s, ok := o.Get("text")
	text, isStr := s.(string)
	return text, ok && isStr
}
