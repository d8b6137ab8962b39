package hosttest_test

import (
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// spinningTopLevel never ends, and catches what it can on the way.
var spinningTopLevel = hosttest.Source{
	JS:  "try { while (true) {} } catch (e) {}\n",
	Lua: "while true do pcall(function() while true do end end) end\n",
}

// okPlugin registers "ok", which answers "ok".
var okPlugin = hosttest.Source{
	JS: `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "ok", description: "test", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute() { return "ok"; },
}));
`,
	Lua: `local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "ok", description = "test", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return "ok" end,
})
`,
}

func TestATopLevelInAnEndlessLoopIsInterruptedAtTheLoadDeadline(t *testing.T) {
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			// The deadline leaves a healthy top level room under the race
			// detector on a busy 2-core machine (at 50ms ok.js missed it,
			// at 250ms it did too, now and then).
			deadline := testtime.D(time.Second)
			start := time.Now()
			e := hosttest.Load(t, lang, hosttest.Config{Grace: 10 * time.Millisecond, LoadTimeout: deadline, Bare: true},
				map[string]string{lang.File("spin"): spinningTopLevel.In(lang), lang.File("ok"): okPlugin.In(lang)})
			if d := time.Since(start); d < deadline || d > testtime.D(5*time.Second) {
				t.Errorf("loading took %v, with a load deadline of %v", d, deadline)
			}
			// The diagnostic gives the deadline's value.
			want := lang.File("spin") + ": the top level did not finish within the load deadline (" + deadline.String() + ")"
			if got := e.Diagnostics(); len(got) != 1 || got[0] != want {
				t.Errorf("diagnostics %q, want [%q]", got, want)
			}
			if len(e.Loaded) != 1 || e.Service.Global().Get("ok") == nil {
				t.Error("the good plugin did not load")
			}
		})
	}
}

// A load deadline that passes before the top level even starts is reported
// as the load deadline, with its value, in both languages: in JavaScript at
// the transform (esbuild), which runs under the deadline before the top
// level.
func TestALoadDeadlineThatPassesBeforeTheTopLevelStarts(t *testing.T) {
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			e := hosttest.Load(t, lang, hosttest.Config{LoadTimeout: time.Nanosecond, Bare: true},
				map[string]string{lang.File("ok"): okPlugin.In(lang)})
			step := "the top level"
			if lang.Name == "js" {
				step = "the transform"
			}
			want := lang.File("ok") + ": " + step + " did not finish within the load deadline (1ns)"
			if got := e.Diagnostics(); len(got) != 1 || got[0] != want {
				t.Errorf("diagnostics %q, want [%q]", got, want)
			}
		})
	}
}
