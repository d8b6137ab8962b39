// Package tracelog correlates log records with traces: [Handler] wraps a
// [slog.Handler] so that a record logged with a context that carries a
// span (a tool call's execute_tool span, a run_code run) also carries the
// span's trace_id and span_id, as the OpenTelemetry log data model names
// them. It adds two attributes per record and keeps nothing.
package tracelog

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// The attributes a record gains.
const (
	TraceIDKey = "trace_id"
	SpanIDKey  = "span_id"
)

// Handler returns h with the trace and span ids of each record's context
// added to the record (nothing when the context has no valid span).
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String(TraceIDKey, sc.TraceID().String()), slog.String(SpanIDKey, sc.SpanID().String()))
	}
	return h.next.Handle(ctx, r)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.next.WithAttrs(attrs)}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.next.WithGroup(name)}
}
