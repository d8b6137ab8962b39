package engine

import "context"

// ToolFilter reports whether a call may reach the tool named name.
type ToolFilter func(name string) bool

type toolFilterKey struct{}

// WithToolFilter returns a context whose calls reach only the tools keep
// admits: any other is an unknown tool (UNKNOWN_TOOL), for the call
// itself and for every call nested under it, run_code sub-calls
// included. A server that limits what a caller may use (dsh serve's
// OAuth tool scopes) sets it beside [WithCaller]. Filters stack: a
// context keeps a tool only when every filter on it admits the tool. A
// nil keep leaves ctx as it is.
func WithToolFilter(ctx context.Context, keep ToolFilter) context.Context {
	if keep == nil {
		return ctx
	}
	if outer := toolFilterFrom(ctx); outer != nil {
		inner := keep
		keep = func(name string) bool { return outer(name) && inner(name) }
	}
	return context.WithValue(ctx, toolFilterKey{}, keep)
}

// Admits reports whether ctx's tool filter (see [WithToolFilter]) lets a
// call reach name; without a filter every tool is admitted.
func Admits(ctx context.Context, name string) bool {
	keep := toolFilterFrom(ctx)
	return keep == nil || keep(name)
}

func toolFilterFrom(ctx context.Context) ToolFilter {
	keep, _ := ctx.Value(toolFilterKey{}).(ToolFilter)
	return keep
}
