package cli

import (
	"fmt"
	"strconv"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// modelCall is one tool call of a calls file, as the model emitted it.
type modelCall struct {
	block engine.ToolCallBlock
	// agent is the call's own "agent"; hasAgent says whether the call
	// named one (a null agent runs the call without one).
	agent    string
	hasAgent bool
}

// callKeys are the keys a call object may have.
var callKeys = map[string]bool{"id": true, "name": true, "arguments": true, "agent": true}

// parseCalls reads a calls file's JSON value: an array of
// {"id", "name", "arguments", "agent"?} objects. "name" is required;
// "id" defaults to "c<n>" (n counting from 1); "arguments" is the raw text
// the model emitted, or an object (written out as canonical JSON text), and
// is empty when absent; "agent" is an agent id, or null for none. Two
// calls with the same id (given or defaulted) are an error: the results and
// the session log tell calls apart by id. Errors name the call by its
// position: "call 2: ...".
func parseCalls(v any) ([]modelCall, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("the calls must be a JSON array of {\"id\", \"name\", \"arguments\"} objects, not %s", jsonKind(v))
	}
	calls := make([]modelCall, 0, len(arr))
	seen := make(map[string]int, len(arr)) // id -> call number
	for i, el := range arr {
		c, err := parseCall(el, i)
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", i+1, err)
		}
		if n, dup := seen[c.block.ID]; dup {
			return nil, fmt.Errorf("call %d: duplicate id %q (call %d has it too)", i+1, c.block.ID, n)
		}
		seen[c.block.ID] = i + 1
		calls = append(calls, c)
	}
	return calls, nil
}

func parseCall(v any, i int) (modelCall, error) {
	o, ok := v.(*dsl.Object)
	if !ok {
		return modelCall{}, fmt.Errorf("a call must be an object, not %s", jsonKind(v))
	}
	for _, k := range o.Keys() {
		if !callKeys[k] {
			return modelCall{}, fmt.Errorf("unknown key %q (a call has id, name, arguments and agent)", k)
		}
	}
	var c modelCall
	c.block.ID = "c" + strconv.Itoa(i+1)
	if id, ok := o.Get("id"); ok {
		s, ok := id.(string)
		if !ok || s == "" {
			return modelCall{}, fmt.Errorf(`"id" must be a non-empty string`)
		}
		c.block.ID = s
	}
	name, ok := o.Get("name")
	if !ok {
		return modelCall{}, fmt.Errorf(`missing "name"`)
	}
	if s, ok := name.(string); !ok || s == "" {
		return modelCall{}, fmt.Errorf(`"name" must be a non-empty string`)
	}
	c.block.Name = name.(string)
	if args, ok := o.Get("arguments"); ok {
		switch a := args.(type) {
		case string:
			c.block.Arguments = a
		case *dsl.Object:
			text, err := dsl.Marshal(a)
			if err != nil {
				return modelCall{}, fmt.Errorf(`"arguments": %w`, err)
			}
			c.block.Arguments = string(text)
		default:
			return modelCall{}, fmt.Errorf(`"arguments" must be the raw JSON text the model emitted or an object, not %s`, jsonKind(args))
		}
	}
	if agent, ok := o.Get("agent"); ok {
		switch a := agent.(type) {
		case nil:
			c.hasAgent = true
		case string:
			if a == "" {
				return modelCall{}, fmt.Errorf(`"agent" must be a non-empty agent id or null`)
			}
			c.agent, c.hasAgent = a, true
		default:
			return modelCall{}, fmt.Errorf(`"agent" must be an agent id or null, not %s`, jsonKind(agent))
		}
	}
	return c, nil
}

// jsonKind names a JSON value's kind for messages ("an object", "a string").
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
	case *dsl.Object:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
