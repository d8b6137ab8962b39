package lua_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// textModule is a host module for the tests: upper(s), waitFor(ms), which
// returns early when cancelled, fail(), and echoArgs(...).
var textModule = scripting.Module{Name: "text", Funcs: map[string]scripting.ModuleFunc{
	"upper": func(_ context.Context, args []any) (any, error) {
		s, ok := args[0].(string)
		if !ok {
			return nil, engine.NewError("Error", "EINVAL", "upper: the argument must be a string")
		}
		return strings.ToUpper(s), nil
	},
	"waitFor": func(ctx context.Context, args []any) (any, error) {
		select {
		case <-ctx.Done():
			return nil, engine.NewError("Error", "ECANCELED", "wait was cancelled")
		case <-time.After(5 * time.Second):
			return "waited", nil
		}
	},
	"fail":     func(context.Context, []any) (any, error) { return nil, errors.New("plain failure") },
	"echoArgs": func(_ context.Context, args []any) (any, error) { return args, nil },
	"bad":      func(context.Context, []any) (any, error) { return func() {}, nil },
}}

func withText(h *lua.Host, _ *engine.Service) { h.Modules = append(h.Modules, textModule) }

func TestHostModules(t *testing.T) {
	e := load(t, map[string]string{"m.lua": `
local dsh = require("dsh")
local text = require("dsh.text")
local results = {}
dsh.tools.register(dsh.define_tool {
  name = "mod", description = "", parameters = { case = { type = "string", required = true } },
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function(args, exec)
    local c = args.case
    if c == "upper" then return { text.upper("shout"), dsh.text.upper("same"), text == dsh.text } end
    if c == "coded" then local ok, err = pcall(text.upper, 1) return { ok, err.name, err.code, err.message, tostring(err) } end
    if c == "plain" then local ok, err = pcall(text.fail) return { ok, err.name, err.code or dsh.null, err.message } end
    if c == "uncaught" then text.fail() end
    if c == "args" then return text.echo_args(1, "two", { three = 3 }, { signal = exec.signal, keep = true }) end
    if c == "bad-args" then local ok, err = pcall(text.echo_args, print) return err.message end
    if c == "bad-result" then local ok, err = pcall(text.bad) return err.message end
    if c == "camel" then return { text.echoArgs == nil, type(text.echo_args), type(text.wait_for) } end
    if c == "wait" then local ok, err = pcall(text.wait_for, 1) return { ok, err.code, exec.signal.aborted() } end
    return "?"
  end,
})
`}, withText)
	noDiags(t, e)
	call := func(c string) string {
		return e.value(t, "mod", dsl.NewObject(dsl.Member{Key: "case", Value: c}))
	}
	t.Run("a host module is dsh.<name> and require(\"dsh.<name>\")", func(t *testing.T) {
		hosttest.Want(t, call("upper"), `["SHOUT","SAME",true]`)
	})
	t.Run("its functions have snake_case names", func(t *testing.T) {
		hosttest.Want(t, call("camel"), `[true,"function","function"]`)
	})
	t.Run("a coded error is raised as a table with its name, code and message", func(t *testing.T) {
		hosttest.Want(t, call("coded"), `[false,"Error","EINVAL","upper: the argument must be a string","upper: the argument must be a string"]`)
	})
	t.Run("a plain error is raised as a table with its message", func(t *testing.T) {
		hosttest.Want(t, call("plain"), `[false,"Error",null,"plain failure"]`)
		hosttest.Want(t, e.call(t, "mod", args(t, `{"case":"uncaught"}`)), hosttest.Failure("plain failure", ""))
	})
	t.Run("arguments arrive as JSON, a trailing options table without its signal", func(t *testing.T) {
		hosttest.Want(t, call("args"), `[1,"two",{"three":3},{"keep":true}]`)
	})
	t.Run("arguments and results that are not JSON are refused", func(t *testing.T) {
		hosttest.Want(t, call("bad-args"), `"dsh.text.echo_args: arguments[0]: a function is not lossless JSON"`)
		hosttest.Want(t, call("bad-result"), `"dsh.text.bad: value: func() is not lossless JSON"`)
	})
	t.Run("a blocking host call returns when its call is cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		r := e.svc.Call(ctx, engine.Input{CallID: "w", Name: "mod", Arguments: dsl.NewObject(dsl.Member{Key: "case", Value: "wait"})})
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the host call was not cancelled (%v)", d)
		}
		// The body's success after the cancellation is reported as such.
		hosttest.Want(t, marshal(t, r), hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
	})
	t.Run("an unknown host module is a diagnostic", func(t *testing.T) {
		e := load(t, map[string]string{"m.lua": "local x = 1\nrequire(\"dsh.nope\")\n"})
		hosttest.Want(t, strings.Join(e.diagnostics(), "\n"), `m.lua:2: module 'dsh.nope' not found: there is no such host module`)
	})
}

func TestTheCapabilityModulesWorkEndToEnd(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	mods, err := capability.Modules(capability.Config{Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, map[string]string{"caps.lua": `
local dsh = require("dsh")
dsh.tools.register(dsh.define_tool {
  name = "caps", description = "", parameters = {},
  output = { schema = { type = "json" }, render = function() return {} end },
  execute = function()
    local out = {}
    out.read = dsh.fs.read_file("notes.txt").content
    out.write = dsh.fs.write_file("sub/new.txt", "hello", { createDirs = true }).created
    out.stat = dsh.fs.stat("sub/new.txt").size
    local names = {}
    for k, entry in ipairs(dsh.fs.read_dir(".").entries) do names[k] = entry.name end
    out.dir = names
    out.glob = dsh.fs.glob("**/*.txt").paths
    local ok, err = pcall(dsh.fs.read_file, "../outside")
    out.outside = { ok, err.code }
    out.missing = select(2, pcall(dsh.fs.read_file, "nope.txt")).code
    out.join = dsh.path.join("a", "b", "../c.txt")
    out.ext = dsh.path.ext("x/y.lua")
    out.base = require("dsh.path").basename("x/y.lua")
    local run = dsh.process.run({ "sh", "-c", "printf hi; exit 3" })
    out.run = { run.stdout, run.exitCode }
    return out
  end,
})
`}, func(h *lua.Host, _ *engine.Service) { h.Modules = mods })
	noDiags(t, e)
	hosttest.Want(t, e.value(t, "caps", nil), `{"base":"y.lua","dir":["notes.txt","sub"],"ext":".lua","glob":["notes.txt","sub/new.txt"],"join":"a/c.txt","missing":"ENOENT","outside":[false,"EOUTSIDE"],"read":"one\ntwo\n","run":["hi",3],"stat":5,"write":true}`)
}
