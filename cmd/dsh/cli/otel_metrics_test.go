package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// otlpCollector is a real OTLP receiver: it decodes what the exporters
// send, over HTTP (POST /v1/traces and /v1/metrics, protobuf) or gRPC (the
// metrics service), and keeps it.
type otlpCollector struct {
	collectormetrics.UnimplementedMetricsServiceServer

	mu      sync.Mutex
	metrics []*metricspb.ResourceMetrics
	spans   []*tracepb.ResourceSpans
	bad     []string // requests it could not take
}

// ServeHTTP takes an OTLP/HTTP export request and answers it as the
// protocol says: 200 with the (empty) protobuf response.
func (c *otlpCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		c.bad = append(c.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/metrics":
		var req collectormetrics.ExportMetricsServiceRequest
		err = proto.Unmarshal(body, &req)
		c.metrics = append(c.metrics, req.GetResourceMetrics()...)
		resp = &collectormetrics.ExportMetricsServiceResponse{}
	case "/v1/traces":
		var req collectortrace.ExportTraceServiceRequest
		err = proto.Unmarshal(body, &req)
		c.spans = append(c.spans, req.GetResourceSpans()...)
		resp = &collectortrace.ExportTraceServiceResponse{}
	default:
		c.bad = append(c.bad, "POST "+r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if err != nil {
		c.bad = append(c.bad, r.URL.Path+": "+err.Error())
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Export is the gRPC metrics service.
func (c *otlpCollector) Export(_ context.Context, req *collectormetrics.ExportMetricsServiceRequest) (*collectormetrics.ExportMetricsServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.metrics = append(c.metrics, req.GetResourceMetrics()...)
	return &collectormetrics.ExportMetricsServiceResponse{}, nil
}

// histogram returns the data points of the histogram name among what was
// received, and the resources that sent them.
func (c *otlpCollector) histogram(name string) (points []*metricspb.HistogramDataPoint, unit string, resources []map[string]string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rm := range c.metrics {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() != name || m.GetHistogram() == nil {
					continue
				}
				points = append(points, m.GetHistogram().GetDataPoints()...)
				unit = m.GetUnit()
				resources = append(resources, attrs(rm.GetResource().GetAttributes()))
			}
		}
	}
	return points, unit, resources
}

// attrs flattens OTLP attributes to their string form.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	return m
}

// oneCallBatch writes the batch file of one word_count call.
func oneCallBatch(t *testing.T) string {
	t.Helper()
	calls := filepath.Join(t.TempDir(), "calls.json")
	err := os.WriteFile(calls, []byte(`[{"id": "c1", "name": "word_count", "arguments": {"text": "a b c"}}]`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return calls
}

// setOTEL sets every OTEL_* variable these tests read to env's value,
// empty when env has none, so that the machine's own settings play no part.
func setOTEL(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range []string{
		"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SERVICE_NAME",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_METRIC_EXPORT_INTERVAL", "OTEL_TRACES_SAMPLER",
	} {
		t.Setenv(k, env[k])
	}
}

// checkDuration asserts that c received one gen_ai.execute_tool.duration
// point: one successful word_count call, in seconds, from the service dsh.
func checkDuration(t *testing.T, c *otlpCollector) {
	t.Helper()
	points, unit, resources := c.histogram("gen_ai.execute_tool.duration")
	if len(points) != 1 {
		t.Fatalf("%d gen_ai.execute_tool.duration points, want 1 (bad requests %q)", len(points), c.bad)
	}
	p := points[0]
	if p.GetCount() != 1 || p.GetSum() <= 0 {
		t.Errorf("count %d sum %v, want one call that took some time", p.GetCount(), p.GetSum())
	}
	got := attrs(p.GetAttributes())
	if got["gen_ai.tool.name"] != "word_count" || got["gen_ai.operation.name"] != "execute_tool" || got["error.type"] != "" {
		t.Errorf("point attributes %v", got)
	}
	if unit != "s" {
		t.Errorf("unit %q, want s", unit)
	}
	if resources[0]["service.name"] != "dsh" {
		t.Errorf("resource %v", resources[0])
	}
}

func TestOTLPMetricsReachARealReceiver(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string // the endpoint is added
	}{
		{"http/protobuf is the default protocol", map[string]string{}},
		{"OTEL_EXPORTER_OTLP_PROTOCOL names http/protobuf", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}},
		{"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL wins over OTEL_EXPORTER_OTLP_PROTOCOL",
			map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &otlpCollector{}
			srv := httptest.NewServer(c)
			defer srv.Close()
			env := map[string]string{
				"OTEL_METRICS_EXPORTER":       "otlp",
				"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
				// Far beyond the run: what arrives is the flush at exit.
				"OTEL_METRIC_EXPORT_INTERVAL": "600000",
			}
			for k, v := range tt.env {
				env[k] = v
			}
			setOTEL(t, env)
			code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "--json", "run", oneCallBatch(t))
			if code != exitOK || stderr != "" {
				t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			checkDuration(t, c)
		})
	}
}

