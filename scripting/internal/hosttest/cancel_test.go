package hosttest_test

// Cancellation exactness (pipeline.md §3.3 D2, §3.5 F7, §3.9; scripting.md
// "Concurrency and deadlines"): a nested call whose body ignores its abort
// ends alone, as ABORTED once its body settles or as its timeout, and the
// call that made it runs on; an interrupt reaches the model as the spec's
// abort, never as an interpreter's message; a coded error a post-execute
// listener throws after an abort keeps its code.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// cancelGrace is the hosts' grace in these tests: long beside an ordinary
// stretch of script code, shorter than the waits the bodies make past it.
const cancelGrace = 100 * time.Millisecond

// outerJS and outerLua are the composite tool every case calls: it calls
// inner, and returns what it got, [isError, message, code, the texts of the
// contexts], and that it ran on.
const outerJS = `
const { defineTool, tools, on } = require("dsh");
const gate = require("dsh/gate");
const me = String(Math.random());
const json = { schema: { type: "json" }, render: () => [{ type: "text", text: "done" }] };
const text = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
tools.register(defineTool({ name: "id", description: "", parameters: {}, output: text, execute: () => me }));
tools.register(defineTool({
  name: "outer", description: "", parameters: {}, output: json,
  async execute(args, exec) {
    const r = await tools.call("inner", {}, exec);
    return [r.isError, r.error.message, r.error.info.code, r.additionalContexts.map((m) => m.content[0].text), "outer ran on"];
  },
}));
const defer = (exec, text) => exec.deferContext({ content: [{ type: "text", text }] });
`

const outerLua = `
local dsh = require("dsh")
local me = tostring({})
local json = { schema = { type = "json" }, render = function() return { { type = "text", text = "done" } } end }
local text = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end }
dsh.tools.register(dsh.define_tool { name = "id", description = "", parameters = {}, output = text, execute = function() return me end })
dsh.tools.register(dsh.define_tool {
  name = "outer", description = "", parameters = {}, output = json,
  execute = function(args, exec)
    local r = dsh.tools.call("inner", {}, exec)
    local texts = dsh.array()
    for _, m in ipairs(r.additionalContexts) do texts[#texts + 1] = m.content[1].text end
    return { r.isError, r.error.message, r.error.info.code, texts, "outer ran on" }
  end,
})
local function defer(exec, text) exec.defer_context({ content = { { type = "text", text = text } } }) end
local function spin_until_aborted(exec) while not exec.signal.aborted() do end end
`

// gates is what the Go side of a case offers its plugin: the module
// dsh/gate, whose started() tells the test a body got where it should be
// aborted and whose top() slows every top level after the first; and nap, a
// Go tool that tells the test it started, then sleeps ignoring its ctx (a
// started body is awaited after its abort) until its time is up or the
// test ends.
type gates struct {
	started chan struct{}
	napFor  time.Duration
	release chan struct{}

	mu      sync.Mutex
	tops    int
	napping int        // naps under way
	rested  *sync.Cond // signalled as each nap ends
}

func newGates(t *testing.T, napFor time.Duration) *gates {
	g := &gates{started: make(chan struct{}, 8), napFor: napFor, release: make(chan struct{})}
	g.rested = sync.NewCond(&g.mu)
	t.Cleanup(func() {
		close(g.release)
		g.mu.Lock()
		for g.napping > 0 {
			g.rested.Wait()
		}
		g.mu.Unlock()
	})
	return g
}

func (g *gates) module() scripting.Module {
	return scripting.Module{Name: "gate", Sync: true, Funcs: map[string]scripting.ModuleFunc{
		"started": func(context.Context, []any) (any, error) {
			g.started <- struct{}{}
			return nil, nil
		},
		"top": func(context.Context, []any) (any, error) {
			g.mu.Lock()
			g.tops++
			slow := g.tops > 1
			g.mu.Unlock()
			if slow {
				time.Sleep(2 * cancelGrace)
			}
			return nil, nil
		},
	}}
}

