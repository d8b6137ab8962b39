package engine

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// TracerProvider returns the provider the Service traces through
// ([WithTracerProvider]), nil when it traces nothing. Packages that run
// work on the Service's behalf (run_code, hot reload) trace through it too,
// so that an embedder passes its providers once.
func (s *Service) TracerProvider() trace.TracerProvider { return s.tracerProvider }

// MeterProvider returns the provider the Service records its metrics
// through ([WithMeterProvider]), nil when it records none.
func (s *Service) MeterProvider() metric.MeterProvider { return s.meterProvider }

// ContentCapture reports whether spans record arguments and results
// ([WithContentCapture]).
func (s *Service) ContentCapture() bool { return s.captureContent }
