package cli

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// otlpMetricExporter is the OTLP metric exporter of the protocol that
// OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
// names: http/protobuf (the default) or grpc. The exporters read their
// endpoint, headers, timeout, compression and certificates themselves
// (OTEL_EXPORTER_OTLP_* and the _METRICS_ forms).
func otlpMetricExporter(ctx context.Context, getenv func(string) string) (sdkmetric.Exporter, error) {
	key, protocol := otlpProtocol(getenv, "METRICS")
	switch protocol {
	case "", "http/protobuf":
		return otlpmetrichttp.New(ctx)
	case "grpc":
		return otlpmetricgrpc.New(ctx)
	default:
		return nil, unsupportedProtocol(key, protocol)
	}
}

// otlpProtocol returns the variable that names the OTLP protocol of the
// signal (TRACES or METRICS) and its value: OTEL_EXPORTER_OTLP_<signal>_PROTOCOL
// when set, else OTEL_EXPORTER_OTLP_PROTOCOL. An empty value is the default.
func otlpProtocol(getenv func(string) string, signal string) (key, protocol string) {
	key = "OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL"
	if protocol = strings.TrimSpace(getenv(key)); protocol != "" {
		return key, protocol
	}
	key = "OTEL_EXPORTER_OTLP_PROTOCOL"
	return key, strings.TrimSpace(getenv(key))
}

// unsupportedProtocol is the error of an OTLP protocol dsh does not
// export with, naming the variable that set it.
func unsupportedProtocol(key, protocol string) error {
	return fmt.Errorf("%s: unsupported protocol %q (http/protobuf or grpc)", key, protocol)
}
