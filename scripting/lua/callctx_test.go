package lua_test

// A script's log lines carry the ctx of the call they are made for, and a
// tool body reports its progress through exec.progress.

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// callKey is the key of the value the tests put in the ctx they call with.
type callKey struct{}

// ctxLogs is a slog handler recording each line as "msg <- value", value
// being what its ctx holds under callKey ("-" for none).
type ctxLogs struct {
	mu    sync.Mutex
	lines []string
}

type ctxHandler struct{ logs *ctxLogs }

func (h ctxHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h ctxHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h ctxHandler) WithGroup(string) slog.Handler            { return h }
func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	v, ok := ctx.Value(callKey{}).(string)
	if !ok {
		v = "-"
	}
	h.logs.mu.Lock()
	defer h.logs.mu.Unlock()
	h.logs.lines = append(h.logs.lines, r.Message+" <- "+v)
	return nil
}

// take returns the lines logged so far and forgets them.
func (l *ctxLogs) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

// loadCtx loads files with a Lua host logging to logs, under ctx (the
// load's, which the top level must not log with).
func loadCtx(t *testing.T, ctx context.Context, logs *ctxLogs, files map[string]string) *engine.Service {
	t.Helper()
	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy())
	host := &lua.Host{ListenerTimeout: time.Second, Grace: 20 * time.Millisecond, Logger: slog.New(ctxHandler{logs})}
	hosttest.LoadPlugins(t, ctx, svc, host, files)
	return svc
}

func callCtx(name string) context.Context {
	return context.WithValue(context.Background(), callKey{}, name)
}

func TestScriptLogsCarryTheCallsContext(t *testing.T) {
	logs := &ctxLogs{}
	svc := loadCtx(t, callCtx("load"), logs, map[string]string{"logs.lua": `
local dsh = require("dsh")
dsh.log.info("top level")
print("top level print")
dsh.tools.guard(function(exec) dsh.log.info("guard") end)
dsh.on("tools/pre-execute", function(exec, next)
  dsh.log.info("pre-execute, exec.progress is " .. type(exec.progress))
  local d = next()
  dsh.log.info("pre-execute, after next()")
  return d
end)
dsh.on("tools/execute", function(exec, next)
  dsh.log.debug("execute wrapper")
  local r = next()
  dsh.log.warn("execute wrapper, after next()")
  return r
end)
dsh.on("tools/post-execute", function(exec, result, next)
  print("post-execute")
  return next()
end)
dsh.tools.register(dsh.define_tool {
  name = "probe", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return "probed" end,
})
dsh.tools.register(dsh.define_tool {
  name = "talk", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v)
    dsh.log.info("render")
    return { { type = "text", text = v } }
  end },
  execute = function(args, exec)
    dsh.log.info("body", { k = 1 })
    local co = coroutine.wrap(function() dsh.log.error("body, in a coroutine") end)
    co()
    dsh.tools.call("probe", {}, exec)
    print("body, after tools.call")
    return "said"
  end,
})
`})
	t.Run("the top level logs under the background, not the load's ctx", func(t *testing.T) {
		hosttest.Want(t, strings.Join(logs.take(), "\n"), "top level <- -\ntop level print <- -")
	})
	want := func(v string) string {
		lines := []string{
			"pre-execute, exec.progress is nil",
			"pre-execute, after next()",
			"guard",
			"execute wrapper",
			"body",
			"body, in a coroutine",
			// The nested call's listeners log under its ctx, made from
			// the body's.
			"pre-execute, exec.progress is nil",
			"pre-execute, after next()",
			"guard",
			"execute wrapper",
			"execute wrapper, after next()",
			"post-execute",
			"body, after tools.call",
			// A render made in the body's trip logs as the body.
			"render",
			"execute wrapper, after next()",
			"post-execute",
		}
		for k := range lines {
			lines[k] += " <- " + v
		}
		return strings.Join(lines, "\n")
	}
	t.Run("bodies, renders, listeners, wrappers and guards log under their call's ctx", func(t *testing.T) {
		r := svc.Call(callCtx("A"), engine.Input{CallID: "a", Name: "talk", Arguments: dsl.NewObject()})
		if r.IsError {
			t.Fatalf("the call failed: %s", hosttest.JSON(t, r))
		}
		hosttest.Want(t, strings.Join(logs.take(), "\n"), want("A"))
	})
	t.Run("two calls at once each log under their own ctx", func(t *testing.T) {
		var wg sync.WaitGroup
		for _, name := range []string{"B", "C"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				svc.Call(callCtx(name), engine.Input{CallID: name, Name: "talk", Arguments: dsl.NewObject()})
			}()
		}
		wg.Wait()
		count := map[string]int{}
		for _, l := range logs.take() {
			count[l[strings.LastIndex(l, " <- ")+4:]]++
		}
		if len(count) != 2 || count["B"] != 16 || count["C"] != 16 {
			t.Errorf("lines by ctx value: %v", count)
		}
	})
}

