package js_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// TestToolCallAllocations bounds what one JS tool call allocates, body and
// render together (BenchmarkJSPolicyNone's call), so that the allocations
// dsh itself makes around goja's (the execution object, its registration,
// the prerender, typing the content) do not creep back. The bound is the
// count measured when it was set (BENCHMARKS.md, "A JS tool call's own
// allocations"); goja's own share of it is most of it.
func TestToolCallAllocations(t *testing.T) {
	env := hosttest.Load(t, hosttest.JS, hosttest.Config{}, map[string]string{"greet.js": greetSync})
	env.NoDiagnostics(t)
	ctx := context.Background()
	i := 0
	call := func() {
		i++
		if r := env.Service.Call(ctx, greetInput(i, "Ada")); r.IsError {
			t.Fatal(r.Error.Message)
		}
	}
	call() // the instance, its caches and the execution prototypes
	const most = 92
	if allocs := testing.AllocsPerRun(200, call); allocs > most {
		t.Fatalf("a JS greet call made %.0f allocations, want at most %d", allocs, most)
	}
}

// TestExecWithoutAgentOrParent covers an execution object of a call without
// an agent or a parent: exec.agent and exec.parent are undefined, read from
// its frozen prototype (as exec.caller without a caller), so an
// Object.prototype.agent a script set does not stand in for them, and
// assigning them fails, as when they were own properties; they are no
// longer among the object's own keys (JSON.stringify left them out before
// too, being undefined).
func TestExecWithoutAgentOrParent(t *testing.T) {
	env := hosttest.Load(t, hosttest.JS, hosttest.Config{}, map[string]string{"probe.js": `"use strict";
const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "probe", description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [] },
  execute(args, exec) {
    Object.prototype.agent = { id: "mallory" };
    Object.prototype.parent = { forged: true };
    try {
      let assign = "none";
      try { exec.agent = { id: "eve" }; } catch (e) { assign = e.constructor.name; }
      return {
        values: [exec.agent === undefined, exec.parent === undefined],
        ownDescriptor: Object.getOwnPropertyDescriptor(exec, "agent") === undefined,
        inExec: ["agent" in exec, "parent" in exec],
        keys: Object.keys(exec),
        frozen: Object.isFrozen(exec),
        assign,
        json: JSON.stringify(exec),
      };
    } finally {
      delete Object.prototype.agent;
      delete Object.prototype.parent;
    }
  },
}));
`})
	env.NoDiagnostics(t)
	r := env.Service.Call(context.Background(), engine.Input{CallID: "c1", Name: "probe", Arguments: dsl.NewObject()})
	t.Run("they are undefined, from the prototype, and cannot be assigned", func(t *testing.T) {
		hosttest.Want(t, hosttest.JSON(t, r.JSON()), `{"isError":false,"value":{"values":[true,true],"ownDescriptor":true,"inExec":[true,true],"keys":["callId","rootCallId","name","arguments"],"frozen":true,"assign":"TypeError","json":"{\"callId\":\"c1\",\"rootCallId\":\"c1\",\"name\":\"probe\",\"arguments\":{}}"},"content":[]}`)
	})
}
