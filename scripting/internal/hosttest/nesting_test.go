package hosttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// guardedPlugin is a tool and a tools/pre-execute listener that, when the
// call asks for it, tools.calls the tool it guards from inside the listener,
// and denies with the nested call's failure.
var guardedPlugin = hosttest.Source{
	JS: `const { defineTool, tools, on } = require("dsh");
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
`,
	Lua: `
local dsh = require("dsh")
local tools = dsh.tools
tools.register(dsh.define_tool {
  name = "guarded", description = "test", parameters = { recurse = { type = "boolean" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return "ran" end,
})
dsh.on("tools/pre-execute", function(exec, next)
  if exec.name ~= "guarded" or not exec.arguments.recurse then return next() end
  local r = tools.call("guarded", { recurse = true }, exec)
  if r.isError then return { kind = "deny", reason = r.error.message } end
  return next()
end)
`,
}

// fanPlugin is a tool that, below level 5, calls itself 8 times (at once in
// JavaScript, one after another in Lua) one level deeper: 37,448 nested
// calls under one root if nothing stops it.
var fanPlugin = hosttest.Source{
	JS: `const { defineTool, tools } = require("dsh");
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
`,
	Lua: `
local dsh = require("dsh")
local tools = dsh.tools
tools.register(dsh.define_tool {
  name = "fan", description = "test", parameters = { level = { type = "number" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args, exec)
    if args.level >= 5 then return "leaf" end
    for _ = 1, 8 do
      local r = tools.call("fan", { level = args.level + 1 }, exec)
      if r.isError then error(r.error.message, 0) end
    end
    return "ok"
  end,
})
`,
}

func TestNestedCallsAreBounded(t *testing.T) {
	cases := []struct {
		name, file                          string
		src                                 hosttest.Source
		tool, hostile, want, next, wantNext string
	}{
		{
			name: "a pre-execute listener that tools.calls the tool it guards fails at the nesting depth",
			file: "guarded", src: guardedPlugin, tool: "guarded", hostile: `{"recurse":true}`,
			want: `{"isError":true,"error":{"message":"tool calls are nested more than 64 deep"},"content":[{"type":"text","text":"Error: tool calls are nested more than 64 deep"}]}`,
			next: `{}`, wantNext: `{"isError":false,"value":"ran","content":[{"type":"text","text":"ran"}]}`,
		},
		{
			name: "a fan-out of 8 nested calls per level, 6 levels deep, fails at the root's budget",
			file: "fan", src: fanPlugin, tool: "fan", hostile: `{"level":0}`,
			want: `{"isError":true,"error":{"message":"the call \"c1\" made more than 1000 nested tool calls"},"content":[{"type":"text","text":"Error: the call \"c1\" made more than 1000 nested tool calls"}]}`,
			next: `{"level":4}`, wantNext: `{"isError":false,"value":"ok","content":[{"type":"text","text":"ok"}]}`,
		},
	}
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name+", and the next call is served", func(t *testing.T) {
					e := hosttest.Load(t, lang, hosttest.Config{}, map[string]string{lang.File(c.file): c.src.In(lang)})
					e.NoDiagnostics(t)
					start := time.Now()
					if got := e.CallJSON(t, context.Background(), c.tool, hosttest.Args(t, c.hostile)); got != c.want {
						t.Errorf("got  %s\nwant %s", got, c.want)
					}
					// A hang detector, generous for -race on a loaded machine.
					if d := time.Since(start); d > 30*time.Second {
						t.Errorf("the failure took %v", d)
					}
					if got := e.CallJSON(t, context.Background(), c.tool, hosttest.Args(t, c.next)); got != c.wantNext {
						t.Errorf("the next call: %s", strings.TrimSpace(got))
					}
				})
			}
		})
	}
}
