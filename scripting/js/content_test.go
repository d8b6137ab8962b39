package js

import (
	"reflect"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// TestContentBlocksTypesAsTheEngineDoes checks the text-block fast path
// against engine.ContentFromJSON, which it stands in for.
func TestContentBlocksTypesAsTheEngineDoes(t *testing.T) {
	text := func(s string) *dsl.Object {
		return dsl.NewObject(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: s})
	}
	for _, c := range []struct {
		name string
		in   any
	}{
		{"text blocks are text blocks", []any{text("a"), text("b")}},
		{"no blocks are an empty list", []any{}},
		{"a text block with another member is a raw block", []any{text("a"), dsl.NewObject(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: "b"}, dsl.Member{Key: "x", Value: 1.0})}},
		{"a text block whose text is not a string is a raw block", []any{dsl.NewObject(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: 1.0})}},
		{"other blocks after text keep their types", []any{text("a"), dsl.NewObject(dsl.Member{Key: "type", Value: "reasoning"}, dsl.Member{Key: "text", Value: "r"}), "plain"}},
		{"content that is not a list fails", "text"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, gotErr := contentBlocks(c.in)
			want, wantErr := engine.ContentFromJSON(c.in)
			if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
				t.Fatalf("contentBlocks = %#v, %v; engine.ContentFromJSON = %#v, %v", got, gotErr, want, wantErr)
			}
		})
	}
}
