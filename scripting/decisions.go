package scripting

// The decision and result shapes scripts return (pipeline spec §3), read
// strictly and the same way for every language: a host converts the
// script's value to the Go form of JSON (package dsl) and reads it here, so
// JavaScript and Lua listeners fail closed with the same messages.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

const (
	preEvent  = "tools/pre-execute"
	postEvent = "tools/post-execute"
)

// only checks that o has no key outside allowed.
func only(o *dsl.Object, event string, allowed ...string) error {
	for _, k := range o.Keys() {
		if !slices.Contains(allowed, k) {
			return errDecision(event, fmt.Sprintf("%s does not take %s", display.Quote(kindOf(o)), display.Quote(k)))
		}
	}
	return nil
}

func kindOf(o *dsl.Object) string {
	k, _ := o.Get("kind")
	s, _ := k.(string)
	return s
}

func optString(o *dsl.Object, key, event string) (string, error) {
	v, ok := o.Get(key)
	if !ok {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", errDecision(event, key+" must be a string")
	}
	return s, nil
}

// ReadPreDecision reads a script's pre-execute decision, strictly: anything but
// the design's shapes fails closed.
func ReadPreDecision(v any) (engine.PreDecision, error) {
	o, ok := v.(*dsl.Object)
	if !ok {
		return engine.PreDecision{}, errDecision(preEvent, "a decision must be an object")
	}
	switch k, _ := o.Get("kind"); k {
	case "allow":
		return engine.Allow(), only(o, preEvent, "kind")
	case "cancel":
		return engine.Cancel(), only(o, preEvent, "kind")
	case "deny":
		if err := only(o, preEvent, "kind", "reason", "info"); err != nil {
			return engine.PreDecision{}, err
		}
		r, ok := o.Get("reason")
		reason, isStr := r.(string)
		if !ok || !isStr {
			return engine.PreDecision{}, errDecision(preEvent, `"deny" needs a reason string`)
		}
		d := engine.Deny(reason)
		if iv, ok := o.Get("info"); ok {
			info, err := errorInfo(iv)
			if err != nil {
				return engine.PreDecision{}, errDecision(preEvent, err.Error())
			}
			d.Info = info
		}
		return d, nil
	case "ask":
		if err := only(o, preEvent, "kind", "reason", "displayReason"); err != nil {
			return engine.PreDecision{}, err
		}
		reason, err := optString(o, "reason", preEvent)
		if err != nil {
			return engine.PreDecision{}, err
		}
		display, err := optString(o, "displayReason", preEvent)
		if err != nil {
			return engine.PreDecision{}, err
		}
		d := engine.Ask(reason)
		d.DisplayReason = display
		return d, nil
	default:
		return engine.PreDecision{}, errDecision(preEvent, fmt.Sprintf("unknown kind %s", jsonText(k)))
	}
}

// jsonText is v as JSON text for a message: the script chose v, so the
// text is cut to maxJSONShown bytes, marked, and kept on one line.
func jsonText(v any) string {
	if v == nil {
		return "undefined"
	}
	b, err := dsl.Marshal(v)
	if err != nil {
		return "?"
	}
	return display.Line(string(b), maxJSONShown)
}

// maxJSONShown bounds the JSON text of a script's value in a message.
const maxJSONShown = 100

func errorInfo(v any) (*engine.ErrorInfo, error) {
	o, ok := v.(*dsl.Object)
	if !ok {
		return nil, fmt.Errorf("info must be {name, code, reason?}")
	}
	var info engine.ErrorInfo
	for _, k := range o.Keys() {
		x, _ := o.Get(k)
		s, isStr := x.(string)
		if !isStr {
			return nil, fmt.Errorf("info.%s must be a string", k)
		}
		switch k {
		case "name":
			info.Name = s
		case "code":
			info.Code = s
		case "reason":
			info.Reason = s
		default:
			return nil, fmt.Errorf("info does not take %s", display.Quote(k))
		}
	}
	if info.Name == "" || info.Code == "" {
		return nil, fmt.Errorf("info needs a name and a code")
	}
	return &info, nil
}

// PreDecisionJSON is a pre-execute decision as next() resolves for a script.
func PreDecisionJSON(d engine.PreDecision) any {
	o := dsl.NewObject(dsl.Member{Key: "kind", Value: string(d.Kind)})
	if d.Reason != "" {
		o.Set("reason", d.Reason)
	}
	if d.Info != nil {
		o.Set("info", d.Info.JSON())
	}
	if d.DisplayReason != "" {
		o.Set("displayReason", d.DisplayReason)
	}
	return o
}

