package engine

import (
	"crypto/rand"
	"fmt"

	"github.com/dsh-go/dsh/dsl"
)

// Block is one content block of a result or message: a [TextBlock],
// [ReasoningBlock], [ImageBlock], [ToolCallBlock], [ToolResultBlock], or a
// [RawBlock] for any other type or shape, kept verbatim.
type Block interface {
	// BlockType is the block's "type" key ("" for a raw block without one).
	BlockType() string
	// JSON returns the block as a JSON value.
	JSON() any
}

// TextBlock is {type: "text", text}.
type TextBlock struct{ Text string }

// ReasoningBlock is {type: "reasoning", text}: model thinking, not visible text.
type ReasoningBlock struct{ Text string }

// ImageBlock is {type: "image", attachment}: a durable attachment reference.
type ImageBlock struct{ Attachment any }

// ToolCallBlock is {type: "tool-call", id, name, arguments}; Arguments is the
// raw JSON text the model emitted.
type ToolCallBlock struct{ ID, Name, Arguments string }

// ToolResultBlock is {type: "tool-result", toolCallId, content, isError?}.
type ToolResultBlock struct {
	ToolCallID string
	Content    []Block
	IsError    *bool
}

// RawBlock is any other block, or a known type in another shape: its JSON
// value is kept as it came, so unknown block types round-trip losslessly.
type RawBlock struct{ Value any }

// Text returns a text block.
func Text(s string) Block { return TextBlock{Text: s} }

func (TextBlock) BlockType() string       { return "text" }
func (ReasoningBlock) BlockType() string  { return "reasoning" }
func (ImageBlock) BlockType() string      { return "image" }
func (ToolCallBlock) BlockType() string   { return "tool-call" }
func (ToolResultBlock) BlockType() string { return "tool-result" }

// BlockType returns the raw value's "type" string, if it has one.
func (b RawBlock) BlockType() string {
	if o, ok := b.Value.(*dsl.Object); ok {
		if t, ok := o.Get("type"); ok {
			if s, ok := t.(string); ok {
				return s
			}
		}
	}
	return ""
}

func (b TextBlock) JSON() any {
	return dsl.NewObject(dsl.Member{Key: "type", Value: "text"}, dsl.Member{Key: "text", Value: b.Text})
}

func (b ReasoningBlock) JSON() any {
	return dsl.NewObject(dsl.Member{Key: "type", Value: "reasoning"}, dsl.Member{Key: "text", Value: b.Text})
}

func (b ImageBlock) JSON() any {
	return dsl.NewObject(dsl.Member{Key: "type", Value: "image"}, dsl.Member{Key: "attachment", Value: b.Attachment})
}

func (b ToolCallBlock) JSON() any {
	return dsl.NewObject(dsl.Member{Key: "type", Value: "tool-call"}, dsl.Member{Key: "id", Value: b.ID},
		dsl.Member{Key: "name", Value: b.Name}, dsl.Member{Key: "arguments", Value: b.Arguments})
}

func (b ToolResultBlock) JSON() any {
	o := dsl.NewObject(dsl.Member{Key: "type", Value: "tool-result"}, dsl.Member{Key: "toolCallId", Value: b.ToolCallID},
		dsl.Member{Key: "content", Value: ContentJSON(b.Content)})
	if b.IsError != nil {
		o.Set("isError", *b.IsError)
	}
	return o
}

func (b RawBlock) JSON() any { return b.Value }

// ContentJSON returns blocks as a JSON array.
func ContentJSON(blocks []Block) []any {
	out := make([]any, len(blocks))
	for i, b := range blocks {
		if b == nil {
			out[i] = nil
			continue
		}
		out[i] = b.JSON()
	}
	return out
}

// ContentFromJSON reads a JSON array of blocks. Blocks of a known type in
// exactly the known shape become typed blocks; every other element becomes a
// RawBlock holding its snapshot. The pipeline never validates block shape: only
// a value that is not lossless JSON, or not an array, is an error.
func ContentFromJSON(v any) ([]Block, error) {
	snap, err := dsl.Snapshot(v)
	if err != nil {
		return nil, err
	}
	list, ok := snap.([]any)
	if !ok {
		return nil, fmt.Errorf("content must be an array of blocks, not %s", jsonKind(snap))
	}
	out := make([]Block, len(list))
	for i, e := range list {
		out[i] = blockOf(e)
	}
	return out, nil
}

// BlockFromJSON reads one block, as ContentFromJSON reads each element.
func BlockFromJSON(v any) (Block, error) {
	snap, err := dsl.Snapshot(v)
	if err != nil {
		return nil, err
	}
	return blockOf(snap), nil
}

