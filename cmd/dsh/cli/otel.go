package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// telemetryShutdown bounds the flush of the spans and metrics still
// buffered when dsh exits.
const telemetryShutdown = 5 * time.Second

// telemetry is the OpenTelemetry SDK that dsh builds from the standard
// OTEL_* environment variables: a TracerProvider when OTEL_TRACES_EXPORTER
// names an exporter, a MeterProvider when OTEL_METRICS_EXPORTER does. Both
// are nil when unset, "none" or OTEL_SDK_DISABLED=true: no SDK is built and
// the engine traces nothing.
type telemetry struct {
	tracer *sdktrace.TracerProvider
	meter  *sdkmetric.MeterProvider
	// capture is OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true:
	// the execute_tool spans record the arguments and the redacted result
	// (engine.WithContentCapture).
	capture bool
}

// newTelemetry builds the SDK of the OTEL_* variables getenv reads; the
// console exporters write to stderr, so that a command's own output on
// stdout stays what it is. Its errors are bad variable values.
//
// What the SDK and the OTLP exporters read themselves is left to them:
// OTEL_EXPORTER_OTLP_ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION,
// _CERTIFICATE (and their _TRACES_ and _METRICS_ forms),
// OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE, OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG, OTEL_BSP_*, OTEL_METRIC_EXPORT_INTERVAL and
// _TIMEOUT, OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
func newTelemetry(ctx context.Context, getenv func(string) string, stderr io.Writer) (*telemetry, error) {
	t := &telemetry{}
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return t, nil
	}
	traces, err := exporterNames(getenv, "OTEL_TRACES_EXPORTER")
	if err != nil {
		return nil, err
	}
	metrics, err := exporterNames(getenv, "OTEL_METRICS_EXPORTER")
	if err != nil {
		return nil, err
	}
	if len(traces) == 0 && len(metrics) == 0 {
		return t, nil
	}
	res, err := resource.Merge(
		resource.NewSchemaless(attribute.String("service.name", "dsh"), attribute.String("service.version", mainVersion())),
		resource.Environment(), // OTEL_RESOURCE_ATTRIBUTES, then OTEL_SERVICE_NAME, win
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %v", err)
	}
	if len(traces) > 0 {
		opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
		for _, name := range traces {
			switch name {
			case "otlp":
				exp, err := otlpTraceExporter(ctx, getenv)
				if err != nil {
					return nil, err
				}
				opts = append(opts, sdktrace.WithBatcher(exp))
			case "console":
				exp, err := stdouttrace.New(stdouttrace.WithWriter(stderr))
				if err != nil {
					return nil, err
				}
				// Synchronous: each span's line is written as it ends, in
				// order with dsh's own lines on stderr.
				opts = append(opts, sdktrace.WithSyncer(exp))
			}
		}
		t.tracer = sdktrace.NewTracerProvider(opts...) // OTEL_TRACES_SAMPLER is read here
		t.capture = strings.EqualFold(strings.TrimSpace(getenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")), "true")
	}
	if len(metrics) > 0 {
		opts := []sdkmetric.Option{sdkmetric.WithResource(res)}
		for _, name := range metrics {
			switch name {
			case "otlp":
				exp, err := otlpMetricExporter(ctx, getenv)
				if err != nil {
					_ = t.shutdown(ctx)
					return nil, err
				}
				// OTEL_METRIC_EXPORT_INTERVAL and _TIMEOUT are read here.
				opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
			case "console":
				opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(&consoleMetrics{w: stderr})))
			}
		}
		t.meter = sdkmetric.NewMeterProvider(opts...)
	}
	return t, nil
}

// exporterNames returns the exporters the comma-separated list in the
// variable key names: otlp and console; none (or nothing) is none.
func exporterNames(getenv func(string) string, key string) ([]string, error) {
	var names []string
	for _, name := range strings.Split(getenv(key), ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		switch name {
		case "", "none":
		case "otlp", "console":
			names = append(names, name)
		default:
			return nil, fmt.Errorf("%s: unknown exporter %q (otlp, console or none)", key, name)
		}
	}
	return names, nil
}

// otlpTraceExporter is the OTLP span exporter of the protocol that
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// names: http/protobuf (the default) or grpc.
func otlpTraceExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	key, protocol := otlpProtocol(getenv, "TRACES")
	switch protocol {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, unsupportedProtocol(key, protocol)
	}
}

// tracerProvider is the TracerProvider to hand the engine and the MCP
// server and client: nil when traces are off.
func (t *telemetry) tracerProvider() trace.TracerProvider {
	if t == nil || t.tracer == nil {
		return nil
	}
	return t.tracer
}

// meterProvider is the MeterProvider to hand the engine: nil when metrics
// are off.
func (t *telemetry) meterProvider() metric.MeterProvider {
	if t == nil || t.meter == nil {
		return nil
	}
	return t.meter
}

// shutdown flushes what is buffered and stops the providers, within
// ctx (bounded by the caller, see telemetryShutdown).
func (t *telemetry) shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	var errs []error
	if t.tracer != nil {
		errs = append(errs, t.tracer.Shutdown(ctx))
	}
	if t.meter != nil {
		errs = append(errs, t.meter.Shutdown(ctx))
	}
	return errors.Join(errs...)
}

// consoleMetrics is OTEL_METRICS_EXPORTER=console: each collection as one
// line of JSON (the SDK's metricdata, as the stdout exporters write it) on
// stderr. The SDK's own stdoutmetric module is not among dsh's
// dependencies; this is its few lines.
type consoleMetrics struct {
	mu sync.Mutex
	w  io.Writer
}

// Temporality is the SDK's default, cumulative.
func (c *consoleMetrics) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

// Aggregation is the SDK's default for each kind.
func (c *consoleMetrics) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

// Export writes rm as one line of JSON.
func (c *consoleMetrics) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	line, err := json.Marshal(rm)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(append(line, '\n'))
	return err
}

// ForceFlush has nothing buffered to flush.
func (c *consoleMetrics) ForceFlush(context.Context) error { return nil }

// Shutdown has nothing to release.
func (c *consoleMetrics) Shutdown(context.Context) error { return nil }