// ReadPostDecision reads a script's post-execute decision.
func ReadPostDecision(v any) (engine.PostDecision, error) {
	o, ok := v.(*dsl.Object)
	if !ok {
		return engine.PostDecision{}, errDecision(postEvent, "a decision must be an object")
	}
	contexts, err := contextsOf(o)
	if err != nil {
		return engine.PostDecision{}, errDecision(postEvent, err.Error())
	}
	switch k, _ := o.Get("kind"); k {
	case "accept":
		if err := only(o, postEvent, "kind", "content", "value", "additionalContexts"); err != nil {
			return engine.PostDecision{}, err
		}
		d := engine.Accept(contexts...)
		if c, ok := o.Get("content"); ok {
			blocks, err := engine.ContentFromJSON(c)
			if err != nil {
				return engine.PostDecision{}, errDecision(postEvent, "content: "+err.Error())
			}
			d.Content, d.HasContent = blocks, true
		}
		if v, ok := o.Get("value"); ok {
			d.Value, d.HasValue = v, true
		}
		return d, nil
	case "block":
		if err := only(o, postEvent, "kind", "feedback", "additionalContexts"); err != nil {
			return engine.PostDecision{}, err
		}
		f, _ := o.Get("feedback")
		blocks, err := engine.ContentFromJSON(f)
		if err != nil {
			return engine.PostDecision{}, errDecision(postEvent, `"block" needs feedback blocks`)
		}
		return engine.BlockResult(blocks, contexts...), nil
	default:
		return engine.PostDecision{}, errDecision(postEvent, fmt.Sprintf("unknown kind %s", jsonText(k)))
	}
}

func contextsOf(o *dsl.Object) ([]engine.Message, error) {
	v, ok := o.Get("additionalContexts")
	if !ok {
		return nil, nil
	}
	list, isList := v.([]any)
	if !isList {
		return nil, fmt.Errorf("additionalContexts must be an array of messages")
	}
	out := make([]engine.Message, len(list))
	for k, m := range list {
		msg, err := engine.MessageFromJSON(m)
		if err != nil {
			return nil, fmt.Errorf("additionalContexts[%d]: %w", k, err)
		}
		out[k] = msg
	}
	return out, nil
}

// PostDecisionJSON is a post-execute decision as next() resolves for a script.
func PostDecisionJSON(d engine.PostDecision) any {
	o := dsl.NewObject(dsl.Member{Key: "kind", Value: string(d.Kind)})
	if d.HasContent {
		o.Set("content", engine.ContentJSON(d.Content))
	}
	if d.HasValue {
		o.Set("value", d.Value)
	}
	if d.Kind == engine.PostBlock {
		o.Set("feedback", engine.ContentJSON(d.Feedback))
	}
	if len(d.AdditionalContexts) > 0 {
		list := make([]any, len(d.AdditionalContexts))
		for k, m := range d.AdditionalContexts {
			list[k] = m.JSON()
		}
		o.Set("additionalContexts", list)
	}
	return o
}

// ReadResult reads a result a wrapper authored: {isError, value?, error?,
// content, meta?, additionalContexts?}.
func ReadResult(v any) (*engine.Result, error) {
	o, ok := v.(*dsl.Object)
	if !ok {
		return nil, fmt.Errorf("tools/execute wrapper returned %s, not a result object", jsonText(v))
	}
	r := &engine.Result{}
	isErr, _ := o.Get("isError")
	b, isBool := isErr.(bool)
	if !isBool {
		return nil, fmt.Errorf("tools/execute wrapper returned a result without a boolean isError")
	}
	r.IsError = b
	if c, ok := o.Get("content"); ok {
		blocks, err := engine.ContentFromJSON(c)
		if err != nil {
			return nil, fmt.Errorf("tools/execute wrapper result content: %w", err)
		}
		r.Content = blocks
	}
	if r.IsError {
		ev, _ := o.Get("error")
		eo, _ := ev.(*dsl.Object)
		msg, _ := eo.Get("message")
		s, isStr := msg.(string)
		if eo == nil || !isStr {
			return nil, fmt.Errorf("tools/execute wrapper returned a failure without error.message")
		}
		r.Error = &engine.Failure{Message: s}
		if iv, ok := eo.Get("info"); ok {
			info, err := errorInfo(iv)
			if err != nil {
				return nil, err
			}
			r.Error.Info = info
		}
	} else {
		r.Value, _ = o.Get("value")
	}
	if m, ok := o.Get("meta"); ok {
		r.Meta, r.HasMeta = m, true
	}
	ctxs, err := contextsOf(o)
	if err != nil {
		return nil, err
	}
	r.AdditionalContexts = ctxs
	return r, nil
}

// errDecision reports a malformed decision: the listener then fails closed.
func errDecision(event, why string) error {
	return errors.New(event + " listener returned an invalid decision: " + why)
}