// register adds nap to svc, and (abortInner) a tools/execute wrapper that
// aborts the ctx it passes on for inner as soon as started reports.
func (g *gates) register(t *testing.T, abortInner bool) func(*engine.Service) {
	return func(svc *engine.Service) {
		nap := &engine.Definition{
			Name: "nap", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output: engine.Output{Schema: dsl.NewObject(), Render: func(any, any) ([]engine.Block, error) { return nil, nil }},
			Execute: func(context.Context, any, *engine.Run) (any, error) {
				g.mu.Lock()
				g.napping++
				g.mu.Unlock()
				defer func() {
					g.mu.Lock()
					g.napping--
					g.rested.Broadcast()
					g.mu.Unlock()
				}()
				g.started <- struct{}{}
				select {
				case <-time.After(g.napFor):
				case <-g.release:
				}
				return "napped", nil
			},
		}
		if _, err := svc.Global().Register(nap); err != nil {
			t.Fatal(err)
		}
		if !abortInner {
			return
		}
		svc.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			if exec.Name() != "inner" {
				return next(ctx), nil
			}
			abortable, abort := context.WithCancel(ctx)
			defer abort()
			go func() {
				select {
				case <-g.started:
					abort()
				case <-abortable.Done():
				}
			}()
			return next(abortable), nil
		})
	}
}

// ranOn is outer's result when inner failed with message and code, with
// the contexts texts, and outer ran on.
func ranOn(message, code, texts string) string {
	return `{"isError":false,"value":[true,"` + message + `","` + code + `",` + texts + `,"outer ran on"],"content":[{"type":"text","text":"done"}]}`
}

