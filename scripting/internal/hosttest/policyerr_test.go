package hosttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// warnings records the warnings a logger writes, one line each:
// "<msg> | plugin=<p> tool=<t> callId=<c>".
type warnings struct{ syncbuf.Buffer }

func (w *warnings) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func (w *warnings) lines(t *testing.T) string {
	t.Helper()
	var out []string
	for _, ln := range strings.Split(strings.TrimSpace(w.String()), "\n") {
		if ln == "" {
			continue
		}
		var r struct{ Msg, Plugin, Tool, CallID string }
		if err := json.Unmarshal([]byte(ln), &r); err != nil {
			t.Fatalf("log line %q: %v", ln, err)
		}
		out = append(out, r.Msg+" | plugin="+r.Plugin+" tool="+r.Tool+" callId="+r.CallID)
	}
	return strings.Join(out, "\n")
}

// textTool registers "t", whose text argument is required.
var textTool = hosttest.Source{
	JS: `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "t", description: "", parameters: { text: { type: "string", required: true } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute(args) { return args.text; },
}));
`,
	Lua: `local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "t", description = "", parameters = { text = { type = "string", required = true } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args) return args.text end,
})
`,
}

// A policy that fails names where: the log line always gives the plugin,
// the file and the line; the failure the model sees keeps the spec's text
// for an error the script raised on purpose (pipeline spec §1.9, §6 57, 60,
// 73, 80) and gives the location for one the interpreter raised (a bug in
// the plugin, which no spec text pins).
func TestAPolicyFailureNamesItsPluginFileAndLine(t *testing.T) {
	type row struct {
		name  string
		files map[string]hosttest.Source // besides tool.<ext>; "policy" is the plugin
		args  string
		want  hosttest.Source // the result's JSON
		logs  hosttest.Source // the warnings
	}
	located := func(msg string) string { return hosttest.Failure(msg, "") }
	invalid := hosttest.Failure(`invalid arguments: missing required property "text"`, hosttest.Info("ToolArgsError", "INVALID_ARGS"))
	preFault := hosttest.Source{
		JS: `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => {
  if (exec.arguments.cmd.startsWith("rm")) return { kind: "deny", reason: "no" };
  return next();
});
`,
		Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next)
  if exec.arguments.cmd:find("rm") then return { kind = "deny", reason = "no" } end
  return next()
end)
`,
	}
	rows := []row{
		{
			name:  "a pre-execute listener that indexes a missing argument",
			files: map[string]hosttest.Source{"policy": preFault},
			args:  `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`policy.js:3:22: TypeError: Cannot read property 'startsWith' of undefined or null (plugin "policy.js")`),
				Lua: located(`policy.lua:3: attempt to index a non-table object(nil) with key 'find' (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: policy.js:3:22: TypeError: Cannot read property 'startsWith' of undefined or null (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: policy.lua:3: attempt to index a non-table object(nil) with key 'find' (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name:  "the same listener on arguments that fail validation reports them, and logs its crash",
			files: map[string]hosttest.Source{"policy": preFault},
			args:  `{}`,
			want:  hosttest.Source{JS: invalid, Lua: invalid},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: policy.js:3:22: TypeError: Cannot read property 'startsWith' of undefined or null (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: policy.lua:3: attempt to index a non-table object(nil) with key 'find' (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a guard that indexes a missing argument",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { tools } = require("dsh");
tools.guard((exec) => exec.arguments.cmd.length > 3 ? "too long" : undefined);
`,
				Lua: `local dsh = require("dsh")
dsh.tools.guard(function(exec) if #exec.arguments.cmd > 3 then return "too long" end end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`policy.js:2:42: TypeError: Cannot read property 'length' of undefined (plugin "policy.js")`),
				Lua: located(`policy.lua:2: __len undefined (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a guard failed: policy.js:2:42: TypeError: Cannot read property 'length' of undefined (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a guard failed: policy.lua:2: __len undefined (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a tools/execute wrapper that calls a missing function",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/execute", async (exec, next) => {
  exec.arguments.cmd();
  return next();
});
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/execute", function(exec, next)
  exec.arguments.cmd()
  return next()
end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`policy.js:3:18: TypeError: Object has no member 'cmd' (plugin "policy.js")`),
				Lua: located(`policy.lua:3: attempt to call a non-function object (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a tools/execute wrapper failed: policy.js:3:18: TypeError: Object has no member 'cmd' (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/execute wrapper failed: policy.lua:3: attempt to call a non-function object (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a post-execute listener that indexes a missing field of the result",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/post-execute", async (exec, result, next) => {
  if (result.meta.secret) return { kind: "block", feedback: [] };
  return next();
});
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/post-execute", function(exec, result, next)
  if result.meta.secret then return { kind = "block", feedback = dsh.array {} } end
  return next()
end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`policy.js:3:19: TypeError: Cannot read property 'secret' of undefined (plugin "policy.js")`),
				Lua: located(`policy.lua:3: attempt to index a non-table object(nil) with key 'secret' (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a tools/post-execute listener failed: policy.js:3:19: TypeError: Cannot read property 'secret' of undefined (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/post-execute listener failed: policy.lua:3: attempt to index a non-table object(nil) with key 'secret' (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a fault in a module the plugin requires names the module and the plugin",
			files: map[string]hosttest.Source{
				"policy": {
					JS: `const { on } = require("dsh");
const { check } = require("./lib/check");
on("tools/pre-execute", async (exec, next) => { check(exec.arguments); return next(); });
`,
					Lua: `local dsh = require("dsh")
local check = require("lib.check")
dsh.on("tools/pre-execute", function(exec, next) check.check(exec.arguments) return next() end)
`,
				},
				"lib/check": {
					JS: `exports.check = (args) => {
  return args.cmd.trim();
};
`,
					Lua: `local M = {}
function M.check(args)
  return args.cmd:upper()
end
return M
`,
				},
			},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`lib/check.js:2:15: TypeError: Cannot read property 'trim' of undefined or null (plugin "policy.js")`),
				Lua: located(`lib/check.lua:3: attempt to index a non-table object(nil) with key 'upper' (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: lib/check.js:2:15: TypeError: Cannot read property 'trim' of undefined or null (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: lib/check.lua:3: attempt to index a non-table object(nil) with key 'upper' (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "an error thrown on purpose keeps the spec's exact text; the log says where",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => {
  throw new Error("gate interrupted");
});
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next)
  error("gate interrupted")
end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{JS: located("gate interrupted"), Lua: located("gate interrupted")},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: policy.js:3:9: gate interrupted (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: policy.lua:3: gate interrupted (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a coded error keeps its message and info",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { tools } = require("dsh");
tools.guard((exec) => {
  const e = new Error("guard store is down"); e.name = "HarnessError"; e.code = "DENIED"; throw e;
});
`,
				Lua: `local dsh = require("dsh")
dsh.tools.guard(function(exec)
  error({ name = "HarnessError", code = "DENIED", message = "guard store is down" })
end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  hosttest.Failure("guard store is down", hosttest.Info("HarnessError", "DENIED")),
				Lua: hosttest.Failure("guard store is down", hosttest.Info("HarnessError", "DENIED")),
			},
			logs: hosttest.Source{
				JS:  `a guard failed: policy.js:3:13: guard store is down (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a guard failed: policy.lua:3: guard store is down (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a failure that comes back through an outer listener's next() is logged once, where it was raised, and keeps its info",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => { const d = await next(); return d; });
on("tools/pre-execute", async (exec, next) => {
  const e = new Error("policy store is down"); e.name = "HarnessError"; e.code = "POLICY_FAILED"; throw e;
});
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next) local d = next() return d end)
dsh.on("tools/pre-execute", function(exec, next)
  error({ name = "HarnessError", code = "POLICY_FAILED", message = "policy store is down" })
end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  hosttest.Failure("policy store is down", hosttest.Info("HarnessError", "POLICY_FAILED")),
				Lua: hosttest.Failure("policy store is down", hosttest.Info("HarnessError", "POLICY_FAILED")),
			},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: policy.js:4:13: policy store is down (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: policy.lua:4: policy store is down (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a fault that comes back through an outer listener's next() keeps its location",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => next());
on("tools/pre-execute", async (exec, next) => exec.arguments.cmd.x);
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next) return next() end)
dsh.on("tools/pre-execute", function(exec, next) return exec.arguments.cmd.x end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`policy.js:3:66: TypeError: Cannot read property 'x' of undefined (plugin "policy.js")`),
				Lua: located(`policy.lua:3: attempt to index a non-table object(nil) with key 'x' (plugin "policy.lua")`),
			},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: policy.js:3:66: TypeError: Cannot read property 'x' of undefined (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: policy.lua:3: attempt to index a non-table object(nil) with key 'x' (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
		{
			name: "a listener that returns no decision fails closed with the spec's message, and is logged",
			files: map[string]hosttest.Source{"policy": {
				JS: `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => ({ kind: "permit" }));
`,
				Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next) return { kind = "permit" } end)
`,
			}},
			args: `{"text":"hi"}`,
			want: hosttest.Source{
				JS:  located(`tools/pre-execute listener returned an invalid decision: unknown kind "permit"`),
				Lua: located(`tools/pre-execute listener returned an invalid decision: unknown kind "permit"`),
			},
			logs: hosttest.Source{
				JS:  `a tools/pre-execute listener failed: tools/pre-execute listener returned an invalid decision: unknown kind "permit" (plugin "policy.js") | plugin=policy.js tool=t callId=c1`,
				Lua: `a tools/pre-execute listener failed: tools/pre-execute listener returned an invalid decision: unknown kind "permit" (plugin "policy.lua") | plugin=policy.lua tool=t callId=c1`,
			},
		},
	}
	for _, lang := range hosttest.Langs() {
		for _, r := range rows {
			t.Run(lang.Name+"/"+r.name, func(t *testing.T) {
				files := map[string]string{lang.File("tool"): textTool.In(lang)}
				for base, src := range r.files {
					files[lang.File(base)] = src.In(lang)
				}
				var w warnings
				e := hosttest.Load(t, lang, hosttest.Config{Logger: w.logger()}, files)
				e.NoDiagnostics(t)
				hosttest.Want(t, e.CallJSON(t, context.Background(), "t", hosttest.Args(t, r.args)), r.want.In(lang))
				hosttest.Want(t, w.lines(t), r.logs.In(lang))
			})
		}
	}
}

// Rows for one language's own ways of raising.
func TestWhatCountsAsRaisedOnPurpose(t *testing.T) {
	rows := []struct {
		lang      hosttest.Lang
		name, src string
		want      string
	}{
		{hosttest.Lua, "a failed assert with a message is the script's own", `dsh.tools.guard(function(exec) assert(exec.arguments.cmd, "cmd is required") end)`,
			hosttest.Failure("cmd is required", "")},
		{hosttest.Lua, "error at level 2 is the script's own", `local function need(v) if not v then error("cmd is required", 2) end end
dsh.tools.guard(function(exec) need(exec.arguments.cmd) end)`,
			hosttest.Failure("cmd is required", "")},
		{hosttest.Lua, "a runtime error caught and rethrown with error(e, 0) is the script's own", `dsh.tools.guard(function(exec)
  local ok, e = pcall(function() return exec.arguments.cmd.x end)
  if not ok then error(e, 0) end
end)`,
			hosttest.Failure("attempt to index a non-table object(nil) with key 'x'", "")},
		{hosttest.Lua, "a caught error() does not make a later runtime error the script's", `dsh.tools.guard(function(exec)
  pcall(error, "caught")
  return exec.arguments.cmd.x
end)`,
			hosttest.Failure(`policy.lua:4: attempt to index a non-table object(nil) with key 'x' (plugin "policy.lua")`, "")},
		{hosttest.JS, "a thrown string is the script's own", `tools.guard((exec) => { throw "no cmd"; });`,
			hosttest.Failure("no cmd", "")},
		{hosttest.JS, "a TypeError the script throws reads like the interpreter's: the language's own types are located", `tools.guard((exec) => { throw new TypeError("cmd must be a string"); });`,
			hosttest.Failure(`policy.js:2:31: TypeError: cmd must be a string (plugin "policy.js")`, "")},
	}
	for _, r := range rows {
		t.Run(r.lang.Name+"/"+r.name, func(t *testing.T) {
			head := `const { tools } = require("dsh");` + "\n"
			if r.lang.Name == hosttest.Lua.Name {
				head = `local dsh = require("dsh")` + "\n"
			}
			e := hosttest.Load(t, r.lang, hosttest.Config{}, map[string]string{
				r.lang.File("tool"): textTool.In(r.lang), r.lang.File("policy"): head + r.src + "\n"})
			e.NoDiagnostics(t)
			hosttest.Want(t, e.CallJSON(t, context.Background(), "t", hosttest.Args(t, `{"text":"hi"}`)), r.want)
		})
	}
}

// A TypeScript policy's fault is located in its .ts file, at the original
// line, through the source map.
func TestATypeScriptPolicyFaultIsLocatedInItsSource(t *testing.T) {
	var w warnings
	e := hosttest.Load(t, hosttest.JS, hosttest.Config{Logger: w.logger()}, map[string]string{
		"tool.js": textTool.JS,
		"policy.ts": `import { on } from "dsh";

interface Args {
  text: string;
  cmd?: string;
}

on("tools/pre-execute", async (exec: { arguments: Args }, next: () => Promise<unknown>) => {
  const words: string[] = exec.arguments.cmd!.split(" ");
  return words.length > 9 ? { kind: "deny", reason: "too many words" } : next();
});
`,
	})
	e.NoDiagnostics(t)
	const msg = `policy.ts:9:42: TypeError: Cannot read property 'split' of undefined or null (plugin "policy.ts")`
	hosttest.Want(t, e.CallJSON(t, context.Background(), "t", hosttest.Args(t, `{"text":"hi"}`)), hosttest.Failure(msg, ""))
	hosttest.Want(t, w.lines(t), "a tools/pre-execute listener failed: "+msg+" | plugin=policy.ts tool=t callId=c1")
}

// A listener past its deadline on a call whose arguments fail validation:
// the call reports the arguments, and the timeout is logged.
func TestAListenerPastItsDeadlineOnInvalidArgumentsReportsThem(t *testing.T) {
	never := hosttest.Source{
		JS: `const { on } = require("dsh");
on("tools/pre-execute", (exec, next) => new Promise(() => {}));
`,
		Lua: `local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next) while true do end end)
`,
	}
	timeout := testtime.D(50 * time.Millisecond)
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			var w warnings
			e := hosttest.Load(t, lang, hosttest.Config{Logger: w.logger(), ListenerTimeout: timeout},
				map[string]string{lang.File("tool"): textTool.In(lang), lang.File("policy"): never.In(lang)})
			e.NoDiagnostics(t)
			hosttest.Want(t, e.CallJSON(t, context.Background(), "t", hosttest.Args(t, `{}`)),
				hosttest.Failure(`invalid arguments: missing required property "text"`, hosttest.Info("ToolArgsError", "INVALID_ARGS")))
			hosttest.Want(t, w.lines(t), fmt.Sprintf(`a tools/pre-execute listener failed: a tools/pre-execute listener timed out after %dms (plugin "%s") | plugin=%s tool=t callId=c1`,
				timeout.Milliseconds(), lang.File("policy"), lang.File("policy")))
		})
	}
}
