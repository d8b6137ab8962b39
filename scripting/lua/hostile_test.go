package lua_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// spinPlugin's tool spins in the way its spin argument names, under a 50 ms
// timeout, and otherwise returns the id of the instance serving it.
const spinPlugin = `
local dsh = require("dsh")
local me = tostring({})
local parked = coroutine.create(function() while true do end end)
local ways = {
  pcall = function() while true do pcall(function() while true do end end) end end,
  ["return-pcall"] = function() return pcall(function() while true do end end) end,
  xpcall = function() return xpcall(function() while true do end end, function() while true do end end) end,
  coroutine = function() coroutine.wrap(function() while true do pcall(function() while true do end end) end end)() end,
  parked = function() coroutine.resume(parked) end,
  pattern = function() return string.find(string.rep("a", 1000), ".-.-.-b") end,
}
dsh.tools.register(dsh.define_tool {
  name = "spin", description = "", parameters = { spin = { type = "string" } },
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  timeout_ms = 50,
  execute = function(args)
    if args.spin then ways[args.spin]() return "escaped" end
    return me
  end,
})
`

func TestABodyThatNeverEndsIsInterruptedAndItsInstanceReplaced(t *testing.T) {
	e := load(t, map[string]string{"spin.lua": spinPlugin})
	noDiags(t, e)
	timedOut := `{"isError":true,"error":{"message":"tool call timed out after 50ms","info":{"name":"ToolTimeoutError","code":"TOOL_TIMEOUT"}},"content":[{"type":"text","text":"Error: tool call timed out after 50ms"}]}`
	before := e.value(t, "spin", nil)
	for _, way := range []string{"pcall", "return-pcall", "xpcall", "coroutine", "parked", "pattern"} {
		t.Run("while true do end through "+way+" times out", func(t *testing.T) {
			start := time.Now()
			hosttest.Want(t, e.call(t, "spin", dsl.NewObject(dsl.Member{Key: "spin", Value: way})), timedOut)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			after := e.value(t, "spin", nil)
			if after == before {
				t.Errorf("the next call was served by the interrupted instance %s", before)
			}
			before = after
		})
	}
}

func TestAListenerThatNeverEndsIsCutByTheListenerDeadlineAndFailsClosed(t *testing.T) {
	e := load(t, map[string]string{
		"t.lua": tool("t", `{ type = "string" }`, `return "ran"`),
		"p.lua": `
local dsh = require("dsh")
local calls = 0
dsh.on("tools/pre-execute", function(exec, next)
  if exec.name == "calls" then return next() end
  calls = calls + 1
  if exec.arguments.spin then while true do pcall(function() while true do end end) end end
  return next()
end)
dsh.tools.register { name = "calls", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function() return calls end }
`,
	}, func(h *lua.Host, _ *engine.Service) { h.ListenerTimeout = 50 * time.Millisecond })
	noDiags(t, e)
	e.call(t, "t", nil)
	hosttest.Want(t, e.value(t, "calls", nil), `1`)
	hosttest.Want(t, e.call(t, "t", args(t, `{"spin":true}`)), hosttest.Failure("a tools/pre-execute listener timed out after 50ms", ""))
	t.Run("the next call is served by a fresh instance", func(t *testing.T) {
		hosttest.Want(t, e.call(t, "t", nil), `{"isError":false,"value":"ran","content":[{"type":"text","text":"rendered"}]}`)
		hosttest.Want(t, e.value(t, "calls", nil), `1`) // a fresh instance counts from zero
	})
}

// A top level in an endless loop is interrupted at the load deadline: see
// scripting/internal/hosttest, which runs it for both hosts.

