package js_test

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/js"
)

// tool is a JS plugin registering one defineTool tool with the given body
// and output schema.
func tool(name, output, body string, extra ...string) string {
	return `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: ` + "`" + name + "`" + `,
  description: "test",
  parameters: {},
  output: { schema: ` + output + `, render: (a, v) => [{ type: "text", text: JSON.stringify(v) }] },
  ` + strings.Join(extra, ",\n  ") + `
  async execute(args, exec) { ` + body + ` },
}));
`
}

func TestScriptsThatMisbehave(t *testing.T) {
	t.Run("a top level that throws registers nothing and is reported at its line", func(t *testing.T) {
		e := load(t, map[string]string{
			"good.js": tool("good", `{type: "string"}`, `return "ok"`),
			"bad.ts":  "import { tools } from \"dsh\";\nconst x: number = 1;\nthrow new Error(\"broken at top\");\n",
		})
		if got := e.diagnostics(); len(got) != 1 || got[0] != "bad.ts:3:7: broken at top" {
			t.Errorf("diagnostics %q", got)
		}
		if got := e.call(t, "good", nil); !strings.Contains(got, `"value":"ok"`) {
			t.Errorf("the good plugin does not serve: %s", got)
		}
	})
	t.Run("a script that registers then throws has its registrations rolled back", func(t *testing.T) {
		e := load(t, map[string]string{"half.js": tool("half", `{type: "string"}`, `return "x"`) + "\nthrow new Error('after registering');\n"})
		if len(e.diags) != 1 || !strings.Contains(e.diags[0].Error(), "after registering") {
			t.Fatalf("diagnostics %q", e.diagnostics())
		}
		if e.svc.Global().Get("half") != nil {
			t.Error("the tool of a plugin that failed is registered")
		}
	})
	t.Run("a syntax error is reported at the original position", func(t *testing.T) {
		e := load(t, map[string]string{"syntax.ts": "const a: string = 'x';\nconst = 3;\n"})
		if got := e.diagnostics(); len(got) != 1 || !strings.HasPrefix(got[0], "syntax.ts:2:") {
			t.Errorf("diagnostics %q", got)
		}
	})
	t.Run("a body in while(true) inside try/catch times out and the next call gets a fresh instance", func(t *testing.T) {
		src := tool("spin", `{type: "string"}`, `if (args.spin) { for (;;) { try { while (true) {} } catch (e) {} } } return "fresh"`, "timeoutMs: 50,")
		src = strings.Replace(src, "parameters: {}", "parameters: { spin: { type: \"boolean\" } }", 1)
		e := load(t, map[string]string{"spin.js": src})
		start := time.Now()
		got := e.call(t, "spin", args(t, `{"spin":true}`))
		want := `{"isError":true,"error":{"message":"tool call timed out after 50ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 50ms"}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("took %v", d)
		}
		// The fresh instance replays the top level in the background; on a
		// loaded machine that can take longer than the next call's own 50ms,
		// so allow it a few tries.
		got = ""
		for try := 0; try < 5 && !strings.Contains(got, `"value":"fresh"`); try++ {
			got = e.call(t, "spin", args(t, `{}`))
		}
		if !strings.Contains(got, `"value":"fresh"`) {
			t.Errorf("the next call: %s", got)
		}
	})
	t.Run("a listener in an endless loop is cut by the listener deadline and fails closed", func(t *testing.T) {
		e := load(t, map[string]string{
			"t.js": tool("t", `{type: "string"}`, `return "ran"`),
			"p.js": `require("dsh").on("tools/pre-execute", (exec, next) => { try { while (true) {} } catch (e) {} });`,
		}, func(h *js.Host, _ *engine.Service) { h.ListenerTimeout = 50 * time.Millisecond })
		got := e.call(t, "t", nil)
		if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "timed out after 50ms") {
			t.Errorf("got %s", got)
		}
	})
	t.Run("infinite recursion is a script error, not a crash", func(t *testing.T) {
		e := load(t, map[string]string{"rec.js": tool("rec", `{type: "string"}`, `function f(n) { return f(n + 1) + 1 } return f(0)`)})
		got := e.call(t, "rec", nil)
		if !strings.Contains(got, `"isError":true`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a getter on a returned value is never run and the value is invalid output", func(t *testing.T) {
		e := load(t, map[string]string{"g.js": tool("g", `{type: "json"}`,
			`globalThis.ran = false; const v = {}; Object.defineProperty(v, "x", { enumerable: true, get() { globalThis.ran = true; throw new Error("getter ran") } }); return v`)})
		got := e.call(t, "g", nil)
		want := `{"isError":true,"error":{"message":"tool \"g\" returned invalid output: value is not lossless JSON","info":{"name":"ToolOutputError","code":"INVALID_TOOL_OUTPUT"}},"content":[{"type":"text","text":"Error: tool \"g\" returned invalid output: value is not lossless JSON"}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("a polluted Object.prototype does not make a missing decision kind read as allow", func(t *testing.T) {
		e := load(t, map[string]string{
			"t.js": tool("t", `{type: "string"}`, `return "ran"`),
			"p.js": `Object.prototype.kind = "allow"; require("dsh").on("tools/pre-execute", () => ({}));`,
		})
		got := e.call(t, "t", nil)
		if !strings.Contains(got, `"isError":true`) || !strings.Contains(got, "invalid decision") {
			t.Errorf("got %s", got)
		}
	})
	t.Run("a decision with an unknown kind fails closed", func(t *testing.T) {
		e := load(t, map[string]string{
			"t.js": tool("t", `{type: "string"}`, `return "ran"`),
			"p.js": `require("dsh").on("tools/pre-execute", async () => ({ kind: "alow" }));`,
		})
		got := e.call(t, "t", nil)
		want := `{"isError":true,"error":{"message":"tools/pre-execute listener returned an invalid decision: unknown kind \"alow\""},"content":[{"type":"text","text":"Error: tools/pre-execute listener returned an invalid decision: unknown kind \"alow\""}]}`
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("tools named after prototype properties work", func(t *testing.T) {
		e := load(t, map[string]string{
			"a.js": tool("__proto__", `{type: "string"}`, `return "proto"`),
			"b.js": tool("constructor", `{type: "string"}`, `return "ctor"`),
		})
		if got := e.call(t, "__proto__", nil); !strings.Contains(got, `"value":"proto"`) {
			t.Errorf("__proto__: %s", got)
		}
		if got := e.call(t, "constructor", nil); !strings.Contains(got, `"value":"ctor"`) {
			t.Errorf("constructor: %s", got)
		}
	})
	t.Run("a 10,000-deep returned value crosses", func(t *testing.T) {
		src := strings.Replace(tool("deep", `{type: "json"}`, `let v = 1; for (let i = 0; i < 10000; i++) v = [v]; return v`),
			`JSON.stringify(v)`, `"deep"`, 1)
		e := load(t, map[string]string{"deep.js": src})
		got := e.call(t, "deep", nil)
		if !strings.HasPrefix(got, `{"isError":false,"value":[[[[`) {
			t.Errorf("got %.200s", got)
		}
	})
}

func TestAScriptErrorIsLoggedWithItsOriginalStack(t *testing.T) {
	var buf strings.Builder
	var mu sync.Mutex
	h := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	src := "import { defineTool, tools } from \"dsh\";\ntype T = { a: number };\n\n" +
		"tools.register(defineTool({ name: \"boom\", description: \"\", parameters: {},\n" +
		"  output: { schema: { type: \"string\" }, render: () => [] },\n" +
		"  execute() {\n" +
		"    throw new Error(\"kaboom\");\n" +
		"  } }));\n"
	e := load(t, map[string]string{"boom.ts": src}, func(host *js.Host, _ *engine.Service) { host.Logger = h })
	if got := e.call(t, "boom", nil); !strings.Contains(got, `"message":"kaboom"`) {
		t.Fatalf("got %s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "boom.ts:7:11") {
		t.Errorf("the log does not point at boom.ts:7:11:\n%s", buf.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A top level in an endless loop is interrupted at the load deadline: see
// scripting/internal/hosttest, which runs it for both hosts.

func TestARendererThatHangs(t *testing.T) {
	t.Run("a renderer in an endless loop fails the call as render's timeout and the next call gets a fresh instance", func(t *testing.T) {
		src := strings.Replace(tool("r", `{type: "string"}`, `return args.spin ? "spin" : "calm"`),
			`render: (a, v) => [{ type: "text", text: JSON.stringify(v) }]`,
			`render: (a, v) => { if (v === "spin") { for (;;) { try { while (true) {} } catch (e) {} } } return [{ type: "text", text: v }]; }`, 1)
		src = strings.Replace(src, "parameters: {}", "parameters: { spin: { type: \"boolean\" } }", 1)
		deadline := testtime.D(time.Second)
		e := load(t, map[string]string{"r.js": src}, func(h *js.Host, _ *engine.Service) { h.ListenerTimeout = deadline })
		got := e.call(t, "r", args(t, `{"spin":true}`))
		want := strings.ReplaceAll(`{"isError":true,"error":{"message":"tool \"r\" returned invalid output: output.render failed: tool \"r\" output.render timed out after 1000ms","info":{"name":"ToolOutputError","code":"INVALID_TOOL_OUTPUT"}},"content":[{"type":"text","text":"Error: tool \"r\" returned invalid output: output.render failed: tool \"r\" output.render timed out after 1000ms"}]}`,
			"1000ms", fmt.Sprintf("%dms", deadline.Milliseconds()))
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		if got := e.call(t, "r", args(t, `{}`)); !strings.Contains(got, `"content":[{"type":"text","text":"calm"}]`) {
			t.Errorf("the next call: %s", got)
		}
	})
}

func TestAPresentationMetaThatHangs(t *testing.T) {
	src := strings.Replace(tool("m", `{type: "string"}`, `return args.spin ? "spin" : "calm"`),
		`render: (a, v) => [{ type: "text", text: JSON.stringify(v) }]`,
		`render: (a, v) => [{ type: "text", text: v }], presentationMeta: (a, v) => { while (v === "spin") {} return { v }; }`, 1)
	src = strings.Replace(src, "parameters: {}", "parameters: { spin: { type: \"boolean\" } }", 1)
	deadline := testtime.D(time.Second)
	e := load(t, map[string]string{"m.js": src}, func(h *js.Host, _ *engine.Service) { h.ListenerTimeout = deadline })
	got := e.call(t, "m", args(t, `{"spin":true}`))
	if want := fmt.Sprintf(`output.presentationMeta failed: tool \"m\" output.presentationMeta timed out after %dms`, deadline.Milliseconds()); !strings.Contains(got, want) {
		t.Errorf("got  %s\nwant it to contain %s", got, want)
	}
	if got := e.call(t, "m", args(t, `{}`)); !strings.Contains(got, `"meta":{"v":"calm"}`) {
		t.Errorf("the next call: %s", got)
	}
}
