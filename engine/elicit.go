package engine

import (
	"context"
	"errors"

	"github.com/dsh-go/dsh/internal/textcap"
)

// Elicitation is a question a running call puts to the user behind its
// caller: a Message, and the form of the answer, Schema (a JSON Schema of
// an object whose properties are primitives, as MCP's elicitation takes;
// a *dsl.Object, or nil for a bare confirmation).
//
// With URL set it asks the user to open URL instead and do what it says
// out of band (MCP's URL-mode elicitation; ID is its elicitationId): it
// has no Schema, and the answer no content.
type Elicitation struct {
	Message string
	Schema  any
	URL, ID string
}

// ElicitResult is the user's answer: Action is "accept" (Content holds
// the form's values, a *dsl.Object or nil), "decline" or "cancel".
type ElicitResult struct {
	Action  string
	Content any
}

// ElicitFunc puts a question to the user and waits for the answer.
type ElicitFunc func(ctx context.Context, e Elicitation) (ElicitResult, error)

// ErrNoElicitation is [Elicit]'s error when nobody can be asked: the
// caller set no [ElicitFunc], or its client cannot answer questions.
var ErrNoElicitation = errors.New("no user can be asked: the caller does not take questions (elicitation)")

type elicitKey struct{}

// WithElicit returns a context whose calls put their questions to fn: a
// caller with a user to ask (an MCP client that declared elicitation)
// sets it on the context it executes a batch with, and tool bodies ask
// with [Elicit] on the context they were given. A nil fn removes it.
func WithElicit(ctx context.Context, fn ElicitFunc) context.Context {
	return context.WithValue(ctx, elicitKey{}, fn)
}

// Elicit puts e to the user through the function ctx carries (see
// [WithElicit]) and returns the answer; without one it returns
// [ErrNoElicitation]. A Message longer than [MaxProgressMessage] is cut,
// marked.
func Elicit(ctx context.Context, e Elicitation) (ElicitResult, error) {
	fn, _ := ctx.Value(elicitKey{}).(ElicitFunc)
	if fn == nil {
		return ElicitResult{}, ErrNoElicitation
	}
	e.Message = textcap.String(e.Message, MaxProgressMessage)
	sp, start := elicitSpan(ctx, e)
	res, err := fn(ctx, e)
	endElicit(sp, start, res, err)
	return res, err
}