func TestScriptsThatMisbehave(t *testing.T) {
	t.Run("a top level that fails registers nothing, is reported at its line, and the others load", func(t *testing.T) {
		e := load(t, map[string]string{
			"good.lua": tool("good", `{ type = "string" }`, `return "ok"`),
			"bad.lua":  "local dsh = require(\"dsh\")\nlocal x = 1\nerror(\"broken at top\")\n",
		})
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "bad.lua:3: broken at top")
		hosttest.Want(t, e.call(t, "good", nil), `{"isError":false,"value":"ok","content":[{"type":"text","text":"rendered"}]}`)
	})
	t.Run("a script that registers then errors has its registrations rolled back", func(t *testing.T) {
		e := load(t, map[string]string{"half.lua": tool("half", `{ type = "string" }`, `return "x"`) + "\nerror({ message = \"after registering\" })\n"})
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "half.lua:11: after registering")
		if e.svc.Global().Get("half") != nil {
			t.Error("the tool of a plugin that failed is registered")
		}
	})
	t.Run("a syntax error is reported at its line and column", func(t *testing.T) {
		e := load(t, map[string]string{"syntax.lua": "local a = 1\nlocal = 3\n", "eof.lua": "if x then\n  y = 1\n"})
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "eof.lua:3: syntax error at the end of the file\nsyntax.lua:2:7: syntax error near '='")
	})
	t.Run("a binary chunk is refused, as a plugin and through load", func(t *testing.T) {
		e := load(t, map[string]string{
			"bin.lua":  "\x1bLua\x51\x00",
			"load.lua": tool("loader", `{ type = "json" }`, `local f, err = load("\27Lua\81\0\1\4") return { f == nil, err }`),
		})
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "bin.lua: attempt to load a binary chunk (only text chunks can be loaded)")
		hosttest.Want(t, e.value(t, "loader", nil), `[true,"<string>: attempt to load a binary chunk (only text chunks can be loaded)"]`)
	})
	t.Run("os and io cannot be required and are not there", func(t *testing.T) {
		e := load(t, map[string]string{"libs.lua": tool("libs", `{ type = "json" }`, `
			local r = {}
			for _, name in ipairs({ "os", "io", "debug", "package" }) do
			  local ok, err = pcall(require, name)
			  r[name] = ok and "required" or "refused"
			end
			r.io = r.io .. (io == nil and ",absent" or ",present")
			r.exec = os.execute == nil and os.getenv == nil and os.exit == nil and "absent" or "present"
			r.dofile = (dofile == nil and loadfile == nil and string.dump == nil) and "absent" or "present"
			return r`)})
		noDiags(t, e)
		hosttest.Want(t, e.value(t, "libs", nil), `{"debug":"refused","dofile":"absent","exec":"absent","io":"refused,absent","os":"refused","package":"refused"}`)
	})
	t.Run("infinite recursion is a script error, not a crash", func(t *testing.T) {
		e := load(t, map[string]string{"rec.lua": tool("rec", `{ type = "string" }`, `
			if args.how == "pcall" then local function f() local ok, err = pcall(f) error(err, 0) end return f() end
			if args.how == "metamethod" then local t = setmetatable({}, {}) getmetatable(t).__index = function(s, k) return s[k] end return t.x end
			if args.how == "none" then return "fine" end
			local function f(n) return f(n + 1) + 1 end
			return f(0)`, "timeout_ms = 2000,"), "deep.lua": "local function f(n) return 1 + f(n + 1) end\nf(0)\n"})
		if got := strings.Join(e.diagnostics(), "\n"); !strings.HasPrefix(got, "deep.lua:1: ") || !strings.Contains(got, "stack overflow") {
			t.Errorf("diagnostics %q", got)
		}
		for _, how := range []string{"plain", "pcall", "metamethod"} {
			got := e.call(t, "rec", dsl.NewObject(dsl.Member{Key: "how", Value: how}))
			// With the pcall variant gopher-lua loses the body's error (see
			// notes/LUA.md): the call still fails, as invalid output.
			if !strings.HasPrefix(got, `{"isError":true,"error":{"message":"`) || how != "pcall" && !strings.Contains(got, "stack overflow") {
				t.Errorf("%s: %s", how, got)
			}
		}
		hosttest.Want(t, e.call(t, "rec", dsl.NewObject(dsl.Member{Key: "how", Value: "none"})), `{"isError":false,"value":"fine","content":[{"type":"text","text":"rendered"}]}`)
	})
	t.Run("a tool named __index works", func(t *testing.T) {
		e := load(t, map[string]string{"a.lua": tool("__index", `{ type = "string" }`, `return "index"`),
			"b.lua": tool("__newindex", `{ type = "string" }`, `return "newindex"`)})
		noDiags(t, e)
		hosttest.Want(t, e.value(t, "__index", nil), `"index"`)
		hosttest.Want(t, e.value(t, "__newindex", nil), `"newindex"`)
	})
	t.Run("a polluted _G changes nothing for the host", func(t *testing.T) {
		e := load(t, map[string]string{"g.lua": `
local dsh = require("dsh")
local register, define, null = dsh.tools.register, dsh.define_tool, dsh.null
rawset(_G, "print", nil)
rawset(_G, "require", nil)
rawset(dsh, "null", "not null")
setmetatable(_G, { __index = function(_, k) error("read " .. tostring(k)) end, __newindex = function(_, k) error("wrote " .. tostring(k)) end })
register(define { name = "g", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return { { type = "text", text = "fine" } } end },
  execute = function(args, exec) return { exec.name, null } end })
register { name = "trap", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function() return undefined_global end }
`})
		noDiags(t, e)
		hosttest.Want(t, e.call(t, "g", nil), `{"isError":false,"value":["g",null],"content":[{"type":"text","text":"fine"}]}`)
		hosttest.Want(t, e.call(t, "trap", nil), hosttest.Failure("read undefined_global", ""))
	})
	t.Run("one plugin cannot change another's strings", func(t *testing.T) {
		e := load(t, map[string]string{
			"a.lua": tool("a", `{ type = "json" }`, `
				local r = {}
				r.meta = getmetatable("")
				r.assign = select(2, pcall(function() getmetatable("").__index = { upper = function() return "hacked" end } end))
				r.setmeta = select(2, pcall(setmetatable, "", {}))
				string.upper = function() return "hacked" end
				r.own = ("x"):upper()
				return r`),
			"b.lua": tool("b", `{ type = "string" }`, `return ("x"):upper()`),
		})
		noDiags(t, e)
		a := e.value(t, "a", nil)
		if !strings.Contains(a, `"meta":"protected"`) || !strings.Contains(a, `"own":"hacked"`) {
			t.Errorf("a: %s", a)
		}
		hosttest.Want(t, e.value(t, "b", nil), `"X"`)
	})
	t.Run("a guard that throws fails closed", func(t *testing.T) {
		e := load(t, map[string]string{"t.lua": tool("t", `{ type = "string" }`, `return "ran"`),
			"g.lua": `require("dsh").tools.guard(function(exec) local t = nil; return t.x end)`})
		hosttest.Want(t, e.call(t, "t", nil), hosttest.Failure(`g.lua:1: attempt to index a non-table object(nil) with key 'x' (plugin "g.lua")`, ""))
	})
}

