package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// examplePlugins is the directory of the example plugins.
var examplePlugins = filepath.Join("..", "..", "..", "scripts", "examples", "plugins")

// consoleSpan is the part of a stdout exporter line the tests read.
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct{ Value any }
	}
	Resource []struct {
		Key   string
		Value struct{ Value any }
	}
}

// spanLines parses the JSON lines of stderr as spans; other lines are
// left out.
func spanLines(t *testing.T, stderr string) []consoleSpan {
	t.Helper()
	var spans []consoleSpan
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var s consoleSpan
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("a JSON line of stderr is not a span: %v\n%s", err, line)
		}
		spans = append(spans, s)
	}
	return spans
}

func TestConsoleTracesGoToStderrAndStdoutStaysTheOutput(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_SERVICE_NAME", "")
	code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "--json", "call", "word_count", `{"text":"a b c"}`)
	if code != exitOK {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	t.Run("stdout is the command's JSON alone", func(t *testing.T) {
		var out struct {
			Results []struct {
				Result struct{ Value struct{ Words int } }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
		}
		if len(out.Results) != 1 || out.Results[0].Result.Value.Words != 3 {
			t.Errorf("stdout %s", stdout)
		}
	})
	spans := spanLines(t, stderr)
	var call *consoleSpan
	for i := range spans {
		if spans[i].Name == "execute_tool word_count" {
			call = &spans[i]
		}
	}
	t.Run("stderr has the call's execute_tool span as the SDK's JSON", func(t *testing.T) {
		if call == nil {
			t.Fatalf("no execute_tool word_count span in stderr:\n%s", stderr)
		}
		var tool any
		for _, a := range call.Attributes {
			if a.Key == "gen_ai.tool.name" {
				tool = a.Value.Value
			}
		}
		if tool != "word_count" {
			t.Errorf("gen_ai.tool.name %v", tool)
		}
	})
	t.Run("the resource names the service dsh by default", func(t *testing.T) {
		if call == nil {
			t.Skip("no span")
		}
		var name any
		for _, a := range call.Resource {
			if a.Key == "service.name" {
				name = a.Value.Value
			}
		}
		if name != "dsh" {
			t.Errorf("service.name %v", name)
		}
	})
	t.Run("the policy stages' spans are the call's children", func(t *testing.T) {
		if call == nil {
			t.Skip("no span")
		}
		children := 0
		for _, s := range spans {
			if s.Parent.SpanID == call.SpanContext.SpanID {
				children++
			}
		}
		if children == 0 {
			t.Errorf("no span is the child of the call's span %s", call.SpanContext.SpanID)
		}
	})
}

func TestTheOTELVariables(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		wantCode   int
		wantStderr string // exact, when spans is false
		spans      bool
	}{
		{"unset, nothing is traced", map[string]string{}, exitOK, "", false},
		{"none traces nothing", map[string]string{"OTEL_TRACES_EXPORTER": "none"}, exitOK, "", false},
		{"OTEL_SDK_DISABLED turns the console exporter off", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"}, exitOK, "", false},
		{"the sampler always_off leaves stderr empty", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_TRACES_SAMPLER": "always_off"}, exitOK, "", false},
		{"the service name comes from OTEL_SERVICE_NAME", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_SERVICE_NAME": "gateway"}, exitOK, "", true},
		{"content capture records the arguments", map[string]string{"OTEL_TRACES_EXPORTER": "console", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}, exitOK, "", true},
		{"an unknown exporter is refused", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, exitViolations,
			"dsh: OTEL_TRACES_EXPORTER: unknown exporter \"zipkin\" (otlp, console or none)\n", false},
		{"an unknown OTLP protocol is refused", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, exitViolations,
			"dsh: OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol \"http/json\" (http/protobuf or grpc)\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED", "OTEL_TRACES_SAMPLER", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"} {
				t.Setenv(k, tt.env[k])
			}
			code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "call", "word_count", `{"text":"a b"}`)
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d; stderr %q", code, tt.wantCode, stderr)
			}
			if code == exitOK && !strings.Contains(stdout, "2 words") {
				t.Errorf("stdout %q", stdout)
			}
			if !tt.spans {
				if stderr != tt.wantStderr {
					t.Errorf("stderr %q, want %q", stderr, tt.wantStderr)
				}
				return
			}
			spans := spanLines(t, stderr)
			if len(spans) == 0 {
				t.Fatalf("no spans in stderr %q", stderr)
			}
			if name := tt.env["OTEL_SERVICE_NAME"]; name != "" {
				for _, a := range spans[0].Resource {
					if a.Key == "service.name" && a.Value.Value != name {
						t.Errorf("service.name %v, want %s", a.Value.Value, name)
					}
				}
			}
			var args any
			for _, s := range spans {
				for _, a := range s.Attributes {
					if s.Name == "execute_tool word_count" && a.Key == "gen_ai.tool.call.arguments" {
						args = a.Value.Value
					}
				}
			}
			capture := tt.env["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] == "true"
			if want := `{"text":"a b"}`; capture && args != want {
				t.Errorf("gen_ai.tool.call.arguments %v, want %s", args, want)
			}
			if !capture && args != nil {
				t.Errorf("gen_ai.tool.call.arguments %v recorded without capture", args)
			}
		})
	}
}

