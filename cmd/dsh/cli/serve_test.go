package cli

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28, and issue 17 asks for it: clients on 2025-11-25 use it, and servers keep it through the deprecation window.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// greetPlugin defines greet, which a policy makes ask for approval when
// its name is "root".
const greetPlugin = `import { defineTool, tools, on } from "dsh";

tools.register(defineTool({
  name: "greet",
  description: "Greet someone.",
  parameters: { name: { type: "string", required: true } },
  output: {
    schema: { type: "object", additionalProperties: false, properties: { greeting: { type: "string", required: true } } },
    render: (_args, value) => [{ type: "text", text: value.greeting }],
  },
  async execute(args) { return { greeting: "hello " + args.name }; },
}));

on("tools/pre-execute", async (exec, next) => {
  const d = await next();
  if (exec.name === "greet" && exec.arguments.name === "root" && d.kind === "allow") {
    return { kind: "ask", reason: "greeting root" };
  }
  return d;
});
`

func TestServeOnStdio(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "greet.js"), []byte(greetPlugin), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.js"), []byte("this is not JS"), 0o644); err != nil {
		t.Fatal(err)
	}

	var asked []string
	cs, stderr, wait := serveInProcess(t, []string{"--scripts", dir, "--memory-limit", "0", "serve"}, &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &sdk.ElicitResult{Action: "decline"}, nil
		},
	})

	t.Run("the list has the plugin's tool", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tools) != 1 || res.Tools[0].Name != "greet" || res.Tools[0].OutputSchema == nil {
			t.Errorf("tools %+v, want greet with an output schema", res.Tools)
		}
	})
	callGreet := func(t *testing.T, name string) *sdk.CallToolResult {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"name": name})
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "greet", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	t.Run("a call runs the script tool", func(t *testing.T) {
		r := callGreet(t, "ada")
		b, _ := json.Marshal(r.StructuredContent)
		if r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != "hello ada" || string(b) != `{"greeting":"hello ada"}` {
			t.Errorf("result %+v (structured %s), want hello ada", r, b)
		}
	})
	t.Run("an ask is put to the client, whose decline denies the call", func(t *testing.T) {
		r := callGreet(t, "root")
		want := `Error: the user rejected tool "greet"`
		if !r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != want {
			t.Errorf("result %+v, want %q", r, want)
		}
		if len(asked) != 1 || !strings.Contains(asked[0], "greeting root") {
			t.Errorf("asked %q, want one question with the reason", asked)
		}
	})

	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
	t.Run("diagnostics go to standard error", func(t *testing.T) {
		if !strings.Contains(stderr.String(), "broken.js") {
			t.Errorf("stderr %q, want the broken plugin's diagnostic", stderr)
		}
	})
}

func TestServeWatch(t *testing.T) {
	dir := t.TempDir()
	write := func(t *testing.T, name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(t, "greet.js", greetPlugin)
	changed := make(chan struct{}, 16)
	cs, stderr, wait := serveInProcess(t, []string{"--scripts", dir, "--memory-limit", "0", "serve", "--watch", "--debounce", "20ms"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} },
	})
	names := func(t *testing.T) string {
		t.Helper()
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return strings.Join(out, " ")
	}
	call := func(t *testing.T, name string) string {
		t.Helper()
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(`{"name":"ada"}`)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	// waitFor takes list_changed notifications until the list is want.
	waitFor := func(t *testing.T, want string) {
		t.Helper()
		for names(t) != want {
			<-changed
		}
	}

	t.Run("the plugins loaded at start are served", func(t *testing.T) {
		if got := names(t); got != "greet" {
			t.Errorf("tools %q, want greet", got)
		}
	})
	t.Run("a new plugin is announced and served", func(t *testing.T) {
		write(t, "wave.js", strings.ReplaceAll(strings.ReplaceAll(greetPlugin, `"greet"`, `"wave"`), `"hello "`, `"wave "`))
		waitFor(t, "greet wave")
		if got := call(t, "wave"); got != "wave ada" {
			t.Errorf("wave said %q", got)
		}
	})
	t.Run("an edit serves the new version", func(t *testing.T) {
		write(t, "greet.js", strings.ReplaceAll(greetPlugin, `"hello "`, `"hi "`))
		// The list is unchanged, so nothing is announced: wait for the report.
		for !strings.Contains(stderr.String(), "greet.js: reloaded ") {
			time.Sleep(10 * time.Millisecond)
		}
		if got := call(t, "greet"); got != "hi ada" {
			t.Errorf("greet said %q after the edit", got)
		}
	})
	t.Run("a broken version is reported and the old one keeps serving", func(t *testing.T) {
		write(t, "wave.js", "this is not JS")
		for !strings.Contains(stderr.String(), "reload failed") {
			time.Sleep(10 * time.Millisecond)
		}
		if got := call(t, "wave"); got != "wave ada" {
			t.Errorf("wave said %q after a broken edit", got)
		}
	})
	t.Run("a deleted plugin is announced and its tool is gone", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "wave.js")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "greet")
	})

	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
	t.Run("each reload is reported on standard error", func(t *testing.T) {
		for _, want := range []string{"wave.js: loaded ", "greet.js: reloaded ", "wave.js: reload failed", "wave.js: unloaded "} {
			if !strings.Contains(stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
}

func TestServeSendsAScriptsLogsAndProgress(t *testing.T) {
	dir := t.TempDir()
	plugin := `import { defineTool, tools, log } from "dsh";
tools.register(defineTool({
  name: "work",
  parameters: {},
  output: { schema: { type: "string" }, render: (_a, v) => [{ type: "text", text: v }] },
  async execute(_args, exec) {
    log.debug("a detail");
    exec.progress(1, 2);
    await new Promise((r) => setTimeout(r, 1));
    log.info("halfway", { step: 1 });
    exec.progress(2, 2, "done");
    return "worked";
  },
}));
`
	if err := os.WriteFile(filepath.Join(dir, "work.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	more := make(chan struct{}, 16)
	note := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
		more <- struct{}{}
	}
	cs, stderr, wait := serveInProcessAs(t, []string{"--scripts", dir, "--memory-limit", "0", "serve"}, &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			b, _ := json.Marshal(r.Params.Data)
			note("log " + string(r.Params.Level) + " " + r.Params.Logger + " " + string(b))
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			b, _ := json.Marshal(r.Params)
			note("progress " + string(b))
		},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	params := &sdk.CallToolParams{Name: "work", Arguments: json.RawMessage(`{}`)}
	params.SetProgressToken("p1")
	r, err := cs.CallTool(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || len(r.Content) != 1 || r.Content[0].(*sdk.TextContent).Text != "worked" {
		t.Errorf("result %+v", r)
	}
	for range 3 {
		<-more
	}
	t.Run("the client hears the script's log lines at its level, and its progress", func(t *testing.T) {
		mu.Lock()
		defer mu.Unlock()
		want := []string{
			`progress {"progressToken":"p1","progress":1,"total":2}`,
			`log info work.js {"message":"halfway","step":1}`,
			`progress {"progressToken":"p1","message":"done","progress":2,"total":2}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("heard\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
}
