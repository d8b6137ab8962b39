package js_test

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
	"github.com/dsh-go/dsh/scripting/js"
)

// callKey is the key of the value the tests put in the ctx they call with.
type callKey struct{}

// ctxLogs is a slog handler recording each line as "msg <- value", value
// being what its ctx holds under callKey ("-" for none).
type ctxLogs struct {
	mu    sync.Mutex
	lines []string
	seen  chan string // each line's message, when set
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
	h.logs.lines = append(h.logs.lines, r.Message+" <- "+v)
	h.logs.mu.Unlock()
	if h.logs.seen != nil {
		h.logs.seen <- r.Message
	}
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

// waitFor waits until a line with message msg is logged (a bound against a
// hang, not a timing assertion).
func (l *ctxLogs) waitFor(t *testing.T, msg string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-l.seen:
			if m == msg {
				return
			}
		case <-deadline:
			t.Fatalf("%q was never logged", msg)
		}
	}
}

// loadCtx loads files with a JS host logging to logs, under ctx (the load's,
// which the top level must not log with).
func loadCtx(t *testing.T, ctx context.Context, logs *ctxLogs, files map[string]string) *engine.Service {
	t.Helper()
	svc := engine.New()
	svc.Global().OnExecute(engine.TimeoutPolicy())
	host := &js.Host{ListenerTimeout: time.Second, Grace: 20 * time.Millisecond, Logger: slog.New(ctxHandler{logs})}
	hosttest.LoadPlugins(t, ctx, svc, host, files)
	return svc
}

func callCtx(name string) context.Context {
	return context.WithValue(context.Background(), callKey{}, name)
}

