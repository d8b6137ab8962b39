package tests

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/internal/testtime"
)

// The end-to-end test of docs/tracing.md against a real trace backend:
// Jaeger's all-in-one (v2, an OpenTelemetry collector with an in-memory
// store), built from the module proxy as a tool of the nested module tools/
// so that dsh's own dependency graph stays small. The built dsh exports OTLP
// over HTTP to it; the test reads the traces back from Jaeger's query API
// (GET /api/traces) and checks the trees: parents, names, attributes, and
// which policy denied a call.

// jaegerModule is the nested module that holds Jaeger as a tool, relative
// to this package's directory.
const jaegerModule = "../tools"

// jaegerPackage is the all-in-one program, at the version tools/go.mod pins.
const jaegerPackage = "github.com/jaegertracing/jaeger/cmd/jaeger"

// jaegerConfig is the all-in-one configuration with every port the test
// uses given: the OTLP HTTP receiver, the query service (HTTP and gRPC),
// and the spans kept in memory. The collector's own metrics are off, so
// that nothing listens on a fixed port.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn

extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: %[2]s
    grpc:
      endpoint: %[3]s

receivers:
  otlp:
    protocols:
      http:
        endpoint: %[1]s

processors:
  batch:
    timeout: 100ms

exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`

// buildJaeger returns the all-in-one program of the tools module, built
// by "go tool -n", which keeps the executable in the Go build cache: only
// the first build compiles (minutes), every later one is a cache lookup.
// It skips the test, with the build's first lines, when Jaeger cannot be
// built here (no module proxy and an empty module cache).
func buildJaeger(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(jaegerModule)
	if err != nil {
		t.Fatal(err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("Jaeger cannot be built: no go command on PATH: %v", err)
	}
	cmd := exec.Command(goBin, "tool", "-n", "jaeger")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	if err != nil {
		lines := strings.SplitN(strings.TrimSpace(stderr.String()), "\n", 6)
		if len(lines) > 5 {
			lines[5] = "…"
		}
		t.Skipf("Jaeger cannot be built (go tool -n jaeger in %s, which builds %s: %v):\n%s", dir, jaegerPackage, err, strings.Join(lines, "\n"))
	}
	bin := strings.TrimSpace(string(out))
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("go tool -n jaeger printed %q: %v", bin, err)
	}
	t.Logf("built Jaeger in %v", time.Since(t0).Round(time.Millisecond))
	return bin
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// jaeger is a running all-in-one.
type jaeger struct {
	otlp  string // the OTLP HTTP endpoint, http://host:port
	query string // the query service, http://host:port
}

// startJaeger starts bin on free ports and waits until its query service
// answers and its OTLP receiver listens. It is killed when t ends. The
// ports are picked by listening and closing: one taken meanwhile makes
// Jaeger exit ("address already in use"), and it is started again on
// others, at most three times.
func startJaeger(t *testing.T, bin string) *jaeger {
	t.Helper()
	for attempt := 1; ; attempt++ {
		j, logs, inUse := tryJaeger(t, bin)
		if j != nil {
			return j
		}
		if !inUse || attempt == 3 {
			t.Fatalf("Jaeger exited before it was ready:\n%s", logs)
		}
		t.Logf("Jaeger found a port taken; again on others")
	}
}

// tryJaeger is one start of startJaeger's: the running Jaeger, or nil with
// its log and whether it exited for a port in use.
func tryJaeger(t *testing.T, bin string) (j *jaeger, log string, inUse bool) {
	t.Helper()
	otlpAddr, queryAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(config, fmt.Appendf(nil, jaegerConfig, otlpAddr, queryAddr, grpcAddr), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", config)
	cmd.Dir = dir
	logs := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Jaeger's log:\n%s", logs.String())
		}
	})
	j = &jaeger{otlp: "http://" + otlpAddr, query: "http://" + queryAddr}
	deadline := time.Now().Add(testtime.D(60 * time.Second))
	for {
		select {
		case err := <-exited:
			exited <- err
			out := fmt.Sprintf("%v\n%s", err, logs.String())
			return nil, out, strings.Contains(out, "address already in use")
		default:
		}
		if j.ready() {
			return j, "", false
		}
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger was not ready after %v:\n%s", testtime.D(60*time.Second), logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ready reports whether the query service answers and the OTLP receiver
// accepts connections.
func (j *jaeger) ready() bool {
	resp, err := http.Get(j.query + "/api/services")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(j.otlp, "http://"), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// env is the environment of a dsh that exports its spans to j as service.
func (j *jaeger) env(service string) []string {
	return []string{
		"OTEL_TRACES_EXPORTER=otlp",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + j.otlp,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_SERVICE_NAME=" + service,
		"OTEL_BSP_SCHEDULE_DELAY=100",
	}
}

// jTrace is a trace as Jaeger's query API returns it.
type jTrace struct {
	TraceID   string `json:"traceID"`
	Spans     []jSpan
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

// jSpan is a span of a jTrace.
type jSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		TraceID string `json:"traceID"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
	ProcessID string `json:"processID"`
}

