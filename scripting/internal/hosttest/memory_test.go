package hosttest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// hogPlugin registers "hog": with {"grow": true} it grows a module-level
// array (a table in Lua) forever, by 1 MiB strings so that it passes the
// limit fast even under the race detector; otherwise it answers "ok" with
// the array's length.
var hogPlugin = hosttest.Source{
	JS: `const { defineTool, tools } = require("dsh");
const kept = [];
tools.register(defineTool({
  name: "hog",
  description: "test",
  parameters: { grow: { type: "boolean" } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute(args) {
    if (args.grow) {
      const chunk = "x".repeat(1024 * 1024);
      for (;;) kept.push(chunk + kept.length);
    }
    return "ok " + kept.length;
  },
}));
`,
	Lua: `
local dsh = require("dsh")
local kept = {}
dsh.tools.register(dsh.define_tool {
  name = "hog", description = "", parameters = { grow = { type = "boolean" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args)
    if args.grow then
      local chunk = string.rep("x", 1024 * 1024)
      while true do kept[#kept + 1] = chunk .. #kept end
    end
    return "ok " .. #kept
  end,
})
`,
}

// hogTopLevel grows an array forever at its top level.
var hogTopLevel = hosttest.Source{
	JS:  "const kept = [], chunk = \"x\".repeat(1024 * 1024); for (;;) kept.push(chunk + kept.length);\n",
	Lua: "local kept, chunk = {}, string.rep('x', 1024 * 1024)\nwhile true do kept[#kept + 1] = chunk .. #kept end\n",
}

// waiterPlugin's "waiter" awaits a call of hog that grows: while it awaits it
// runs no script code, so the guard must not stop it. Only JavaScript has
// it: in Lua the nested call runs on the waiting caller's own stack, in the
// same state, so stopping it stops the caller too.
var waiterPlugin = hosttest.Source{
	JS: `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "waiter",
  description: "test",
  parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    const r = await tools.call("hog", { grow: true }, exec);
    return "survived: " + r.error.message;
  },
}));
`,
}

func TestAScriptPastTheMemoryLimitFailsItsCallAndTheNextCallIsServed(t *testing.T) {
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			guard, msg := hosttest.MemoryGuard(t, 96*scripting.MiB)
			cfg := hosttest.Config{Memory: guard}

			// Without the engine's timeout policy the body has no deadline:
			// the guard alone must be able to stop it.
			t.Run("a body without a deadline growing an array forever fails with the limit's message", func(t *testing.T) {
				bare := cfg
				bare.Bare = true
				e := hosttest.Load(t, lang, bare, map[string]string{lang.File("hog"): hogPlugin.In(lang)})
				e.NoDiagnostics(t)
				got := e.CallWithin(t, 30*time.Second, "hog", hosttest.Args(t, `{"grow":true}`))
				want := `{"isError":true,"error":{"message":"` + msg + `"},"content":[{"type":"text","text":"Error: ` + msg + `"}]}`
				if got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
				if got := e.CallWithin(t, 30*time.Second, "hog", nil); !strings.Contains(got, `"value":"ok 0"`) {
					t.Errorf("the next call is not served by a fresh instance: %s", got)
				}
				if live := hosttest.LiveHeapWithin(5*time.Second, guard.Limit()); live > guard.Limit() {
					t.Errorf("the live heap is %d MiB after the call failed: the script goes on, or its memory is held", live/scripting.MiB)
				}
			})
			t.Run("a top level growing an array forever is a diagnostic and the process lives on", func(t *testing.T) {
				// Loaded alone: a plugin whose top level ran beside it, as the
				// loader runs them, would be stopped too (see MemoryGuard).
				file := lang.File("load")
				e := hosttest.Load(t, lang, cfg, map[string]string{file: hogTopLevel.In(lang)})
				if got := e.Diagnostics(); len(got) != 1 || got[0] != file+": "+msg {
					t.Errorf("diagnostics %q, want [%q]", got, file+": "+msg)
				}
				e = hosttest.Load(t, lang, cfg, map[string]string{lang.File("hog"): hogPlugin.In(lang)})
				if got := e.CallWithin(t, 30*time.Second, "hog", nil); !strings.Contains(got, `"value":"ok 0"`) {
					t.Errorf("a plugin loaded next does not serve: %s", got)
				}
			})
			if waiterPlugin.In(lang) == "" {
				return
			}
			t.Run("a call awaiting the one that passes the limit is not stopped", func(t *testing.T) {
				e := hosttest.Load(t, lang, cfg, map[string]string{lang.File("hog"): hogPlugin.In(lang), lang.File("waiter"): waiterPlugin.In(lang)})
				e.NoDiagnostics(t)
				got := e.CallWithin(t, 30*time.Second, "waiter", nil)
				want := `{"isError":false,"value":"survived: ` + msg + `","content":[{"type":"text","text":"survived: ` + msg + `"}]}`
				if got != want {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			})
		})
	}
}
