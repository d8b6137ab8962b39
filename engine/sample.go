package engine

import (
	"context"
	"encoding/json"
	"errors"
)

// SampleFunc asks the model behind a call's caller for a message: req is
// the request's parameters and the result the model's answer, both as
// JSON (the shapes of MCP's sampling/createMessage, which the engine does
// not read).
type SampleFunc func(ctx context.Context, req json.RawMessage) (json.RawMessage, error)

// ErrNoSampling is [Sample]'s error when no model can be asked: the
// caller set no [SampleFunc], or its client does not take sampling
// requests.
var ErrNoSampling = errors.New("no model can be asked: the caller does not take sampling requests")

type sampleKey struct{}

// WithSample returns a context whose calls put their sampling requests to
// fn: a caller with a model to ask (an MCP client that declared sampling)
// sets it on the context it executes a batch with, as it sets
// [WithElicit]. A nil fn removes it.
func WithSample(ctx context.Context, fn SampleFunc) context.Context {
	return context.WithValue(ctx, sampleKey{}, fn)
}

// Sample puts req to the model through the function ctx carries (see
// [WithSample]) and returns its answer; without one it returns
// [ErrNoSampling]. The function bounds its own wait.
func Sample(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	fn, _ := ctx.Value(sampleKey{}).(SampleFunc)
	if fn == nil {
		return nil, ErrNoSampling
	}
	return fn(ctx, req)
}
