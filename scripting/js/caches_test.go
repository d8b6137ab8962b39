package js_test

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// The conversions an instance shares between calls (agent objects, the
// plain allow and accept decisions, results) must still read as each call's
// own: alternating agents keep their ids, a pass-through listener handing
// back next()'s allow lets the call through, and one returning any other
// decision after it is still read.
func TestSharedConversions(t *testing.T) {
	e := load(t, map[string]string{"shared.js": apiEcho + `
const { on } = require("dsh");
const seen = [];
let lastAgent;
on("tools/pre-execute", (exec, next) => next());
on("tools/pre-execute", async (exec, next) => {
  const d = await next();
  const a = exec.agent;
  seen.push([a === undefined ? "none" : a.id + "<" + (a.parent ? a.parent.id : "-"), a !== undefined && Object.isFrozen(a), a === lastAgent, d.kind, Object.isFrozen(d)].join(" "));
  if (a !== undefined) lastAgent = a;
  return exec.arguments.text === "veto" ? { kind: "deny", reason: "vetoed after " + d.kind } : d;
});
on("tools/post-execute", (exec, result, next) => next());
on("tools/post-execute", async (exec, result, next) => {
  const d = await next();
  return exec.arguments.text === "swap" ? { kind: "accept", content: [{ type: "text", text: "swapped " + result.value }] } : d;
});
tools.register({ name: "seen", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute() { return seen.splice(0); } });
`})
	apiNoDiags(t, e)
	e.agents.SetParent("child", "worker")
	worker, child := e.agents.Agent("worker"), e.agents.Agent("child")
	echo := func(agent *engine.Agent, text string) string {
		return e.callAs(t, agent, "echo", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	ok := func(v, text string) string {
		return `{"isError":false,"value":"` + v + `","content":[{"type":"text","text":"` + text + `"}]}`
	}
	hosttest.Want(t, echo(worker, "a"), ok("a", "a"))
	hosttest.Want(t, echo(worker, "b"), ok("b", "b"))
	hosttest.Want(t, echo(child, "c"), ok("c", "c"))
	hosttest.Want(t, echo(worker, "swap"), ok("swap", "swapped swap"))
	hosttest.Want(t, echo(nil, "veto"), hosttest.Failure("vetoed after allow", ""))
	hosttest.Want(t, echo(child, "d"), ok("d", "d"))
	hosttest.Want(t, e.apiValue(t, "seen", nil),
		`["worker<- true false allow true","worker<- true true allow true","child<worker true false allow true",`+
			`"worker<- true false allow true","none false false allow true","child<worker true false allow true",`+
			`"none false false allow true"]`) // the last is the call to seen
}
