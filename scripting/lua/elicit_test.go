package lua_test

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
	svc := loadCtx(t, context.Background(), &ctxLogs{}, map[string]string{"elicit.lua": `
local dsh = require("dsh")
local kept, last_error = nil, "none"
local function tool(name, execute)
  dsh.tools.register(dsh.define_tool {
    name = name, description = "", parameters = { how = { type = "string" } },
    output = { schema = { type = "json" }, render = function() return {} end },
    execute = execute,
  })
end
local function show(r)
  local keys = {}
  for k in pairs(r) do keys[#keys + 1] = k end
  table.sort(keys)
  local content = r.content
  if content == nil then content = "nil" end
  return { keys = table.concat(keys, ","), action = r.action, content = content }
end
tool("form", function(args, exec)
  kept = exec
  return show(exec.elicit("Who are you?", {
    type = "object",
    properties = { name = { type = "string", title = "Name" }, color = { type = "string", enum = {} } },
    required = {},
  }))
end)
tool("confirm", function(args, exec) return show(exec:elicit("Go on?")) end)
tool("failing", function(args, exec)
  local ok, err = pcall(exec.elicit, "Go on?")
  if ok then return "no error" end
  return err.name .. ": " .. tostring(err)
end)
tool("patient", function(args, exec)
  local ok, err = pcall(exec.elicit, "Wait for it")
  last_error = tostring(err) .. "; the signal's reason: " .. tostring(exec.signal.reason())
  return "gave up"
end)
tool("waiting", function(args, exec) return show(exec:elicit("Wait for it")) end)
tool("lastError", function() return last_error end)
tool("ping", function() return "pong" end)
tool("late", function()
  local ok, err = pcall(kept.elicit, "Too late?")
  if ok then return "no error" end
  return tostring(err)
end)
local cases = {
  ["no message"] = function(exec) exec.elicit() end,
  ["colon no message"] = function(exec) exec:elicit() end,
  ["a number message"] = function(exec) exec.elicit(1) end,
  ["a table message"] = function(exec) exec:elicit({}) end,
  ["a string schema"] = function(exec) exec.elicit("q", "{}") end,
  ["a false schema"] = function(exec) exec:elicit("q", false) end,
  ["an array schema"] = function(exec) exec.elicit("q", { { type = "string" } }) end,
  ["a schema holding a function"] = function(exec) exec.elicit("q", { type = "object", f = print }) end,
}
tool("misuse", function(args, exec)
  local ok, err = pcall(cases[args.how], exec)
  if ok then return "no error" end
  return tostring(err)
end)
`})
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
	t.Run("the question reaches the ctx's elicitation function with its schema as an object in sorted key order", func(t *testing.T) {
		content := dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"}, dsl.Member{Key: "tags", Value: dsl.NewObject()})
		got := call(t, a.Ctx(engine.ElicitResult{Action: "accept", Content: content}, nil), "form", nil)
		hosttest.Want(t, got, value(`{"action":"accept","content":{"name":"Ada","tags":{}},"keys":"action,content"}`))
		hosttest.Want(t, a.Take(), `"Who are you?" *dsl.Object {"properties":{"color":{"enum":[],"type":"string"},"name":{"title":"Name","type":"string"}},"required":[],"type":"object"}`)
	})
	for _, c := range []struct {
		name   string
		answer engine.ElicitResult
		want   string
	}{
		{"an acceptance without content", engine.ElicitResult{Action: "accept"}, `{"action":"accept","content":"nil","keys":"action"}`},
		{"a decline", engine.ElicitResult{Action: "decline"}, `{"action":"decline","content":"nil","keys":"action"}`},
		{"a cancellation, whatever content came with it", engine.ElicitResult{Action: "cancel", Content: dsl.NewObject(dsl.Member{Key: "x", Value: true})}, `{"action":"cancel","content":"nil","keys":"action"}`},
	} {
		t.Run(c.name+" comes back as the script sees it", func(t *testing.T) {
			got := call(t, a.Ctx(c.answer, nil), "confirm", nil)
			hosttest.Want(t, got, value(c.want))
			hosttest.Want(t, a.Take(), `"Go on?" none`)
		})
	}
	t.Run("a call without an elicitation function raises ErrNoElicitation's text", func(t *testing.T) {
		got := call(t, context.Background(), "failing", nil)
		hosttest.Want(t, got, value(hosttest.JSON(t, "Error: "+engine.ErrNoElicitation.Error())))
	})
	t.Run("a failure to ask raises its text", func(t *testing.T) {
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
	t.Run("a call cancelled while it waits raises the cancellation", func(t *testing.T) {
		hosttest.Want(t, waitCancelled(t, "waiting"), hosttest.Failure("context canceled", ""))
	})
	t.Run("a call cancelled while it waits that returns anyway ends as aborted", func(t *testing.T) {
		hosttest.Want(t, waitCancelled(t, "patient"), hosttest.Failure("tool call aborted", hosttest.Info("AbortError", "ABORTED")))
		hosttest.Want(t, call(t, context.Background(), "lastError", nil), value(`"context canceled; the signal's reason: context canceled"`))
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
		hosttest.Want(t, hosttest.Within(t, "the answer", res), value(`{"action":"decline","content":"nil","keys":"action"}`))
	})
	t.Run("asking after the body returned raises", func(t *testing.T) {
		got := call(t, a.Ctx(engine.ElicitResult{Action: "accept"}, nil), "late", nil)
		hosttest.Want(t, got, value(`"exec.elicit(message, schema): the call is over"`))
		hosttest.Want(t, a.Take(), "")
	})
	const (
		messageErr = "exec.elicit(message, schema): message must be a string"
		schemaErr  = "exec.elicit(message, schema): schema must be an object"
	)
	for _, c := range []struct{ how, want string }{
		{"no message", messageErr},
		{"colon no message", messageErr},
		{"a number message", messageErr},
		{"a table message", messageErr},
		{"a string schema", schemaErr},
		{"a false schema", schemaErr},
		{"an array schema", schemaErr},
		{"a schema holding a function", "exec.elicit(message, schema): schema.f: a function is not lossless JSON"},
	} {
		t.Run("a call with "+c.how+" raises "+c.want, func(t *testing.T) {
			got := call(t, a.Ctx(engine.ElicitResult{Action: "accept"}, nil), "misuse", hosttest.Args(t, `{"how":"`+c.how+`"}`))
			hosttest.Want(t, got, value(hosttest.JSON(t, c.want)))
			hosttest.Want(t, a.Take(), "")
		})
	}
}
