package js_test

// A tool body asks the user behind its caller a question with exec.elicit.

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

func TestExecElicit(t *testing.T) {
	logs := &ctxLogs{seen: make(chan string, 16)}
	svc := loadCtx(t, context.Background(), logs, map[string]string{"elicit.js": `
const { defineTool, tools, on, instances, log } = require("dsh");
instances(1);
let kept, lastError = "none";
on("tools/pre-execute", (exec, next) => {
  globalThis.listenerExec = exec;
  return next();
});
const tool = (name, execute) => tools.register(defineTool({
  name, description: "", parameters: { how: { type: "string" } },
  output: { schema: { type: "json" }, render: () => [] },
  execute,
}));
const show = (r) => ({ keys: Object.keys(r).join(","), action: r.action, content: r.content === undefined ? "undefined" : r.content });
tool("form", async (args, exec) => {
  const p = exec.elicit("Who are you?", {
    type: "object",
    properties: { name: { type: "string", title: "Name" }, age: { type: "integer", minimum: 0 } },
    required: ["name"],
  });
  kept = exec;
  return show(await p);
});
tool("confirm", async (args, exec) => show(await exec.elicit("Go on?")));
tool("failing", async (args, exec) => {
  try { await exec.elicit("Go on?"); return "no error"; } catch (e) { return e.name + ": " + e.message; }
});
tool("waiting", async (args, exec) => {
  try {
    return show(await exec.elicit("Wait for it"));
  } catch (e) {
    lastError = e.name + ": " + e.message + "; the signal's reason: " + (e === exec.signal.reason);
    throw e;
  }
});
tool("patient", async (args, exec) => {
  try { await exec.elicit("Wait for it"); } catch (e) { lastError = e.name + ": " + e.message; }
  return "gave up";
});
tool("hasty", async (args, exec) => {
  exec.elicit("Quick?").then(() => log.info("answered"), (e) => log.info("rejected: " + e.message));
  await tools.call("gate", {}, exec); // returns once the question is asked
  return "early";
});
tool("lastError", async () => lastError);
tool("ping", async () => "pong");
tool("late", async () => {
  let p;
  try { p = kept.elicit("Too late?"); } catch (e) { return "threw: " + e.message; }
  try { await p; return "resolved"; } catch (e) { return "rejected: " + e.name + ": " + e.message; }
});
tool("misuse", async (args, exec) => {
  try {
    switch (args.how) {
      case "no message": exec.elicit(); break;
      case "a number message": exec.elicit(1); break;
      case "a String object message": exec.elicit(new String("q")); break;
      case "a null schema": exec.elicit("q", null); break;
      case "a string schema": exec.elicit("q", "{}"); break;
      case "an array schema": exec.elicit("q", [{ type: "string" }]); break;
      case "a schema holding a function": exec.elicit("q", { type: "object", f() {} }); break;
      case "a detached this": { const e = exec.elicit; e("q"); break; }
      case "a plain object this": Object.getPrototypeOf(exec).elicit.call({}, "q"); break;
      case "a listener's execution object": exec.elicit.call(globalThis.listenerExec, "q"); break;
    }
    return "no error";
  } catch (e) {
    return e.message;
  }
});
`})
	// gate is a Go tool that returns once asked is closed.
	asked := make(chan struct{})
	gate := shellTool()
	gate.Name = "gate"
	gate.Execute = func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
		select {
		case <-asked:
			return "open", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if _, err := svc.Global().Register(gate); err != nil {
		t.Fatal(err)
	}
	a := &hosttest.Asker{}
	call := func(t *testing.T, ctx context.Context, name string, args any) string {
		t.Helper()
		if args == nil {
			args = dsl.NewObject()
		}
		r := svc.Call(ctx, engine.Input{CallID: "c", Name: name, Arguments: args})
		return hosttest.JSON(t, r.JSON())
	}
	value := func(v string) string { return `{"isError":false,"value":` + v + `,"content":[]}` }
	t.Run("the question reaches the ctx's elicitation function with its schema as an object in order", func(t *testing.T) {
		content := dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"}, dsl.Member{Key: "age", Value: 36.0})
		got := call(t, a.Ctx(engine.ElicitResult{Action: "accept", Content: content}, nil), "form", nil)
		hosttest.Want(t, got, value(`{"keys":"action,content","action":"accept","content":{"name":"Ada","age":36}}`))
		hosttest.Want(t, a.Take(), `"Who are you?" *dsl.Object {"type":"object","properties":{"name":{"type":"string","title":"Name"},"age":{"type":"integer","minimum":0}},"required":["name"]}`)
	})
	for _, c := range []struct {
		name   string
		answer engine.ElicitResult
		want   string
	}{
		{"an acceptance without content", engine.ElicitResult{Action: "accept"}, `{"keys":"action,content","action":"accept","content":"undefined"}`},
		{"a decline", engine.ElicitResult{Action: "decline"}, `{"keys":"action,content","action":"decline","content":"undefined"}`},
		{"a cancellation, whatever content came with it", engine.ElicitResult{Action: "cancel", Content: dsl.NewObject(dsl.Member{Key: "x", Value: true})}, `{"keys":"action,content","action":"cancel","content":"undefined"}`},
	} {
		t.Run(c.name+" comes back as the script sees it", func(t *testing.T) {
			got := call(t, a.Ctx(c.answer, nil), "confirm", nil)
			hosttest.Want(t, got, value(c.want))
			hosttest.Want(t, a.Take(), `"Go on?" none`)
		})
	}
	t.Run("a call without an elicitation function rejects with ErrNoElicitation's text", func(t *testing.T) {
		got := call(t, context.Background(), "failing", nil)
		hosttest.Want(t, got, value(hosttest.JSON(t, "Error: "+engine.ErrNoElicitation.Error())))
	})
	t.Run("a failure to ask rejects with its text", func(t *testing.T) {
		got := call(t, a.Ctx(engine.ElicitResult{}, errors.New("the client went away")), "failing", nil)
		hosttest.Want(t, got, value(`"Error: the client went away"`))
		hosttest.Want(t, a.Take(), `"Go on?" none`)
	})
	// waitCancelled calls tool, cancels the call once its question is
	// asked, and returns its result once the question's ctx has ended.
	waitCancelled := func(t *testing.T, tool string) string {
		t.Helper()
		asked, ended := make(chan struct{}), make(chan error, 1)
		ctx, cancel := context.WithCancel(engine.WithElicit(context.Background(), func(ctx context.Context, q engine.Elicitation) (engine.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			ended <- ctx.Err()
			return engine.ElicitResult{}, ctx.Err()
		}))
		defer cancel()
		res := make(chan *engine.Result, 1)
		go func() { res <- svc.Call(ctx, engine.Input{CallID: "c", Name: tool, Arguments: dsl.NewObject()}) }()
		hosttest.Within(t, "the question", asked)
		cancel()
		r := hosttest.Within(t, "the call's end", res)
		if err := hosttest.Within(t, "the question's end", ended); !errors.Is(err, context.Canceled) {
			t.Errorf("the elicitation function's ctx ended with %v", err)
		}
		return hosttest.JSON(t, r.JSON())
	}
	t.Run("a call cancelled while it waits rejects with the abort, its signal's reason", func(t *testing.T) {
		hosttest.Want(t, waitCancelled(t, "waiting"), hosttest.Failure("the call was cancelled", ""))
		hosttest.Want(t, call(t, context.Background(), "lastError", nil), value(`"AbortError: the call was cancelled; the signal's reason: true"`))
	})
	t.Run("a call cancelled while it waits that returns anyway ends as aborted", func(t *testing.T) {
		hosttest.Want(t, waitCancelled(t, "patient"), hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
		hosttest.Want(t, call(t, context.Background(), "lastError", nil), value(`"AbortError: the call was cancelled"`))
	})
	t.Run("another call on the instance runs while one waits for its answer", func(t *testing.T) {
		asked, answer := make(chan struct{}), make(chan engine.ElicitResult)
		ctx := engine.WithElicit(context.Background(), func(ctx context.Context, q engine.Elicitation) (engine.ElicitResult, error) {
			close(asked)
			select {
			case r := <-answer:
				return r, nil
			case <-ctx.Done():
				return engine.ElicitResult{}, ctx.Err()
			}
		})
		res := make(chan string, 1)
		go func() { res <- call(t, ctx, "waiting", nil) }()
		hosttest.Within(t, "the question", asked)
		ping := make(chan string, 1)
		go func() { ping <- call(t, context.Background(), "ping", nil) }()
		hosttest.Want(t, hosttest.Within(t, "the other call's end", ping), value(`"pong"`))
		answer <- engine.ElicitResult{Action: "decline"}
		hosttest.Want(t, hosttest.Within(t, "the answer", res), value(`{"keys":"action,content","action":"decline","content":"undefined"}`))
	})
	t.Run("asking after the body settled rejects", func(t *testing.T) {
		got := call(t, a.Ctx(engine.ElicitResult{Action: "accept"}, nil), "late", nil)
		hosttest.Want(t, got, value(`"rejected: Error: exec.elicit(message, schema?): the call is over"`))
		hosttest.Want(t, a.Take(), "")
	})
	t.Run("a question pending when the body settles ends, and its promise rejects", func(t *testing.T) {
		ended := make(chan error, 1)
		ctx := engine.WithElicit(context.Background(), func(ctx context.Context, q engine.Elicitation) (engine.ElicitResult, error) {
			close(asked)
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return engine.ElicitResult{}, ctx.Err()
		})
		hosttest.Want(t, call(t, ctx, "hasty", nil), value(`"early"`))
		if err := hosttest.Within(t, "the question's end", ended); err == nil || err.Error() != "exec.elicit(message, schema?): the call is over" {
			t.Errorf("the elicitation function's ctx ended because of %v", err)
		}
		logs.waitFor(t, "rejected: exec.elicit(message, schema?): the call is over")
	})
	const (
		messageErr = "exec.elicit(message, schema?): message must be a string"
		schemaErr  = "exec.elicit(message, schema?): schema must be an object"
		thisErr    = "exec.elicit(message, schema?): this is not a tool body's execution object"
	)
	for _, c := range []struct{ how, want string }{
		{"no message", messageErr},
		{"a number message", messageErr},
		{"a String object message", messageErr},
		{"a null schema", schemaErr},
		{"a string schema", schemaErr},
		{"an array schema", schemaErr},
		{"a schema holding a function", "exec.elicit(message, schema?): schema.f: a function is not lossless JSON"},
		{"a detached this", thisErr},
		{"a plain object this", thisErr},
		{"a listener's execution object", thisErr},
	} {
		t.Run("a call with "+c.how+" throws "+c.want, func(t *testing.T) {
			got := call(t, a.Ctx(engine.ElicitResult{Action: "accept"}, nil), "misuse", hosttest.Args(t, `{"how":"`+c.how+`"}`))
			hosttest.Want(t, got, value(hosttest.JSON(t, c.want)))
			hosttest.Want(t, a.Take(), "")
		})
	}
}
