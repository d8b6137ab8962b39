package cli

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestCardsShowTheTextOfAnnotatedBlocks(t *testing.T) {
	raw := func(members ...dsl.Member) engine.Block { return engine.RawBlock{Value: dsl.NewObject(members...)} }
	audience := dsl.Member{Key: "annotations", Value: dsl.NewObject(dsl.Member{Key: "audience", Value: []any{"user"}})}
	for _, tc := range []struct {
		name    string
		content []engine.Block
		want    string
	}{
		{"an imported text block with annotations reads as its text",
			[]engine.Block{raw(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: "for the user"}, audience)},
			"✓ t c1\n  for the user\n\n"},
		{"plain and annotated text read alike, one line each",
			[]engine.Block{engine.Text("a"), raw(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: "b\nc"}, audience)},
			"✓ t c1\n  a\n  b\n  c\n\n"},
		{"a raw text block whose text is not a string stays content",
			[]engine.Block{raw(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: 3.0})},
			"✓ t c1\n  [text content]\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeCards(&b, style{}, []card{{callID: "c1", name: "t", hasResult: true, content: tc.content}})
			if b.String() != tc.want {
				t.Errorf("cards:\n%q\nwant:\n%q", b.String(), tc.want)
			}
		})
	}
}