func TestScriptLogsCarryTheCallsContext(t *testing.T) {
	logs := &ctxLogs{seen: make(chan string, 256)}
	svc := loadCtx(t, callCtx("load"), logs, map[string]string{"logs.js": `
const { defineTool, tools, on, log } = require("dsh");
log.info("top level");
Promise.resolve().then(() => log.info("top level, after a microtask"));
tools.guard((exec) => { log.info("guard"); return undefined; });
on("tools/pre-execute", async (exec, next) => {
  log.info("pre-execute, exec.progress is " + typeof exec.progress);
  const d = await next();
  log.info("pre-execute, after next()");
  return d;
});
on("tools/execute", async (exec, next) => {
  log.debug("execute wrapper");
  const r = await next();
  log.warn("execute wrapper, after next()");
  return r;
});
on("tools/post-execute", async (exec, result, next) => {
  console.log("post-execute");
  return next();
});
tools.register(defineTool({
  name: "probe", description: "", parameters: {},
  output: { schema: { type: "string" }, render: () => [{ type: "text", text: "probed" }] },
  async execute() { return "probed"; },
}));
tools.register(defineTool({
  name: "talk", description: "", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => { log.info("render"); return [{ type: "text", text: v }]; } },
  async execute(args, exec) {
    log.info("body", { k: 1 });
    await Promise.resolve();
    console.error("body, after a microtask");
    await new Promise((resolve) => setTimeout(resolve, 1));
    log.info("body, after awaiting a timer");
    await tools.call("probe", {}, exec);
    log.info("body, after awaiting tools.call");
    setTimeout(() => log.info("a timer the body left behind"), 1);
    return "said";
  },
}));
`})
	logs.waitFor(t, "top level, after a microtask")
	t.Run("the top level logs under the background, not the load's ctx", func(t *testing.T) {
		hosttest.Want(t, strings.Join(logs.take(), "\n"), "top level <- -\ntop level, after a microtask <- -")
	})
	t.Run("bodies, renders, listeners, wrappers and guards log under their call's ctx, also after awaits", func(t *testing.T) {
		r := svc.Call(callCtx("A"), engine.Input{CallID: "a", Name: "talk", Arguments: dsl.NewObject()})
		if r.IsError {
			t.Fatalf("the call failed: %s", hosttest.JSON(t, r))
		}
		logs.waitFor(t, "a timer the body left behind")
		want := []string{
			"pre-execute, exec.progress is undefined <- A",
			"pre-execute, after next() <- A",
			"guard <- A",
			"execute wrapper <- A",
			"body <- A",
			"body, after a microtask <- A",
			"body, after awaiting a timer <- A",
			// The nested call's listeners log under its ctx, made from
			// the body's.
			"pre-execute, exec.progress is undefined <- A",
			"pre-execute, after next() <- A",
			"guard <- A",
			"execute wrapper <- A",
			"execute wrapper, after next() <- A",
			"post-execute <- A",
			"body, after awaiting tools.call <- A",
			// A render made in the body's trip logs as the body.
			"render <- A",
			"execute wrapper, after next() <- A",
			"post-execute <- A",
		}
		// A timer logs under the ctx of the call that set it, even once
		// that call is over; it fires at some point after the body.
		var lines []string
		timer := ""
		for _, l := range logs.take() {
			if strings.HasPrefix(l, "a timer the body left behind") {
				timer = l
			} else {
				lines = append(lines, l)
			}
		}
		hosttest.Want(t, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		hosttest.Want(t, timer, "a timer the body left behind <- A")
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
		logs.waitFor(t, "a timer the body left behind")
		logs.waitFor(t, "a timer the body left behind")
		count := map[string]int{}
		for _, l := range logs.take() {
			count[l[strings.LastIndex(l, " <- ")+4:]]++
		}
		if len(count) != 2 || count["B"] != 18 || count["C"] != 18 {
			t.Errorf("lines by ctx value: %v", count)
		}
	})
}

func TestExecProgress(t *testing.T) {
	logs := &ctxLogs{}
	svc := loadCtx(t, context.Background(), logs, map[string]string{"progress.js": `
const { defineTool, tools, on } = require("dsh");
let kept;
on("tools/pre-execute", (exec, next) => {
  if (exec.name === "misuse" && exec.arguments.how === "listener") {
    const body = globalThis.bodyProto;
    return body.progress.call(exec, 1), next();
  }
  return next();
});
const tool = (name, execute) => tools.register(defineTool({
  name, description: "", parameters: { how: { type: "string" } },
  output: { schema: { type: "json" }, render: () => [] },
  execute,
}));
tool("steps", async (args, exec) => {
  const r = exec.progress(1);
  exec.progress(2, 4);
  await new Promise((resolve) => setTimeout(resolve, 1));
  exec.progress(3, 4, "three");
  exec.progress(3.5, undefined, "half");
  exec.progress(-1, 0);
  kept = exec;
  globalThis.bodyProto = Object.getPrototypeOf(exec);
  return typeof r;
});
tool("late", async () => { kept.progress(99, 100, "too late"); return "no error"; });
tool("misuse", async (args, exec) => {
  try {
    switch (args.how) {
      case "none": exec.progress(); break;
      case "string": exec.progress("1"); break;
      case "NaN": exec.progress(NaN); break;
      case "Infinity": exec.progress(Infinity, 2); break;
      case "Number object": exec.progress(new Number(1)); break;
      case "BigInt": exec.progress(1n); break;
      case "negative total": exec.progress(1, -1); break;
      case "NaN total": exec.progress(1, NaN); break;
      case "null total": exec.progress(1, null); break;
      case "string total": exec.progress(1, "4"); break;
      case "infinite total": exec.progress(1, -Infinity); break;
      case "number message": exec.progress(1, 2, 3); break;
      case "null message": exec.progress(1, 2, null); break;
      case "detached": { const p = exec.progress; p(1); break; }
      case "plain object": Object.getPrototypeOf(exec).progress.call({}, 1); break;
    }
    return "no error";
  } catch (e) {
    return e.message;
  }
});
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
	t.Run("a body's reports reach the ctx's progress function in order", func(t *testing.T) {
		got := call(t, progressCtx("steps"), "steps", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"undefined","content":[]}`)
		hosttest.Want(t, reports(), `steps: 1/0 ""
steps: 2/4 ""
steps: 3/4 "three"
steps: 3.5/0 "half"
steps: -1/0 ""
`)
	})
	t.Run("a report after the body settled is ignored", func(t *testing.T) {
		got := call(t, progressCtx("late"), "late", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"no error","content":[]}`)
		hosttest.Want(t, reports(), "")
	})
	t.Run("a call without a progress function reports to no one", func(t *testing.T) {
		got := call(t, context.Background(), "steps", nil)
		hosttest.Want(t, got, `{"isError":false,"value":"undefined","content":[]}`)
		hosttest.Want(t, reports(), "")
	})
	const (
		progressErr = "exec.progress(progress, total?, message?): progress must be a finite number"
		totalErr    = "exec.progress(progress, total?, message?): total must be a finite number >= 0"
		messageErr  = "exec.progress(progress, total?, message?): message must be a string"
		thisErr     = "exec.progress(progress, total?, message?): this is not a tool body's execution object"
	)
	for _, c := range []struct{ how, want string }{
		{"none", progressErr},
		{"string", progressErr},
		{"NaN", progressErr},
		{"Infinity", progressErr},
		{"Number object", progressErr},
		{"BigInt", progressErr},
		{"negative total", totalErr},
		{"NaN total", totalErr},
		{"null total", totalErr},
		{"string total", totalErr},
		{"infinite total", totalErr},
		{"number message", messageErr},
		{"null message", messageErr},
		{"detached", thisErr},
		{"plain object", thisErr},
	} {
		t.Run("a call with "+c.how+" throws "+c.want, func(t *testing.T) {
			got := call(t, progressCtx("misuse"), "misuse", hosttest.Args(t, `{"how":"`+c.how+`"}`))
			hosttest.Want(t, got, `{"isError":false,"value":`+hosttest.JSON(t, c.want)+`,"content":[]}`)
			hosttest.Want(t, reports(), "")
		})
	}
	t.Run("a listener's execution object cannot report", func(t *testing.T) {
		got := call(t, progressCtx("misuse"), "misuse", hosttest.Args(t, `{"how":"listener"}`))
		if !strings.Contains(got, thisErr) {
			t.Errorf("got %s", got)
		}
		hosttest.Want(t, reports(), "")
	})
}