func TestOTLPMetricsOverGRPCReachARealReceiver(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &otlpCollector{}
	srv := grpc.NewServer()
	collectormetrics.RegisterMetricsServiceServer(srv, c)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	setOTEL(t, map[string]string{
		"OTEL_METRICS_EXPORTER":               "otlp",
		"OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://" + lis.Addr().String(), // http: plain text
	})
	code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "run", oneCallBatch(t))
	if code != exitOK || stderr != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	checkDuration(t, c)
}

func TestOTLPTracesAndMetricsOverHTTPDecode(t *testing.T) {
	c := &otlpCollector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	setOTEL(t, map[string]string{
		"OTEL_TRACES_EXPORTER":        "otlp",
		"OTEL_METRICS_EXPORTER":       "otlp",
		"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
	})
	code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "--json", "run", oneCallBatch(t))
	if code != exitOK || stderr != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Run("the metrics have the call's duration", func(t *testing.T) {
		checkDuration(t, c)
	})
	t.Run("the traces have the call's execute_tool span and its policy stages as children", func(t *testing.T) {
		c.mu.Lock()
		defer c.mu.Unlock()
		var call *tracepb.Span
		var all []*tracepb.Span
		for _, rs := range c.spans {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					all = append(all, s)
					if s.GetName() == "execute_tool word_count" {
						call = s
					}
				}
			}
		}
		if call == nil {
			t.Fatalf("no execute_tool word_count span among %d (bad requests %q)", len(all), c.bad)
		}
		a := attrs(call.GetAttributes())
		if a["gen_ai.tool.name"] != "word_count" || a["gen_ai.tool.call.id"] != "c1" {
			t.Errorf("span attributes %v", a)
		}
		children := 0
		for _, s := range all {
			if string(s.GetParentSpanId()) == string(call.GetSpanId()) && string(s.GetTraceId()) == string(call.GetTraceId()) {
				children++
			}
		}
		if children == 0 {
			t.Errorf("no span is the child of the call's span")
		}
	})
}

func TestAnUnknownOTLPMetricsProtocolIsRefused(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantStderr string
	}{
		{"the metrics variable is named when it is the one set",
			map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"},
			"dsh: OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: unsupported protocol \"http/json\" (http/protobuf or grpc)\n"},
		{"the general variable is named when it is the one set",
			map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc/json"},
			"dsh: OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol \"grpc/json\" (http/protobuf or grpc)\n"},
		{"a good traces protocol does not cover a bad metrics one",
			map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "thrift"},
			"dsh: OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: unsupported protocol \"thrift\" (http/protobuf or grpc)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setOTEL(t, tt.env)
			code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "run", oneCallBatch(t))
			if code != exitViolations || stdout != "" || stderr != tt.wantStderr {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, \"\", %q", code, stdout, stderr, exitViolations, tt.wantStderr)
			}
		})
	}
}
