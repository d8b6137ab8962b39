package lua_test

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// env is an engine with a scripts directory loaded by the Lua host.
type env struct {
	svc     *engine.Service
	loaded  []*scripting.Loaded
	diags   []*scripting.Diagnostic
	agents  *scripting.Agents
	scripts string
}

type option func(*lua.Host, *engine.Service)

func load(t testing.TB, files map[string]string, opts ...option) *env {
	t.Helper()
	return loadDir(t, hosttest.WriteFiles(t, files), opts...)
}

func loadDir(t testing.TB, root string, opts ...option) *env {
	t.Helper()
	return loadWith(t, root, hosttest.Config{}, opts...)
}

// loadBare is load without the engine's timeout policy, so that a script's
// tools/execute wrapper is the only one.
func loadBare(t testing.TB, files map[string]string, opts ...option) *env {
	t.Helper()
	return loadWith(t, hosttest.WriteFiles(t, files), hosttest.Config{Bare: true}, opts...)
}

// loadWith loads root with a Lua host as hosttest.Load does; opts tune the
// host and the service before loading.
func loadWith(t testing.TB, root string, cfg hosttest.Config, opts ...option) *env {
	t.Helper()
	// hosttest's defaults: a generous listener deadline, a short grace.
	host := &lua.Host{ListenerTimeout: 10 * time.Second, Grace: testtime.D(20 * time.Millisecond)}
	e := hosttest.LoadDir(t, host, cfg, root, func(svc *engine.Service) {
		for _, o := range opts {
			o(host, svc)
		}
	})
	return &env{svc: e.Service, loaded: e.Loaded, diags: e.Diags, agents: e.Agents, scripts: e.Root}
}

func (e *env) call(t *testing.T, name string, args any) string {
	t.Helper()
	return e.callAs(t, nil, name, args)
}

func (e *env) callAs(t *testing.T, agent *engine.Agent, name string, args any) string {
	t.Helper()
	if args == nil {
		args = dsl.NewObject()
	}
	r := e.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: name, Arguments: args, Agent: agent})
	return marshal(t, r)
}

// run runs one call through the pipeline and renders its result.
func (e *env) run(t *testing.T, ctx context.Context, in engine.Input) string {
	t.Helper()
	if in.CallID == "" {
		in.CallID = "c1"
	}
	if in.Arguments == nil {
		in.Arguments = dsl.NewObject()
	}
	return marshal(t, e.svc.Call(ctx, in))
}

// value calls a tool that must succeed and returns its value as JSON.
func (e *env) value(t *testing.T, name string, a any) string {
	t.Helper()
	if a == nil {
		a = dsl.NewObject()
	}
	r := e.svc.Call(context.Background(), engine.Input{CallID: "v1", Name: name, Arguments: a})
	if r.IsError {
		t.Fatalf("%s failed: %s", name, marshal(t, r))
	}
	return marshal(t, r.Value)
}

// marshal renders a result (or any JSON value) as canonical JSON text.
func marshal(t testing.TB, v any) string {
	t.Helper()
	if r, ok := v.(*engine.Result); ok {
		v = r.JSON()
	}
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func args(t testing.TB, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (e *env) diagnostics() []string {
	var out []string
	for _, d := range e.diags {
		out = append(out, d.Error())
	}
	return out
}

func noDiags(t *testing.T, e *env) {
	t.Helper()
	if len(e.diags) > 0 {
		t.Fatalf("diagnostics: %q", e.diagnostics())
	}
}

// success is the JSON of a string-valued success rendered as itself.
func success(v string) string {
	return `{"isError":false,"value":"` + v + `","content":[{"type":"text","text":"` + v + `"}]}`
}

var uuid = regexp.MustCompile(`"id":"[0-9a-f-]{36}"`)

// ids replaces message ids (random UUIDs) by "<id>".
func ids(s string) string { return uuid.ReplaceAllString(s, `"id":"<id>"`) }

// tool is a Lua plugin registering one define_tool tool with the given body
// (the body of execute(args, exec)) and output schema.
func tool(name, output, body string, extra ...string) string {
	return `local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "` + name + `",
  description = "test",
  parameters = {},
  output = { schema = ` + output + `, render = function(a, v) return { { type = "text", text = "rendered" } } end },
  ` + strings.Join(extra, ",\n  ") + `
  execute = function(args, exec) ` + body + ` end,
})
`
}

// echo is a plugin registering echo: a define_tool tool whose value is its
// required text, rendered as itself.
const echo = `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "echo", description = "Echo a text.",
  parameters = { text = { type = "string", required = true } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args) return args.text end,
})
`

func shellTool() *engine.Definition {
	return &engine.Definition{
		Name: "shell", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output:  engine.Output{Schema: dsl.NewObject(), Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("ran")}, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "ran", nil },
	}
}

func TestAToolWrittenInLuaRuns(t *testing.T) {
	e := load(t, map[string]string{"echo.lua": echo})
	noDiags(t, e)
	hosttest.Want(t, e.call(t, "echo", args(t, `{"text":"hi"}`)), success("hi"))
	hosttest.Want(t, e.call(t, "echo", args(t, `{}`)), hosttest.Failure(`invalid arguments: missing required property "text"`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
}

// logBuffer is an io.Writer for a slog JSON handler, safe for concurrent use.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (w *logBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *logBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// logger returns a JSON logger at debug level without timestamps.
func (w *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
}
