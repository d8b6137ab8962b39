package scripting_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/internal/tracelog"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// observedPlugins are, in each language, a tool and a tools/result
// observer that logs a line.
var observedPlugins = map[string]map[string]string{
	".js": {"observed.js": `const { defineTool, tools, on, log } = require("dsh");
tools.register(defineTool({
  name: "echo", description: "test", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { return "ran"; },
}));
on("tools/result", (exec, r) => { log.info("observed " + exec.name); });
`},
	".lua": {"observed.lua": `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "echo", description = "test", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return "ran" end,
})
dsh.on("tools/result", function(exec, r) dsh.log.info("observed " .. exec.name) end)
`},
}

func TestAScriptResultObserversLogLinesCarryTheCallsTraceIDs(t *testing.T) {
	for _, ext := range []string{".js", ".lua"} {
		t.Run("in "+ext, func(t *testing.T) {
			var out syncbuf.Buffer
			logger := slog.New(tracelog.Handler(slog.NewTextHandler(&out, nil)))
			hosts := map[string]scripting.Host{
				".js":  &js.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond, Logger: logger},
				".lua": &lua.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond, Logger: logger},
			}
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			svc := engine.New(engine.WithTracerProvider(tp))
			hosttest.LoadPlugins(t, context.Background(), svc, hosts[ext], observedPlugins[ext])
			if r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "echo", Arguments: dsl.NewObject()}); r.IsError {
				t.Fatal(r.Error.Message)
			}
			var span sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == "execute_tool echo" {
					span = s
				}
			}
			if span == nil {
				t.Fatalf("no execute_tool echo span in %v", rec.Ended())
			}
			var line string
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.Contains(l, "observed echo") {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("the observer's line is not in the log:\n%s", out.String())
			}
			if want := "trace_id=" + span.SpanContext().TraceID().String(); !strings.Contains(line, want) {
				t.Errorf("the observer's line %q lacks %s", line, want)
			}
			if want := "span_id=" + span.SpanContext().SpanID().String(); !strings.Contains(line, want) {
				t.Errorf("the observer's line %q lacks %s", line, want)
			}
		})
	}
}

func TestAScriptResultObserverSeesTheCallsCaller(t *testing.T) {
	plugins := map[string]map[string]string{
		".js": {"o.js": strings.Replace(observedPlugins[".js"]["observed.js"],
			`log.info("observed " + exec.name)`, `log.info("observed " + (exec.caller ? exec.caller.subject : "none"))`, 1)},
		".lua": {"o.lua": strings.Replace(observedPlugins[".lua"]["observed.lua"],
			`dsh.log.info("observed " .. exec.name)`, `dsh.log.info("observed " .. (exec.caller and exec.caller.subject or "none"))`, 1)},
	}
	for _, ext := range []string{".js", ".lua"} {
		t.Run("in "+ext+", exec.caller is the verified identity the call ran for", func(t *testing.T) {
			var out syncbuf.Buffer
			logger := slog.New(slog.NewTextHandler(&out, nil))
			hosts := map[string]scripting.Host{
				".js":  &js.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond, Logger: logger},
				".lua": &lua.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond, Logger: logger},
			}
			svc := engine.New()
			hosttest.LoadPlugins(t, context.Background(), svc, hosts[ext], plugins[ext])
			ctx := engine.WithCaller(context.Background(), &engine.Caller{Subject: "alice"})
			if r := svc.Call(ctx, engine.Input{CallID: "c1", Name: "echo", Arguments: dsl.NewObject()}); r.IsError {
				t.Fatal(r.Error.Message)
			}
			if !strings.Contains(out.String(), `msg="observed alice"`) {
				t.Errorf("the observer did not see the caller:\n%s", out.String())
			}
		})
	}
}
