package lua_test

import (
	"testing"
	"time"
)

// guardedPlugin is a tool and a tools/pre-execute listener that, when the
// call asks for it, tools.calls the tool it guards from inside the listener,
// and denies with the nested call's failure.
const guardedPlugin = `
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
`

// fanPlugin is a tool that, below level 5, calls itself 8 times one level
// deeper: 37,448 nested calls under one root if nothing stops it.
const fanPlugin = `
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
`

func TestNestedCallsAreBounded(t *testing.T) {
	cases := []struct {
		name, file, src, tool, hostile, want, next, wantNext string
	}{
		{
			name: "a pre-execute listener that tools.calls the tool it guards fails at the nesting depth",
			file: "guarded.lua", src: guardedPlugin, tool: "guarded", hostile: `{"recurse":true}`,
			want: `{"isError":true,"error":{"message":"tool calls are nested more than 64 deep"},"content":[{"type":"text","text":"Error: tool calls are nested more than 64 deep"}]}`,
			next: `{}`, wantNext: `{"isError":false,"value":"ran","content":[{"type":"text","text":"ran"}]}`,
		},
		{
			name: "a fan-out of 8 nested calls per level, 6 levels deep, fails at the root's budget",
			file: "fan.lua", src: fanPlugin, tool: "fan", hostile: `{"level":0}`,
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
				t.Errorf("the next call: %s", got)
			}
		})
	}
}
