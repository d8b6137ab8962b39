package mcp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// What an imported server says about its tools and content reaches the
// clients of dsh serve unchanged:
//
//   - a tool's title and annotations (readOnlyHint, destructiveHint,
//     idempotentHint, openWorldHint) become the engine definition's Title
//     and Annotations, which dsh serve lists again;
//   - a text or image block with annotations (audience, priority,
//     lastModified) or _meta stays a raw block in its MCP shape ({type:
//     "text", text, annotations}, {type: "image", data, mimeType,
//     annotations}), which policies see as JSON with its text, the call's
//     value counts as text, and dsh serve sends back as the same MCP block.

// annotated reports whether c is a text or image block that a plain engine
// block would strip: one with annotations or _meta.
func annotated(c sdk.Content) bool {
	switch x := c.(type) {
	case *sdk.TextContent:
		return x.Annotations != nil || x.Meta != nil
	case *sdk.ImageContent:
		return x.Annotations != nil || x.Meta != nil
	}
	return false
}

// rawBlock is c as a raw block: its MCP JSON.
func rawBlock(c sdk.Content) (engine.Block, error) {
	text, err := json.Marshal(c)
	var v any
	if err == nil {
		v, err = dsl.Unmarshal(text)
	}
	if err != nil {
		return nil, fmt.Errorf("a content block is not JSON: %v", err)
	}
	return engine.RawBlock{Value: v}, nil
}

// rawText reads a raw {type: "text", text, ...} block, or returns nil.
func rawText(v any) *sdk.TextContent {
	o, ok := v.(*dsl.Object)
	if !ok {
		return nil
	}
	text, _ := o.Get("text")
	s, ok := text.(string)
	if !ok {
		return nil
	}
	return &sdk.TextContent{Text: s}
}

// annotate gives c the annotations and _meta of the raw block v it was
// made from, when they have the MCP shape; others are dropped.
func annotate(c sdk.Content, v any) sdk.Content {
	o, ok := v.(*dsl.Object)
	if !ok {
		return c
	}
	var ann *sdk.Annotations
	if a, ok := o.Get("annotations"); ok {
		var x sdk.Annotations
		if decodeInto(a, &x) {
			ann = &x
		}
	}
	var meta sdk.Meta
	if m, ok := o.Get("_meta"); ok && !decodeInto(m, &meta) {
		meta = nil
	}
	switch x := c.(type) {
	case *sdk.TextContent:
		x.Annotations, x.Meta = ann, meta
	case *sdk.ImageContent:
		x.Annotations, x.Meta = ann, meta
	case *sdk.AudioContent:
		x.Annotations, x.Meta = ann, meta
	case *sdk.EmbeddedResource:
		x.Annotations, x.Meta = ann, meta
	}
	return c
}

// toolAnnotations is an imported tool's annotations as a JSON value of
// dsh's (nil without any).
func toolAnnotations(a *sdk.ToolAnnotations) any {
	if a == nil {
		return nil
	}
	text, err := json.Marshal(a)
	if err != nil {
		return nil
	}
	v, err := dsl.Unmarshal(text)
	if err != nil {
		return nil
	}
	return v
}

// servedAnnotations are the annotations dsh serve lists for def: those it
// was given (an imported tool's), else what the engine knows of it: none
// yet, as no tool of dsh's own has a concurrency safety known before its
// arguments (the script hosts ask the tool's isConcurrencySafe per call).
func servedAnnotations(def *engine.Definition) *sdk.ToolAnnotations {
	if def == nil || def.Annotations == nil {
		return nil
	}
	var a sdk.ToolAnnotations
	if !decodeInto(def.Annotations, &a) {
		return nil
	}
	return &a
}