func TestADirectoryWithBrokenFilesStillLoadsTheGoodOnes(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"a_good.lua": tool("good", `{ type = "string" }`, `return "ok"`),
		"b_bad.lua":  "error('b')",
		"c_dup.lua":  tool("good", `{ type = "string" }`, `return "dup"`),
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := loadDir(t, root)
	hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), "b_bad.lua:1: b\n"+
		"c_dup.lua:2: tool \"good\" is already registered (for a per-agent variant, register through that agent's scope, `tools.scope(id)`, instead)")
	hosttest.Want(t, e.value(t, "good", nil), `"ok"`)
}

func TestARendererThatNeverEndsIsCutByItsOwnDeadline(t *testing.T) {
	e := load(t, map[string]string{"r.lua": `
local dsh = require("dsh")
local me = tostring({})
dsh.tools.register(dsh.define_tool {
  name = "r", description = "", parameters = { spin = { type = "string" } },
  output = {
    schema = { type = "string" },
    render = function(args, v) if args.spin == "render" then while true do end end return { { type = "text", text = v } } end,
    presentation_meta = function(args, v) if args.spin == "meta" then while true do pcall(function() while true do end end) end end return { ok = true } end,
  },
  execute = function(args) return me end,
})
`}, func(h *lua.Host, _ *engine.Service) { h.ListenerTimeout = 50 * time.Millisecond })
	noDiags(t, e)
	first := e.value(t, "r", nil)
	hosttest.Want(t, e.call(t, "r", args(t, `{"spin":"render"}`)),
		hosttest.Failure(`tool "r" returned invalid output: output.render failed: tool "r" output.render timed out after 50ms`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	second := e.value(t, "r", nil)
	if second == first {
		t.Error("the call after the cut was served by the interrupted instance")
	}
	hosttest.Want(t, e.call(t, "r", args(t, `{"spin":"meta"}`)),
		hosttest.Failure(`tool "r" returned invalid output: output.presentationMeta failed: tool "r" output.presentationMeta timed out after 50ms`, hosttest.Info("ToolOutputError", "INVALID_TOOL_OUTPUT")))
	hosttest.Want(t, e.call(t, "r", args(t, `{"spin":"none"}`)), `{"isError":false,"value":`+e.value(t, "r", nil)+`,"content":[{"type":"text","text":`+e.value(t, "r", nil)+`}],"meta":{"ok":true}}`)
}