// parent returns the id of the span's CHILD_OF reference, or "".
func (s *jSpan) parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// tag returns the span's tag key as text, and whether it has it.
func (s *jSpan) tag(key string) (string, bool) {
	for _, kv := range s.Tags {
		if kv.Key == key {
			return fmt.Sprint(kv.Value), true
		}
	}
	return "", false
}

// checkTags reports each of want's tags the span lacks or has another
// value of; a want value of "" asks for the tag's absence.
func (s *jSpan) checkTags(t *testing.T, want map[string]string) {
	t.Helper()
	for k, v := range want {
		got, ok := s.tag(k)
		switch {
		case v == "" && ok:
			t.Errorf("%s %s has %s = %q, want none", s.OperationName, s.SpanID, k, got)
		case v != "" && got != v:
			t.Errorf("%s %s has %s = %q (present %v), want %q", s.OperationName, s.SpanID, k, got, ok, v)
		}
	}
}

// byID returns the trace's span with the id, or nil.
func (tr *jTrace) byID(id string) *jSpan {
	for i := range tr.Spans {
		if tr.Spans[i].SpanID == id {
			return &tr.Spans[i]
		}
	}
	return nil
}

// named returns the trace's spans of the operation name.
func (tr *jTrace) named(name string) []*jSpan {
	var out []*jSpan
	for i := range tr.Spans {
		if tr.Spans[i].OperationName == name {
			out = append(out, &tr.Spans[i])
		}
	}
	return out
}

// children returns the spans whose parent is s.
func (tr *jTrace) children(s *jSpan) []*jSpan {
	var out []*jSpan
	for i := range tr.Spans {
		if tr.Spans[i].parent() == s.SpanID {
			out = append(out, &tr.Spans[i])
		}
	}
	return out
}

// descends reports whether s is below ancestor, at any depth.
func (tr *jTrace) descends(s, ancestor *jSpan) bool {
	for p := tr.byID(s.parent()); p != nil; p = tr.byID(p.parent()) {
		if p.SpanID == ancestor.SpanID {
			return true
		}
	}
	return false
}

// service returns the service that recorded s.
func (tr *jTrace) service(s *jSpan) string {
	return tr.Processes[s.ProcessID].ServiceName
}

