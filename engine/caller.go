package engine

import (
	"context"
	"slices"
)

// Caller is the authenticated identity a call runs for: who holds the
// access token a served request carried (dsh serve as an OAuth resource
// server). It never holds the token itself.
type Caller struct {
	Subject  string   // the token's subject ("sub")
	ClientID string   // the OAuth client the token was issued to
	Scopes   []string // the token's scopes
}

// HasScope reports whether the caller's token carries scope.
func (c *Caller) HasScope(scope string) bool {
	return c != nil && slices.Contains(c.Scopes, scope)
}

type callerKey struct{}

// WithCaller returns a context whose calls run for c: the server that
// verified a request's token sets it on the context it executes the
// request's batch with. Nested calls and run_code sub-calls inherit it. A
// nil c removes it.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller ctx carries (see [WithCaller]), or nil for
// a call that no verified token started (the CLI, stdio, a server without
// authorization).
func CallerFrom(ctx context.Context) *Caller {
	c, _ := ctx.Value(callerKey{}).(*Caller)
	return c
}
