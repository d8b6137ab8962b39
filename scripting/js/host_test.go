package js_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

// regexp2's match-timeout clock (see jsguard) outlives a match by about a
// second; it is not a leak.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// env is an engine with a scripts directory loaded by the JS host.
type env struct {
	svc     *engine.Service
	loaded  []*scripting.Loaded
	diags   []*scripting.Diagnostic
	agents  *scripting.Agents
	scripts string
}

func load(t testing.TB, files map[string]string, opts ...func(*js.Host, *engine.Service)) *env {
	t.Helper()
	return loadDir(t, hosttest.WriteFiles(t, files), opts...)
}

// loadDir loads root with a JS host as hosttest.Load does; opts tune the
// host and the service before loading.
func loadDir(t testing.TB, root string, opts ...func(*js.Host, *engine.Service)) *env {
	t.Helper()
	// hosttest's defaults: a generous listener deadline, a short grace.
	host := &js.Host{ListenerTimeout: 10 * time.Second, Grace: testtime.D(20 * time.Millisecond)}
	e := hosttest.LoadDir(t, host, hosttest.Config{}, root, func(svc *engine.Service) {
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
	return e.callWith(t, context.Background(), agent, name, args)
}

// callCtx is call under ctx.
func (e *env) callCtx(t *testing.T, ctx context.Context, name string, args any) string {
	t.Helper()
	return e.callWith(t, ctx, nil, name, args)
}

func (e *env) callWith(t *testing.T, ctx context.Context, agent *engine.Agent, name string, args any) string {
	t.Helper()
	if args == nil {
		args = dsl.NewObject()
	}
	r := e.svc.Call(ctx, engine.Input{CallID: "c1", Name: name, Arguments: args, Agent: agent})
	b, err := dsl.Marshal(r.JSON())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func args(t *testing.T, text string) any {
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

func TestTheExamplePluginsWork(t *testing.T) {
	e := loadDir(t, filepath.Join("..", "..", "scripts", "examples", "plugins"), func(h *js.Host, _ *engine.Service) {
		mods, err := capability.Modules(capability.Config{Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		h.Modules = mods
	})
	if len(e.diags) > 0 {
		t.Fatalf("diagnostics: %v", e.diagnostics())
	}
	t.Run("word_count.ts counts words", func(t *testing.T) {
		got := e.call(t, "word_count", args(t, `{"text":"the quick brown the fox"}`))
		if want := `{"isError":false,"value":{"words":5},"content":[{"type":"text","text":"5 words"}]}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		got = e.call(t, "word_count", args(t, `{"text":"the quick The fox","unique":true}`))
		if want := `{"isError":false,"value":{"words":3},"content":[{"type":"text","text":"3 words"}]}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("word_count.ts validates its arguments", func(t *testing.T) {
		got := e.call(t, "word_count", args(t, `{}`))
		want := `{"isError":true,"error":{"message":"invalid arguments: missing required property \"text\"","info":{"name":"ToolArgsError","code":"INVALID_ARGS"}},"content":[{"type":"text","text":"Error: invalid arguments: missing required property \"text\""}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	// The other examples are tested in tests/examples_test.go.
}

func shellTool() *engine.Definition {
	return &engine.Definition{
		Name: "shell", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output:  engine.Output{Schema: dsl.NewObject(), Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("ran")}, nil }},
		Execute: func(context.Context, any, *engine.Run) (any, error) { return "ran", nil },
	}
}
