package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// elicit is the terminal's engine.ElicitFunc under --approve prompt: a
// tool's question (exec.elicit, or an imported MCP server's elicitation)
// is asked on standard error, one question at a time with the approvals.
// "Answer? [y/N]": "y" or "yes" fills the form, a property a line ("name
// (string): "; an empty line leaves it out, a value that does not read as
// its type asks again), and accepts it; any other answer declines; the end
// of the input cancels. A URL-mode question shows its URL and asks
// "Done? [y/N]": yes accepts it, without content. The whole question waits at most the
// --approval-timeout, then answers cancel; an interrupt ends it with the
// call's error.
func (a *promptApproval) elicit(ctx context.Context, e engine.Elicitation) (engine.ElicitResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	wait, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	res, err := a.form(wait, e)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(a.stderr)
		return engine.ElicitResult{}, ctx.Err()
	case wait.Err() != nil:
		fmt.Fprintf(a.stderr, "\n  → no answer within %s (--approval-timeout): cancelled\n", a.timeout)
		return engine.ElicitResult{Action: "cancel"}, nil
	case err != nil: // the end of the input
		fmt.Fprintln(a.stderr)
		return engine.ElicitResult{Action: "cancel"}, nil
	}
	return res, nil
}

// form asks e's confirmation, then each of its properties; a URL-mode
// question shows its URL and asks whether the user is done there.
func (a *promptApproval) form(ctx context.Context, e engine.Elicitation) (engine.ElicitResult, error) {
	if e.URL != "" {
		fmt.Fprintf(a.stderr, "dsh: a tool asks you to open a URL: %s\n  %s\nDone? [y/N] ",
			display.Line(e.Message, display.MaxText), display.Line(e.URL, display.MaxText))
	} else {
		fmt.Fprintf(a.stderr, "dsh: a tool asks: %s\nAnswer? [y/N] ", display.Line(e.Message, display.MaxText))
	}
	line, err := a.answers.readLine(ctx)
	if err != nil {
		return engine.ElicitResult{}, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
	default:
		return engine.ElicitResult{Action: "decline"}, nil
	}
	if e.URL != "" {
		return engine.ElicitResult{Action: "accept"}, nil
	}
	content := dsl.NewObject()
	schema, _ := e.Schema.(*dsl.Object)
	var props *dsl.Object
	if schema != nil {
		v, _ := schema.Get("properties")
		props, _ = v.(*dsl.Object)
	}
	if props == nil {
		return engine.ElicitResult{Action: "accept"}, nil
	}
	for name, p := range props.All() {
		prop, _ := p.(*dsl.Object)
		for {
			fmt.Fprintf(a.stderr, "  %s: ", propLabel(name, prop))
			line, err := a.answers.readLine(ctx)
			if err != nil {
				return engine.ElicitResult{}, err
			}
			line = strings.TrimSpace(strings.TrimRight(line, "\r\n"))
			if line == "" {
				break
			}
			v, err := propValue(prop, line)
			if err != nil {
				fmt.Fprintf(a.stderr, "  → %v\n", err)
				continue
			}
			content.Set(name, v)
			break
		}
	}
	return engine.ElicitResult{Action: "accept", Content: content}, nil
}

// propLabel is how a property is asked: its name, its type and choices,
// its description, and its default in brackets.
func propLabel(name string, prop *dsl.Object) string {
	get := func(k string) any {
		if prop == nil {
			return nil
		}
		v, _ := prop.Get(k)
		return v
	}
	var what []string
	if typ, ok := get("type").(string); ok {
		what = append(what, typ)
	}
	if choices := propChoices(prop); choices != nil {
		what = append(what, "one of "+strings.Join(choices, "|"))
	}
	if d, ok := get("description").(string); ok && d != "" {
		what = append(what, d)
	}
	label := display.Line(name, display.MaxName)
	if len(what) > 0 {
		label += " (" + display.Line(strings.Join(what, ", "), display.MaxText) + ")"
	}
	if d := get("default"); d != nil {
		text, _ := dsl.Marshal(d)
		label += " [" + display.Line(string(text), display.MaxText) + "]"
	}
	return label
}

// propChoices are the values of a string enum (enum, or oneOf of consts),
// or nil.
func propChoices(prop *dsl.Object) []string {
	if prop == nil {
		return nil
	}
	var out []string
	if v, ok := prop.Get("enum"); ok {
		list, _ := v.([]any)
		for _, x := range list {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if v, ok := prop.Get("oneOf"); ok {
		list, _ := v.([]any)
		for _, x := range list {
			if o, ok := x.(*dsl.Object); ok {
				if c, ok := o.Get("const"); ok {
					if s, ok := c.(string); ok {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// propValue reads line as a value of prop's type: a boolean from y/yes/
// true or n/no/false, a number, an integer, an array as comma-separated
// strings, a string as typed (one of its choices when it has some).
func propValue(prop *dsl.Object, line string) (any, error) {
	var typ string
	if prop != nil {
		v, _ := prop.Get("type")
		typ, _ = v.(string)
	}
	switch typ {
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, nil
		case "n", "no", "false":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	case "number", "integer":
		n, err := strconv.ParseFloat(line, 64)
		if err != nil {
			return nil, errors.New("answer a number")
		}
		if typ == "integer" && n != float64(int64(n)) {
			return nil, errors.New("answer a whole number")
		}
		return n, nil
	case "array":
		var out []any
		for _, part := range strings.Split(line, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, nil
	}
	if choices := propChoices(prop); choices != nil {
		for _, c := range choices {
			if c == line {
				return line, nil
			}
		}
		return nil, errors.New("answer one of " + strings.Join(choices, "|"))
	}
	return line, nil
}
