package js_test

import (
	"strings"
	"testing"
	"time"
)

// guardedPlugin is a tool and a tools/pre-execute listener that, when the
// call asks for it, tools.calls the tool it guards from inside the listener,
// and denies with the nested call's failure.
const guardedPlugin = `const { defineTool, tools, on } = require("dsh");
tools.register(defineTool({
  name: "guarded", description: "test", parameters: { recurse: { type: "boolean" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute() { return "ran" },
}));
on("tools/pre-execute", async (exec, next) => {
  if (exec.name !== "guarded" || !exec.arguments.recurse) return next();
  const r = await tools.call("guarded", { recurse: true }, exec);
  if (r.isError) return { kind: "deny", reason: r.error.message };
  return next();
});
`

// fanPlugin is a tool that, below level 5, calls itself 8 times at once one
// level deeper: 37,448 nested calls under one root if nothing stops it.
const fanPlugin = `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "fan", description: "test", parameters: { level: { type: "number" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    if (args.level >= 5) return "leaf";
    const rs = await Promise.all(Array.from({ length: 8 }, () => tools.call("fan", { level: args.level + 1 }, exec)));
    const bad = rs.find((r) => r.isError);
    if (bad) throw new Error(bad.error.message);
    return "ok";
  },
}));
`

func TestNestedCallsAreBounded(t *testing.T) {
	cases := []struct {
		name, file, src, tool, hostile, want, next, wantNext string
	}{
		{
			name: "a pre-execute listener that tools.calls the tool it guards fails at the nesting depth",
			file: "guarded.js", src: guardedPlugin, tool: "guarded", hostile: `{"recurse":true}`,
			want: `{"isError":true,"error":{"message":"tool calls are nested more than 64 deep"},"content":[{"type":"text","text":"Error: tool calls are nested more than 64 deep"}]}`,
			next: `{}`, wantNext: `{"isError":false,"value":"ran","content":[{"type":"text","text":"ran"}]}`,
		},
		{
			name: "a fan-out of 8 nested calls per level, 6 levels deep, fails at the root's budget",
			file: "fan.js", src: fanPlugin, tool: "fan", hostile: `{"level":0}`,
			want: `{"isError":true,"error":{"message":"the call \"c1\" made more than 1000 nested tool calls"},"content":[{"type":"text","text":"Error: the call \"c1\" made more than 1000 nested tool calls"}]}`,
			next: `{"level":4}`, wantNext: `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name+", and the next call is served", func(t *testing.T) {
			e := load(t, map[string]string{c.file: c.src})
			if len(e.diags) > 0 {
				t.Fatalf("diagnostics %q", e.diagnostics())
			}
			start := time.Now()
			if got := e.call(t, c.tool, args(t, c.hostile)); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
			// A hang detector, generous for -race on a loaded machine.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the failure took %v", d)
			}
			if got := e.call(t, c.tool, args(t, c.next)); got != c.wantNext {
				t.Errorf("the next call: %s", strings.TrimSpace(got))
			}
		})
	}
}