func TestOTLPOverHTTPIsSentBeforeDshExits(t *testing.T) {
	var mu sync.Mutex
	var bodies [][]byte
	var types []string
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, body)
		types = append(types, r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	code, stdout, stderr := run(t, "", "--scripts", examplePlugins, "call", "word_count", `{"text":"a b"}`)
	if code != exitOK || stderr != "" || !strings.Contains(stdout, "2 words") {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bodies) == 0 {
		t.Fatal("the collector received nothing")
	}
	if types[0] != "/v1/traces application/x-protobuf" {
		t.Errorf("request %q", types[0])
	}
	// Protobuf keeps strings as they are: the span's name is in the body.
	if !bytes.Contains(bytes.Join(bodies, nil), []byte("execute_tool word_count")) {
		t.Errorf("no execute_tool word_count span was sent")
	}
}

func TestScriptLogLinesCarryTheirCallsTraceIDs(t *testing.T) {
	plugins := map[string]struct{ file, source string }{
		"JavaScript": {"hi.js", `const { defineTool, tools, log } = require("dsh");
tools.register(defineTool({
  name: "hi", description: "Say hi.", parameters: {},
  output: { schema: { type: "string" }, render: (args, value) => [{ type: "text", text: value }] },
  async execute() { log.warn("in body"); return "hi"; },
}));
`},
		"Lua": {"hi.lua", `local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "hi", description = "Say hi.", parameters = {},
  output = { schema = { type = "string" }, render = function(args, value) return { { type = "text", text = value } } end },
  execute = function(args, exec) dsh.log.warn("in body"); return "hi" end,
})
`},
	}
	for lang, p := range plugins {
		t.Run("a "+lang+" tool's log line names the trace and a span of its call", func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, p.file), []byte(p.source), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("OTEL_TRACES_EXPORTER", "console")
			code, _, stderr := run(t, "", "--scripts", dir, "call", "hi")
			if code != exitOK {
				t.Fatalf("status %d, stderr %q", code, stderr)
			}
			ids := map[string]string{} // span id → trace id
			var call *consoleSpan
			spans := spanLines(t, stderr)
			for i, s := range spans {
				ids[s.SpanContext.SpanID] = s.SpanContext.TraceID
				if s.Name == "execute_tool hi" {
					call = &spans[i]
				}
			}
			if call == nil {
				t.Fatalf("no execute_tool hi span in %q", stderr)
			}
			var line string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.Contains(l, `msg="in body"`) {
					line = l
				}
			}
			traceID := fieldOf(line, "trace_id")
			spanID := fieldOf(line, "span_id")
			if traceID != call.SpanContext.TraceID || ids[spanID] != traceID {
				t.Errorf("log line %q: trace_id %q span_id %q, want the trace %s and one of its spans", line, traceID, spanID, call.SpanContext.TraceID)
			}
		})
	}
}

// fieldOf returns the value of key=value in a slog text line.
func fieldOf(line, key string) string {
	for _, f := range strings.Fields(line) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			return v
		}
	}
	return ""
}