func TestExecProgress(t *testing.T) {
	logs := &ctxLogs{}
	svc := loadCtx(t, context.Background(), logs, map[string]string{"progress.lua": `
local dsh = require("dsh")
local kept
local function tool(name, execute)
  dsh.tools.register(dsh.define_tool {
    name = name, description = "", parameters = { how = { type = "string" } },
    output = { schema = { type = "json" }, render = function() return {} end },
    execute = execute,
  })
end
tool("steps", function(args, exec)
  local r = exec.progress(1)
  exec:progress(2, 4)
  exec.progress(3, 4, "three")
  exec:progress(3.5, nil, "half")
  exec.progress(-1, 0)
  kept = exec
  return tostring(r) .. " " .. select("#", exec.progress(4))
end)
tool("late", function()
  kept.progress(99, 100, "too late")
  kept:progress(99)
  return "no error"
end)
local cases = {
  none = function(exec) exec.progress() end,
  ["colon none"] = function(exec) exec:progress() end,
  string = function(exec) exec.progress("1") end,
  NaN = function(exec) exec.progress(0/0) end,
  infinity = function(exec) exec:progress(math.huge, 2) end,
  table = function(exec) exec.progress({}) end,
  ["negative total"] = function(exec) exec.progress(1, -1) end,
  ["NaN total"] = function(exec) exec:progress(1, 0/0) end,
  ["string total"] = function(exec) exec.progress(1, "4") end,
  ["infinite total"] = function(exec) exec.progress(1, -math.huge) end,
  ["number message"] = function(exec) exec.progress(1, 2, 3) end,
  ["false message"] = function(exec) exec:progress(1, nil, false) end,
}
tool("misuse", function(args, exec)
  local ok, err = pcall(cases[args.how], exec)
  if ok then return "no error" end
  return tostring(err)
end)
`})
	var progress hosttest.Progress
	progressCtx, reports := progress.Ctx, progress.Take
	call := func(t *testing.T, ctx context.Context, name string, args any) string {
		t.Helper()
		if args == nil {
			args = dsl.NewObject()
		}
		r := svc.Call(ctx, engine.Input{CallID: "c", Name: name, Arguments: args})
		return hosttest.JSON(t, r.JSON())
	}
	t.Run("a body's reports, with a dot or a colon, reach the ctx's progress function in order", func(t *testing.T) {
		got := call(t, progressCtx("steps"), "steps", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"nil 0","content":[]}`)
		hosttest.Want(t, reports(), `steps: 1/0 ""
steps: 2/4 ""
steps: 3/4 "three"
steps: 3.5/0 "half"
steps: -1/0 ""
steps: 4/0 ""
`)
	})
	t.Run("a report after the body settled is ignored", func(t *testing.T) {
		got := call(t, progressCtx("late"), "late", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"no error","content":[]}`)
		hosttest.Want(t, reports(), "")
	})
	t.Run("a call without a progress function reports to no one", func(t *testing.T) {
		got := call(t, context.Background(), "steps", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"nil 0","content":[]}`)
		hosttest.Want(t, reports(), "")
	})
	const (
		progressErr = "exec.progress(progress, total, message): progress must be a finite number"
		totalErr    = "exec.progress(progress, total, message): total must be a finite number >= 0"
		messageErr  = "exec.progress(progress, total, message): message must be a string"
	)
	for _, c := range []struct{ how, want string }{
		{"none", progressErr},
		{"colon none", progressErr},
		{"string", progressErr},
		{"NaN", progressErr},
		{"infinity", progressErr},
		{"table", progressErr},
		{"negative total", totalErr},
		{"NaN total", totalErr},
		{"string total", totalErr},
		{"infinite total", totalErr},
		{"number message", messageErr},
		{"false message", messageErr},
	} {
		t.Run("a call with "+c.how+" raises "+c.want, func(t *testing.T) {
			got := call(t, progressCtx("misuse"), "misuse", hosttest.Args(t, `{"how":"`+c.how+`"}`))
			hosttest.Want(t, got, `{"isError":false,"value":`+hosttest.JSON(t, c.want)+`,"content":[]}`)
			hosttest.Want(t, reports(), "")
		})
	}
}