func TestANestedCallsCancellationEndsItAloneAndItsCallerRunsOn(t *testing.T) {
	aborted := ranOn("tool call aborted", "ABORTED", `["inner saw the abort"]`)
	cases := []struct {
		name       string
		inner      hosttest.Source // inner, after outer's source
		abortInner bool            // a Go wrapper aborts inner once gate.started() or nap says so
		napFor     time.Duration
		want       map[string]string // by language; a missing language does not run
		replaced   bool              // the next call is served by a fresh instance
	}{
		{
			name: "a nested call its wrapper aborts settles as ABORTED with its body's context once the body resolves, after the grace",
			inner: hosttest.Source{JS: `
let innerStarted; const started = new Promise((r) => { innerStarted = r; });
on("tools/execute", async (exec, next) => {
  if (exec.name !== "inner") return next();
  const c = new AbortController();
  const own = exec.signal;
  exec.signal = c.signal;
  const r = next();
  exec.signal = own;
  await started;
  c.abort();
  return r;
});
tools.register(defineTool({
  name: "inner", description: "", parameters: {}, output: text,
  async execute(args, exec) {
    innerStarted();
    await new Promise((resolve) => exec.signal.addEventListener("abort", resolve));
    defer(exec, "inner saw the abort");
    await new Promise((resolve) => setTimeout(resolve, 3 * 100));
    return "resolved after the abort";
  },
}));
`},
			want: map[string]string{"js": aborted},
		},
		{
			name: "a nested call aborted while its body waits in a call of its own settles as ABORTED with its body's context once the body returns",
			inner: hosttest.Source{JS: `
tools.register(defineTool({
  name: "inner", description: "", parameters: {}, output: text,
  async execute(args, exec) {
    await tools.call("nap", {}, exec);
    if (exec.signal.aborted) defer(exec, "inner saw the abort");
    return "returned after the abort";
  },
}));
`, Lua: `
dsh.tools.register(dsh.define_tool {
  name = "inner", description = "", parameters = {}, output = text,
  execute = function(args, exec)
    dsh.tools.call("nap", {}, exec)
    if exec.signal.aborted() then defer(exec, "inner saw the abort") end
    return "returned after the abort"
  end,
})
`},
			abortInner: true, napFor: 3 * cancelGrace,
			want: map[string]string{"js": aborted, "lua": aborted},
		},
		{
			name: "a nested call whose body runs on past its grace after the abort is stopped: alone in Lua; in JavaScript its interpreter, and the caller's call with it, fail as aborted",
			inner: hosttest.Source{JS: `
tools.register(defineTool({
  name: "inner", description: "", parameters: {}, output: text,
  async execute(args, exec) {
    const signal = exec.signal; // made before the abort, so it will abort
    gate.started();
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    defer(exec, "inner saw the abort");
    for (;;) {}
  },
}));
`, Lua: `
dsh.tools.register(dsh.define_tool {
  name = "inner", description = "", parameters = {}, output = text,
  execute = function(args, exec)
    dsh.gate.started()
    spin_until_aborted(exec)
    defer(exec, "inner saw the abort")
    while true do pcall(function() while true do end end) end
  end,
})
`},
			abortInner: true,
			want: map[string]string{
				// goja interrupts the whole runtime, which the caller's
				// script shares.
				"js":  hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")),
				"lua": aborted,
			},
			replaced: true,
		},
		{
			name: "a nested call past its deadline while its body waits fails alone with its timeout and its body's context",
			inner: hosttest.Source{JS: `
tools.register(defineTool({
  name: "inner", description: "", parameters: {}, output: text, timeoutMs: 50,
  async execute(args, exec) {
    defer(exec, "inner deferred before waiting");
    await tools.call("nap", {}, exec);
    return "returned past the deadline";
  },
}));
`, Lua: `
dsh.tools.register(dsh.define_tool {
  name = "inner", description = "", parameters = {}, output = text, timeout_ms = 50,
  execute = function(args, exec)
    defer(exec, "inner deferred before waiting")
    dsh.tools.call("nap", {}, exec)
    return "returned past the deadline"
  end,
})
`},
			napFor: 10 * cancelGrace,
			want: map[string]string{
				"js":  ranOn("tool call timed out after 50ms", "TOOL_TIMEOUT", `["inner deferred before waiting"]`),
				"lua": ranOn("tool call timed out after 50ms", "TOOL_TIMEOUT", `["inner deferred before waiting"]`),
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, lang := range hosttest.Langs() {
				want, ok := c.want[lang.Name]
				if !ok {
					continue
				}
				t.Run(lang.Name, func(t *testing.T) {
					g := newGates(t, c.napFor)
					src := outerJS + c.inner.JS
					if lang.Name == hosttest.Lua.Name {
						src = outerLua + c.inner.Lua
					}
					e := hosttest.Load(t, lang, hosttest.Config{Grace: cancelGrace, Modules: []scripting.Module{g.module()}},
						map[string]string{lang.File("p"): src}, g.register(t, c.abortInner))
					e.NoDiagnostics(t)
					before := e.CallJSON(t, context.Background(), "id", nil)
					hosttest.Want(t, e.CallJSON(t, context.Background(), "outer", nil), want)
					after := e.CallJSON(t, context.Background(), "id", nil)
					if c.replaced && after == before {
						t.Error("the next call was served by the instance in which a call was stopped")
					}
					if !c.replaced && after != before {
						t.Error("the instance was replaced, though no script had to be stopped")
					}
				})
			}
		})
	}
}

