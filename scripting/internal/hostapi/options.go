package hostapi

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/dsh-go/dsh/internal/textcap"
)

// Defaults of a host's deadlines.
const (
	DefaultListenerTimeout = 5 * time.Second
	DefaultGrace           = 100 * time.Millisecond
)

// MaxInstances bounds a plugin's instances.
const MaxInstances = 64

// Logger returns l, or a logger that discards when l is nil.
func Logger(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.New(slog.DiscardHandler)
}

// ListenerTimeout returns d, or [DefaultListenerTimeout] when d is not
// positive.
func ListenerTimeout(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultListenerTimeout
}

// Grace returns d, or [DefaultGrace] when d is not positive.
func Grace(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultGrace
}

// InstanceCount reads the instance count a top level asked for: f, when
// ok (the script gave a number), is an integer from 1 to [MaxInstances].
func InstanceCount(f float64, ok bool) (int, error) {
	if !ok || f != math.Trunc(f) || f < 1 || f > MaxInstances {
		return 0, fmt.Errorf("instances must be an integer from 1 to %d", MaxInstances)
	}
	return int(f), nil
}

// Log logs a script's line msg at level (dsh.log's "debug", "warn" or
// "error"; any other is info) with its fields, under ctx: the ctx of the
// call the script runs for, so that the logger's handler sees its values,
// or context.Background() outside any call.
//
// A message longer than [MaxLogMessage] is cut, marked.
func Log(ctx context.Context, l *slog.Logger, level, msg string, fields []any) {
	msg = textcap.String(msg, MaxLogMessage)
	lv := slog.LevelInfo
	switch level {
	case "debug":
		lv = slog.LevelDebug
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	}
	l.Log(ctx, lv, msg, fields...)
}