// String draws the trace as an indented tree, ordered by span name, with
// each span's service and its most telling tags.
func (tr *jTrace) String() string {
	var b strings.Builder
	var draw func(s *jSpan, depth int)
	order := func(spans []*jSpan) []*jSpan {
		slices.SortStableFunc(spans, func(a, b *jSpan) int { return strings.Compare(a.OperationName, b.OperationName) })
		return spans
	}
	draw = func(s *jSpan, depth int) {
		fmt.Fprintf(&b, "%s%s [%s]", strings.Repeat("  ", depth), s.OperationName, tr.service(s))
		for _, k := range []string{"span.kind", "gen_ai.tool.call.id", "dsh.plugin", "dsh.policy.decision", "dsh.policy.delegated", "error.type", "dsh.mcp.server"} {
			if v, ok := s.tag(k); ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		b.WriteByte('\n')
		for _, c := range order(tr.children(s)) {
			draw(c, depth+1)
		}
	}
	var roots []*jSpan
	for i := range tr.Spans {
		if tr.byID(tr.Spans[i].parent()) == nil {
			roots = append(roots, &tr.Spans[i])
		}
	}
	for _, r := range order(roots) {
		draw(r, 0)
	}
	return b.String()
}

// get decodes the query API's answer to path into traces; a 404 is no
// trace yet.
func (j *jaeger) get(path string) ([]jTrace, error) {
	resp, err := http.Get(j.query + path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	var v struct {
		Data []jTrace `json:"data"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("GET %s: %v", path, err)
	}
	return v.Data, nil
}

// await polls path until done says the traces are complete, and returns
// them; it fails t after a generous bound.
func (j *jaeger) await(t *testing.T, path string, done func([]jTrace) bool) []jTrace {
	t.Helper()
	bound := testtime.D(30 * time.Second)
	deadline := time.Now().Add(bound)
	for {
		traces, err := j.get(path)
		if err != nil {
			t.Fatal(err)
		}
		if done(traces) {
			return traces
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			for i := range traces {
				b.WriteString(traces[i].String())
			}
			t.Fatalf("GET %s: the spans were not all there after %v; there are:\n%s", path, bound, b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// countSpans returns the number of spans of the operation name in traces.
func countSpans(traces []jTrace, name string) int {
	n := 0
	for i := range traces {
		n += len(traces[i].named(name))
	}
	return n
}

// countChildren returns the number of s's children of the operation name.
func countChildren(tr *jTrace, s *jSpan, name string) int {
	n := 0
	for _, c := range tr.children(s) {
		if c.OperationName == name {
			n++
		}
	}
	return n
}

// e2ePlugins writes the plugins of the test into a new scripts directory:
// the tool echo, the pre-execute listener a_pass.js that returns what
// next() gives it (so its decisions are delegated), and b_deny.js, which
// denies echo of the text "secret".
func e2ePlugins(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "scripts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"echo.js": `import { defineTool, tools } from "dsh";
tools.register(defineTool({
  name: "echo",
  description: "Return the text.",
  parameters: { text: { type: "string", required: true, description: "The text." } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args) { return args.text; },
}));
`,
		"a_pass.js": `import { on } from "dsh";
on("tools/pre-execute", async (exec, next) => next());
`,
		"b_deny.js": `import { on } from "dsh";
on("tools/pre-execute", async (exec, next) => {
  if (exec.name === "echo" && exec.arguments && exec.arguments.text === "secret") {
    return { kind: "deny", reason: "no secrets" };
  }
  return next();
});
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runTraced runs dsh with args in dir, exporting to j as service, and
// fails t when it does not exit 0.
func runTraced(t *testing.T, j *jaeger, service, dir string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testtime.D(60*time.Second))
	defer cancel()
	cmd := exec.CommandContext(ctx, buildDsh(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), j.env(service)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("dsh %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// randomHex returns n random bytes in hex.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func TestJaegerE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the first build of Jaeger takes minutes (make test runs this test)")
	}
	// Parallel: the first build of Jaeger (minutes) overlaps the package's
	// other parallel tests instead of adding to them.
	t.Parallel()
	bin := buildJaeger(t)
	buildDsh(t)
	j := startJaeger(t, bin)

	t.Run("a dsh run batch shows which policy denied the call", func(t *testing.T) {
		dir := t.TempDir()
		scripts := e2ePlugins(t)
		calls := `[{"id":"c1","name":"echo","arguments":{"text":"hello"}},{"id":"c2","name":"echo","arguments":{"text":"secret"}}]`
		if err := os.WriteFile(filepath.Join(dir, "calls.json"), []byte(calls), 0o644); err != nil {
			t.Fatal(err)
		}
		const service = "dsh-e2e-run"
		out := runTraced(t, j, service, dir, "--scripts", scripts, "run", "--json", "calls.json")
		if !strings.Contains(out, "no secrets") {
			t.Errorf("the batch result does not show the denial:\n%s", out)
		}
		traces := j.await(t, "/api/traces?service="+service+"&limit=20", func(tr []jTrace) bool {
			return countSpans(tr, "execute_tool echo") == 2 && countSpans(tr, "dsh.policy pre-execute") == 4
		})
		calls2 := map[string]*jTrace{}
		for i := range traces {
			t.Logf("trace %s:\n%s", traces[i].TraceID, traces[i].String())
			for _, s := range traces[i].named("execute_tool echo") {
				id, _ := s.tag("gen_ai.tool.call.id")
				calls2[id] = &traces[i]
			}
		}
		for _, c := range []struct {
			id       string
			call     map[string]string
			stages   map[string]map[string]string // by plugin
			executed bool                         // the call's body ran
		}{
			{
				id:   "c1",
				call: map[string]string{"gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function", "dsh.outcome": "success", "error.type": ""},
				stages: map[string]map[string]string{
					"a_pass.js": {"dsh.policy.stage": "pre-execute", "dsh.policy.decision": "allow", "dsh.policy.delegated": "true"},
					"b_deny.js": {"dsh.policy.stage": "pre-execute", "dsh.policy.decision": "allow", "dsh.policy.delegated": ""},
				},
				executed: true,
			},
			{
				id:   "c2",
				call: map[string]string{"gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool", "gen_ai.tool.type": "function", "dsh.outcome": "denied", "error.type": "denied", "otel.status_code": "ERROR"},
				stages: map[string]map[string]string{
					"a_pass.js": {"dsh.policy.stage": "pre-execute", "dsh.policy.decision": "deny", "dsh.policy.delegated": "true"},
					"b_deny.js": {"dsh.policy.stage": "pre-execute", "dsh.policy.decision": "deny", "dsh.policy.delegated": ""},
				},
			},
		} {
			tr := calls2[c.id]
			if tr == nil {
				t.Errorf("no execute_tool echo span with gen_ai.tool.call.id %s", c.id)
				continue
			}
			call := tr.named("execute_tool echo")[0]
			if call.parent() != "" {
				t.Errorf("the model-direct call %s has the parent %s, want none", c.id, call.parent())
			}
			call.checkTags(t, c.call)
			seen := map[string]bool{}
			executed := false
			for _, s := range tr.children(call) {
				if s.OperationName == "dsh.policy execute" {
					executed = true
					if p, _ := s.tag("dsh.plugin"); p != "dsh:timeout" {
						t.Errorf("call %s: the tools/execute stage span names the plugin %q, want dsh:timeout (the command's timeout wrapper)", c.id, p)
					}
				}
				if s.OperationName != "dsh.policy pre-execute" {
					continue
				}
				plugin, _ := s.tag("dsh.plugin")
				want, ok := c.stages[plugin]
				if !ok || seen[plugin] {
					t.Errorf("call %s has a stage span of the plugin %q, want one of each of a_pass.js and b_deny.js", c.id, plugin)
					continue
				}
				seen[plugin] = true
				s.checkTags(t, want)
			}
			if len(seen) != len(c.stages) {
				t.Errorf("call %s has the stage spans of %v, want a_pass.js and b_deny.js", c.id, seen)
			}
			if executed != c.executed {
				t.Errorf("call %s has an execute stage span: %v, want %v", c.id, executed, c.executed)
			}
		}
	})

	t.Run("a dsh ptc program's sub-calls are under its run_code call", func(t *testing.T) {
		dir := t.TempDir()
		scripts := e2ePlugins(t)
		program := `const a = await tools.echo({ text: "one" });
const b = await tools.echo({ text: "two" });
return a + b;
`
		if err := os.WriteFile(filepath.Join(dir, "prog.ts"), []byte(program), 0o644); err != nil {
			t.Fatal(err)
		}
		const service = "dsh-e2e-ptc"
		out := runTraced(t, j, service, dir, "--scripts", scripts, "ptc", "--json", "prog.ts")
		if !strings.Contains(out, "onetwo") {
			t.Errorf("the program's result is not onetwo:\n%s", out)
		}
		traces := j.await(t, "/api/traces?service="+service+"&limit=20", func(tr []jTrace) bool {
			return countSpans(tr, "execute_tool run_code") == 1 && countSpans(tr, "execute_tool echo") == 2
		})
		if len(traces) != 1 {
			t.Fatalf("%d traces, want the program's one", len(traces))
		}
		tr := &traces[0]
		t.Logf("trace %s:\n%s", tr.TraceID, tr.String())
		run := tr.named("execute_tool run_code")[0]
		run.checkTags(t, map[string]string{"gen_ai.tool.name": "run_code", "gen_ai.tool.call.id": "c1", "dsh.outcome": "success", "dsh.depth": "1"})
		if run.parent() != "" {
			t.Errorf("the run_code call has the parent %s, want none", run.parent())
		}
		// The program's run is a span between the call and its sub-calls
		// (docs/tracing.md, "dsh.run_code").
		runs := tr.named("dsh.run_code")
		if len(runs) != 1 || !tr.descends(runs[0], run) {
			t.Fatalf("want one dsh.run_code span below the run_code call's span")
		}
		runs[0].checkTags(t, map[string]string{"dsh.run_code.language": "typescript", "dsh.run_code.sub_calls": "2", "dsh.run_code.outcome": "ok"})
		ids := map[string]bool{}
		for _, s := range tr.named("execute_tool echo") {
			if !tr.descends(s, runs[0]) {
				t.Errorf("the sub-call %s is not below the dsh.run_code span", s.SpanID)
			}
			s.checkTags(t, map[string]string{"gen_ai.tool.name": "echo", "dsh.outcome": "success", "dsh.depth": "2", "dsh.root_call.id": "c1"})
			id, _ := s.tag("gen_ai.tool.call.id")
			ids[id] = true
			if n := countChildren(tr, s, "dsh.policy pre-execute"); n != 2 {
				t.Errorf("the sub-call %s has %d pre-execute stage spans, want two", id, n)
			}
		}
		if !ids["c1:ptc:1"] || !ids["c1:ptc:2"] {
			t.Errorf("the sub-calls' ids are %v, want c1:ptc:1 and c1:ptc:2", ids)
		}
	})

	t.Run("a dsh serve call through an imported dsh is one trace", func(t *testing.T) {
		dir := t.TempDir()
		scripts := e2ePlugins(t)
		const outerService, innerService = "dsh-e2e-serve-outer", "dsh-e2e-serve-inner"
		innerEnv := map[string]string{}
		for _, kv := range j.env(innerService) {
			k, v, _ := strings.Cut(kv, "=")
			innerEnv[k] = v
		}
		config, err := json.Marshal(map[string]any{"mcpServers": map[string]any{
			"inner": map[string]any{"command": buildDsh(t), "args": []string{"--scripts", scripts, "serve"}, "env": innerEnv},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "mcp.json"), config, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), testtime.D(60*time.Second))
		defer cancel()
		cmd := exec.Command(buildDsh(t), "--scripts", t.TempDir(), "--mcp-config", filepath.Join(dir, "mcp.json"), "serve")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), j.env(outerService)...)
		stderr := &syncbuf.Buffer{}
		cmd.Stderr = stderr
		client := sdk.NewClient(&sdk.Implementation{Name: "jaeger-e2e", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("connecting to dsh serve: %v\n%s", err, stderr.String())
		}
		closed := false
		defer func() {
			if !closed {
				_ = cs.Close()
			}
		}()
		// The import connects in the background: wait for its tool.
		for {
			res, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v\n%s", err, stderr.String())
			}
			if slices.ContainsFunc(res.Tools, func(tool *sdk.Tool) bool { return tool.Name == "inner__echo" }) {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the import's tool inner__echo was not listed: %v\n%s", ctx.Err(), stderr.String())
			case <-time.After(50 * time.Millisecond):
			}
		}
		traceID, clientSpan := randomHex(t, 16), randomHex(t, 8)
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{
			Meta:      sdk.Meta{"traceparent": "00-" + traceID + "-" + clientSpan + "-01"},
			Name:      "inner__echo",
			Arguments: map[string]any{"text": "through"},
		})
		if err != nil {
			t.Fatalf("tools/call: %v\n%s", err, stderr.String())
		}
		if res.IsError || len(res.Content) != 1 || res.Content[0].(*sdk.TextContent).Text != "through" {
			b, _ := json.Marshal(res)
			t.Errorf("tools/call inner__echo answered %s, want the text through", b)
		}
		// Closing the session ends the outer dsh, which ends the inner one;
		// each flushes its spans as it exits.
		closed = true
		if err := cs.Close(); err != nil {
			t.Logf("closing: %v", err)
		}

		traces := j.await(t, "/api/traces/"+traceID, func(tr []jTrace) bool {
			return len(tr) == 1 && len(tr[0].named("execute_tool echo")) == 1 && len(tr[0].named("tools/call echo")) == 2
		})
		tr := &traces[0]
		t.Logf("trace %s:\n%s", tr.TraceID, tr.String())
		chain := []struct {
			name, service, kind string
			tags                map[string]string
		}{
			{"tools/call inner__echo", outerService, "server", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "inner__echo"}},
			{"execute_tool inner__echo", outerService, "", map[string]string{"gen_ai.tool.name": "inner__echo", "dsh.outcome": "success"}},
			{"tools/call echo", outerService, "client", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "dsh.mcp.server": "inner"}},
			{"tools/call echo", innerService, "server", map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo"}},
			{"execute_tool echo", innerService, "", map[string]string{"gen_ai.tool.name": "echo", "dsh.outcome": "success", "dsh.depth": "1"}},
		}
		parent := clientSpan
		for _, link := range chain {
			var found *jSpan
			for _, s := range tr.named(link.name) {
				if tr.service(s) == link.service && s.parent() == parent {
					found = s
				}
			}
			if found == nil {
				t.Fatalf("no span %s of %s whose parent is %s", link.name, link.service, parent)
			}
			if link.kind != "" {
				link.tags["span.kind"] = link.kind
			}
			found.checkTags(t, link.tags)
			parent = found.SpanID
		}
		// The inner call's pre-execute stages ran in the inner dsh, below its
		// execute_tool span.
		if n := countChildren(tr, tr.byID(parent), "dsh.policy pre-execute"); n != 2 {
			t.Errorf("the inner execute_tool echo has %d pre-execute stage spans, want two", n)
		}
	})
}