// blockOf types a snapshotted block value when its shape is exactly known.
func blockOf(v any) Block {
	o, ok := v.(*dsl.Object)
	if !ok {
		return RawBlock{Value: v}
	}
	str := func(k string) (string, bool) {
		x, ok := o.Get(k)
		s, isStr := x.(string)
		return s, ok && isStr
	}
	t, _ := str("type")
	switch {
	case (t == "text" || t == "reasoning") && o.Len() == 2:
		if s, ok := str("text"); ok {
			if t == "text" {
				return TextBlock{Text: s}
			}
			return ReasoningBlock{Text: s}
		}
	case t == "image" && o.Len() == 2:
		if a, ok := o.Get("attachment"); ok {
			return ImageBlock{Attachment: a}
		}
	case t == "tool-call" && o.Len() == 4:
		id, ok1 := str("id")
		name, ok2 := str("name")
		args, ok3 := str("arguments")
		if ok1 && ok2 && ok3 {
			return ToolCallBlock{ID: id, Name: name, Arguments: args}
		}
	case t == "tool-result" && (o.Len() == 3 || o.Len() == 4):
		id, ok1 := str("toolCallId")
		c, ok2 := o.Get("content")
		list, ok3 := c.([]any)
		var isErr *bool
		if e, present := o.Get("isError"); present {
			b, isBool := e.(bool)
			if !isBool {
				break
			}
			isErr = &b
		} else if o.Len() == 4 {
			break
		}
		if ok1 && ok2 && ok3 {
			inner := make([]Block, len(list))
			for i, e := range list {
				inner[i] = blockOf(e)
			}
			return ToolResultBlock{ToolCallID: id, Content: inner, IsError: isErr}
		}
	}
	return RawBlock{Value: o}
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// BlockText returns the text of a text block: a [TextBlock], or a
// [RawBlock] {type: "text", text, ...} whose text is a string (an imported
// MCP text block that keeps its annotations or _meta). Any other block,
// and nil, is not text.
func BlockText(b Block) (string, bool) {
	switch b := b.(type) {
	case TextBlock:
		return b.Text, true
	case RawBlock:
		o, ok := b.Value.(*dsl.Object)
		if !ok || b.BlockType() != "text" {
			return "", false
		}
		text, _ := o.Get("text")
		s, ok := text.(string)
		return s, ok
	}
	return "", false
}

// blocksText derives a message from blocks: a text block (typed or raw, see
// [BlockText]) gives its text, any other block the literal "[<type> content]"; blocks are joined by newlines.
func blocksText(blocks []Block) string {
	var s []byte
	for i, b := range blocks {
		if i > 0 {
			s = append(s, '\n')
		}
		if t, ok := BlockText(b); ok {
			s = append(s, t...)
			continue
		}
		s = append(s, "["+blockTypeOf(b)+" content]"...)
	}
	return string(s)
}

func blockTypeOf(b Block) string {
	if b == nil {
		return ""
	}
	return b.BlockType()
}

// Message is an immutable conversation message.
type Message struct {
	ID      string
	Role    string // system, user or assistant
	Content []Block
	// Source says where the message came from ({kind: "user"}, {kind:
	// "plugin", plugin}, {kind: "model", …}, {kind: "tool", callId}) as a
	// JSON object, kept verbatim.
	Source any
}

// NewUserMessage returns a user message with a fresh random id.
func NewUserMessage(content []Block, source any) Message {
	return Message{ID: newUUID(), Role: "user", Content: content, Source: source}
}

// JSON returns the message as a JSON object {id, role, content, source}.
func (m Message) JSON() any {
	return dsl.NewObject(dsl.Member{Key: "id", Value: m.ID}, dsl.Member{Key: "role", Value: m.Role},
		dsl.Member{Key: "content", Value: ContentJSON(m.Content)}, dsl.Member{Key: "source", Value: m.Source})
}

// MessageFromJSON reads a message object {id, role, content, source}.
func MessageFromJSON(v any) (Message, error) {
	snap, err := dsl.Snapshot(v)
	if err != nil {
		return Message{}, err
	}
	o, ok := snap.(*dsl.Object)
	if !ok {
		return Message{}, fmt.Errorf("a message must be an object, not %s", jsonKind(snap))
	}
	var m Message
	id, _ := o.Get("id")
	role, _ := o.Get("role")
	var isStr bool
	if m.ID, isStr = id.(string); !isStr {
		return Message{}, fmt.Errorf("a message needs a string id")
	}
	if m.Role, isStr = role.(string); !isStr || m.Role != "user" && m.Role != "assistant" && m.Role != "system" {
		return Message{}, fmt.Errorf("a message role must be user, assistant or system")
	}
	c, _ := o.Get("content")
	if m.Content, err = ContentFromJSON(c); err != nil {
		return Message{}, err
	}
	m.Source, _ = o.Get("source")
	return m, nil
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