func TestACodedErrorAPostExecuteListenerThrowsAfterAnAbortKeepsItsCode(t *testing.T) {
	postFailure := hosttest.Failure("post failed", hosttest.Info("HarnessError", "POST_FAILURE"))
	cases := []struct {
		name string
		src  hosttest.Source
	}{
		{
			name: "the listener sees the abort, then throws",
			src: hosttest.Source{JS: `
const { defineTool, tools, on } = require("dsh");
const gate = require("dsh/gate");
on("tools/post-execute", async (exec, result, next) => {
  gate.started();
  if (!exec.signal.aborted) await new Promise((resolve) => exec.signal.addEventListener("abort", resolve));
  throw Object.assign(new Error("post failed"), { name: "HarnessError", code: "POST_FAILURE" });
});
tools.register(defineTool({ name: "t", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute: () => "ran" }));
`, Lua: `
local dsh = require("dsh")
dsh.on("tools/post-execute", function(exec, result, next)
  dsh.gate.started()
  while not exec.signal.aborted() do end
  error({ name = "HarnessError", code = "POST_FAILURE", message = "post failed" })
end)
dsh.tools.register(dsh.define_tool { name = "t", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function() return "ran" end })
`},
		},
		{
			name: "the body ran on past its grace after the abort, and the listener runs in the fresh instance that replaces its own, slow to start",
			src: hosttest.Source{JS: `
const { defineTool, tools, on } = require("dsh");
const gate = require("dsh/gate");
gate.top();
on("tools/post-execute", async () => {
  throw Object.assign(new Error("post failed"), { name: "HarnessError", code: "POST_FAILURE" });
});
tools.register(defineTool({ name: "t", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(args, exec) {
    const signal = exec.signal; // made before the abort, so it will abort
    gate.started();
    await new Promise((resolve) => signal.addEventListener("abort", resolve));
    for (;;) {}
  } }));
`, Lua: `
local dsh = require("dsh")
dsh.gate.top()
dsh.on("tools/post-execute", function()
  error({ name = "HarnessError", code = "POST_FAILURE", message = "post failed" })
end)
dsh.tools.register(dsh.define_tool { name = "t", description = "", parameters = {},
  output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
  execute = function(args, exec)
    dsh.gate.started()
    while not exec.signal.aborted() do end
    while true do end
  end })
`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, lang := range hosttest.Langs() {
				t.Run(lang.Name, func(t *testing.T) {
					g := newGates(t, 0)
					e := hosttest.Load(t, lang, hosttest.Config{Grace: cancelGrace, Modules: []scripting.Module{g.module()}},
						map[string]string{lang.File("p"): c.src.In(lang)})
					e.NoDiagnostics(t)
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					go func() {
						<-g.started
						cancel()
					}()
					hosttest.Want(t, e.CallJSON(t, ctx, "t", nil), postFailure)
				})
			}
		})
	}
}

func TestACallWhoseCallerGaveUpEndsAtTheGraceWhileItsBodyWaits(t *testing.T) {
	src := hosttest.Source{JS: outerJS + `
tools.register(defineTool({
  name: "wait", description: "", parameters: {}, output: text,
  async execute(args, exec) {
    await tools.call("nap", {}, exec);
    return "returned after the caller gave up";
  },
}));
`, Lua: outerLua + `
dsh.tools.register(dsh.define_tool {
  name = "wait", description = "", parameters = {}, output = text,
  execute = function(args, exec)
    dsh.tools.call("nap", {}, exec)
    return "returned after the caller gave up"
  end,
})
`}
	for _, lang := range hosttest.Langs() {
		t.Run(lang.Name, func(t *testing.T) {
			g := newGates(t, time.Hour) // until the test ends
			e := hosttest.Load(t, lang, hosttest.Config{Grace: cancelGrace, Modules: []scripting.Module{g.module()}},
				map[string]string{lang.File("p"): src.In(lang)}, g.register(t, false))
			e.NoDiagnostics(t)
			before := e.CallJSON(t, context.Background(), "id", nil)
			ctx, giveUp := context.WithCancel(context.Background())
			defer giveUp()
			go func() {
				<-g.started
				giveUp()
			}()
			got := make(chan string, 1)
			go func() { got <- hosttest.JSON(t, e.Call(ctx, "wait", nil).JSON()) }()
			hosttest.Want(t, hosttest.Within(t, "the call's result", got), hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
			if after := e.CallJSON(t, context.Background(), "id", nil); after != before {
				t.Error("the instance was replaced, though its script only waited")
			}
		})
	}
}
