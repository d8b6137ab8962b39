package tracelog_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/dsh-go/dsh/internal/tracelog"
)

func TestRecordsCarryTheSpanOfTheirContext(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")
	defer span.End()
	sc := span.SpanContext()

	tests := []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"a record logged in a span carries its trace and span ids", ctx,
			"level=INFO msg=hello tool=x trace_id=" + sc.TraceID().String() + " span_id=" + sc.SpanID().String() + "\n"},
		{"a record logged outside any span is unchanged", context.Background(), "level=INFO msg=hello tool=x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			text := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}})
			logger := slog.New(tracelog.Handler(text)).With("tool", "x")
			logger.InfoContext(tt.ctx, "hello")
			if got := buf.String(); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("the level check is the wrapped handler's", func(t *testing.T) {
		h := tracelog.Handler(slog.NewTextHandler(&strings.Builder{}, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if h.Enabled(ctx, slog.LevelInfo) || !h.Enabled(ctx, slog.LevelWarn) {
			t.Error("Enabled differs from the wrapped handler's")
		}
	})
}
