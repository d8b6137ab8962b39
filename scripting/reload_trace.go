package scripting

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/internal/textcap"
)

// InstrumentationName is the OpenTelemetry instrumentation scope of the
// hot reload spans and metrics (see [Reloader]).
const InstrumentationName = "github.com/dsh-go/dsh/scripting"

// maxReloadAttr bounds, in bytes, the plugin name and the error message a
// reload span records: a longer one is cut and marked with "…", the mark
// included in the bound.
const maxReloadAttr = 256

// The attribute keys of the reload spans and metric; docs/tracing.md
// describes each. error.type is the OpenTelemetry semantic conventions';
// the dsh.* keys are dsh's own (dsh.plugin as the engine's policy spans
// name a plugin).
const (
	attrPlugin          = attribute.Key("dsh.plugin")
	attrRevision        = attribute.Key("dsh.plugin.revision")
	attrPrevRevision    = attribute.Key("dsh.plugin.previous_revision")
	attrReloadOutcome   = attribute.Key("dsh.reload.outcome")
	attrFailedRevision  = attribute.Key("dsh.reload.failed_revision")
	attrReloadError     = attribute.Key("dsh.reload.error")
	attrReloadErrorType = attribute.Key("error.type")
)

// The error.type of a failed reload.
const (
	// reloadErrLoad: the version did not load (a syntax error, a top level
	// that threw or ran past the load deadline, a bad definition, a file
	// over the size limit).
	reloadErrLoad = "load"
	// reloadErrConflict: it loaded, but its commit was refused (a tool name
	// another plugin registered).
	reloadErrConflict = "conflict"
)

// reloadTelemetry records each [ReloadEvent] as a dsh.reload span and a
// dsh.reload.count increment, through the Service's providers. A nil
// *reloadTelemetry records nothing.
type reloadTelemetry struct {
	tracer trace.Tracer        // nil: no spans
	count  metric.Int64Counter // nil: no metric
}

// newReloadTelemetry returns the telemetry of the reloads of svc's plugins,
// nil when svc has neither provider.
func newReloadTelemetry(svc *engine.Service) *reloadTelemetry {
	tp, mp := svc.TracerProvider(), svc.MeterProvider()
	if tp == nil && mp == nil {
		return nil
	}
	t := &reloadTelemetry{}
	if tp != nil {
		t.tracer = tp.Tracer(InstrumentationName)
	}
	if mp != nil {
		// The error only reports a malformed name or unit, which these
		// constants are not; a nil counter records nothing.
		t.count, _ = mp.Meter(InstrumentationName).Int64Counter("dsh.reload.count",
			metric.WithUnit("{reload}"),
			metric.WithDescription("Plugin loads, reloads, unloads and failed reloads, by plugin and outcome."))
	}
	return t
}

// record records ev, whose reconciliation began at start. conflict says
// that a failure came from the commit.
func (t *reloadTelemetry) record(ev ReloadEvent, start time.Time, conflict bool) {
	if t == nil {
		return
	}
	plugin := boundAttr(ev.File)
	outcome := string(ev.Kind)
	if t.count != nil {
		t.count.Add(context.Background(), 1, metric.WithAttributes(attrPlugin.String(plugin), attrReloadOutcome.String(outcome)))
	}
	if t.tracer == nil {
		return
	}
	if start.IsZero() || start.After(ev.At) {
		start = ev.At
	}
	spanAttrs := []attribute.KeyValue{attrPlugin.String(plugin), attrReloadOutcome.String(outcome)}
	attrs := append([]attribute.KeyValue(nil), spanAttrs...)
	var serving, previous, failed string
	switch ev.Kind {
	case PluginLoaded, PluginRestored:
		serving = ev.Revision
	case PluginReloaded:
		serving, previous = ev.Revision, ev.Previous
	case PluginUnloaded:
		previous = ev.Revision
	case PluginFailed:
		serving, failed = ev.Previous, ev.Revision
	}
	if serving != "" {
		attrs = append(attrs, attrRevision.String(serving))
	}
	if previous != "" {
		attrs = append(attrs, attrPrevRevision.String(previous))
	}
	var errType string
	if ev.Kind == PluginFailed {
		errType = reloadErrLoad
		if conflict {
			errType = reloadErrConflict
		}
		spanAttrs = append(spanAttrs, attrReloadErrorType.String(errType))
		attrs = append(attrs, attrFailedRevision.String(failed), attrReloadErrorType.String(errType))
		if ev.Err != nil {
			attrs = append(attrs, attrReloadError.String(reloadMessage(ev.Err)))
		}
	}
	_, sp := t.tracer.Start(context.Background(), "dsh.reload",
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(spanAttrs...))
	sp.AddEvent("dsh.plugin.reload", trace.WithTimestamp(ev.At), trace.WithAttributes(attrs...))
	if errType != "" {
		// The description is the type, never the message: the span's
		// status is seen where its events may not be.
		sp.SetStatus(codes.Error, errType)
	}
	sp.End(trace.WithTimestamp(ev.At))
}

// reloadMessage is a failure's diagnostic as a span records it: its first
// line ("file:line:col: message", the message up to its first line break),
// escaped as a Diagnostic renders, at most maxReloadAttr bytes.
func reloadMessage(d *Diagnostic) string {
	first := *d
	if i := strings.IndexAny(first.Message, "\r\n"); i >= 0 {
		first.Message = first.Message[:i]
	}
	return boundAttr(first.Error())
}

// boundAttr cuts s to at most maxReloadAttr bytes, the "…" marking a cut
// included, between UTF-8 characters.
func boundAttr(s string) string {
	if len(s) <= maxReloadAttr {
		return s
	}
	return textcap.Prefix(s, maxReloadAttr-len(display.Ellipsis)) + display.Ellipsis
}
