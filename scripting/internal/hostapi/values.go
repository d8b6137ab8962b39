package hostapi

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// Filter reads the filter of tools.restrict({allow, deny}): each list
// present is an array of tool names. A nil o is an empty filter.
func Filter(o *dsl.Object) (engine.Filter, error) {
	var f engine.Filter
	for _, k := range []string{"allow", "deny"} {
		raw, ok := o.Get(k)
		if !ok {
			continue
		}
		list, isList := raw.([]any)
		names := []string{}
		for _, n := range list {
			s, isStr := n.(string)
			if !isStr {
				isList = false
			}
			names = append(names, s)
		}
		if !isList {
			return engine.Filter{}, fmt.Errorf("tools.restrict(): %s must be an array of tool names", k)
		}
		if k == "allow" {
			f.Allow = names
		} else {
			f.Deny = names
		}
	}
	return f, nil
}

// DeferredMessage reads a context message a script of the plugin at rel
// defers: {content, source?} or a whole message {id, role: "user",
// content, source}. Without a source, the message's source is the plugin.
func DeferredMessage(o *dsl.Object, rel string) (engine.Message, error) {
	if _, hasID := o.Get("id"); hasID {
		m, err := engine.MessageFromJSON(o)
		if err == nil && m.Role != "user" {
			err = errors.New("a deferred context message must have the user role")
		}
		return m, err
	}
	c, _ := o.Get("content")
	content, err := engine.ContentFromJSON(c)
	if err != nil {
		return engine.Message{}, err
	}
	source, ok := o.Get("source")
	if !ok {
		source = dsl.NewObject(dsl.Member{Key: "kind", Value: "plugin"}, dsl.Member{Key: "plugin", Value: rel})
	}
	return engine.NewUserMessage(content, source), nil
}

// ChangeJSON is what a tools/change listener receives: {kind, agent?,
// name?}.
func ChangeJSON(c engine.Change) *dsl.Object {
	o := dsl.NewObject(dsl.Member{Key: "kind", Value: string(c.Kind)})
	if c.Agent != nil {
		o.Set("agent", c.Agent.ID())
	}
	if c.Name != "" {
		o.Set("name", c.Name)
	}
	return o
}

// SummaryJSON is the result summary a tool's presentResult receives:
// {content, isError, meta?}.
func SummaryJSON(r engine.ResultSummary) *dsl.Object {
	summary := dsl.NewObject(dsl.Member{Key: "content", Value: engine.ContentJSON(r.Content)}, dsl.Member{Key: "isError", Value: r.IsError})
	if r.HasMeta {
		summary.Set("meta", r.Meta)
	}
	return summary
}

// InvalidResult is the error of a tools/execute wrapper whose result could
// not be read.
func InvalidResult(why error) error {
	return fmt.Errorf("tools/execute wrapper returned an invalid result: %w", why)
}

// NonLossless stands for values a script gave that are not lossless JSON:
// raw parameters fail when schemas() projects them, a value or content
// fails the pipeline's output check, as the spec says.
type NonLossless struct{}

// BodyValue is what the value of tool's body stands for when converting
// it failed with err: a snapshot failure when the value passed a limit,
// else [NonLossless], which the pipeline reports as the tool's invalid
// output. It logs err at debug level.
func BodyValue(log *slog.Logger, tool string, err error) any {
	log.Debug(fmt.Sprintf("tool %s returned a value that is not lossless JSON: %s", display.Quote(tool), display.Line(err.Error(), display.MaxText)))
	if errors.Is(err, dsl.ErrLimit) {
		return engine.SnapshotFailure{Err: err}
	}
	return NonLossless{}
}

// SchemaError is the error of a schema a script gave that is not lossless
// JSON.
func SchemaError(err error) error {
	return &dsl.JsonSchemaError{Violations: []string{"schema is not lossless JSON data: " + err.Error()}}
}

// AgentJSON is what scripts see of an agent: {id, parent?}, the parent
// alike; nil for none.
func AgentJSON(a *engine.Agent) any {
	if a == nil {
		return nil
	}
	o := dsl.NewObject(dsl.Member{Key: "id", Value: a.ID()})
	if a.Parent() != nil {
		o.Set("parent", AgentJSON(a.Parent()))
	}
	return o
}

// View is the view a tool's present hook (presentCall, presentResult or
// the like) returned: v, or nil when it failed with err, which is logged as
// a warning.
func View[V any](log *slog.Logger, tool, hook string, v any, err error) *V {
	if err != nil {
		// The error is the script's: one line, bounded.
		log.Warn(fmt.Sprintf("tool %s %s failed: %s", display.Quote(tool), hook, display.Line(err.Error(), display.MaxText)))
		return nil
	}
	return v.(*V)
}
