package js_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// TestExecCaller covers what the conformance table (exec.caller_*) cannot
// say in both languages: the prototype chain, and the object's identity.
func TestExecCaller(t *testing.T) {
	svc := loadCtx(t, context.Background(), &ctxLogs{}, map[string]string{"caller.js": `
const { defineTool, tools, on } = require("dsh");
let last;
const tool = (name, execute) => tools.register(defineTool({
  name, description: "", parameters: {},
  output: { schema: { type: "json" }, render: () => [] },
  execute,
}));
tool("polluted", async (args, exec) => {
  Object.prototype.caller = { subject: "mallory", clientId: "evil", scopes: ["admin"] };
  try {
    return [exec.caller === undefined, "caller" in exec, Object.keys(exec).includes("caller")];
  } finally {
    delete Object.prototype.caller;
  }
});
tool("same", async (args, exec) => {
  const same = last === undefined ? "first" : last === exec.caller;
  last = exec.caller;
  return [same, Object.keys(exec).includes("caller"), Object.isFrozen(exec.caller), Object.isFrozen(exec.caller.scopes)];
});
`})
	call := func(t *testing.T, c *engine.Caller, name string) string {
		t.Helper()
		r := svc.Call(engine.WithCaller(context.Background(), c), engine.Input{CallID: "c", Name: name, Arguments: dsl.NewObject()})
		return hosttest.JSON(t, r.JSON())
	}
	t.Run("an Object.prototype.caller a script set does not stand in for an absent caller", func(t *testing.T) {
		hosttest.Want(t, call(t, nil, "polluted"), `{"isError":false,"value":[true,true,false],"content":[]}`)
	})
	t.Run("a verified caller is a frozen own property", func(t *testing.T) {
		alice := &engine.Caller{Subject: "alice", ClientID: "ci", Scopes: []string{"read"}}
		hosttest.Want(t, call(t, alice, "same"), `{"isError":false,"value":["first",true,true,true],"content":[]}`)
		t.Run("the same caller again is the same object", func(t *testing.T) {
			hosttest.Want(t, call(t, alice, "same"), `{"isError":false,"value":[true,true,true,true],"content":[]}`)
		})
		t.Run("another caller is another object", func(t *testing.T) {
			bob := &engine.Caller{Subject: "bob", ClientID: "ci"}
			hosttest.Want(t, call(t, bob, "same"), `{"isError":false,"value":[false,true,true,true],"content":[]}`)
		})
	})
}
