package js_test

import (
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
)

// The instance remembers the functions it calls by key, but a script that
// replaces a definition's execute, output.render or presentationMeta after
// registering it, or registers and disposes listeners while calls run, gets
// the functions it holds at the time of each call.
func TestReplacedCallbacksAreCalled(t *testing.T) {
	e := load(t, map[string]string{"swap.js": `
const { defineTool, tools, on } = require("dsh");
const def = defineTool({
  name: "swap", description: "",
  parameters: { text: { type: "string", required: true } },
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: "first " + v }] },
  execute(args) { return args.text; },
});
tools.register(def);
let off;
on("tools/pre-execute", (exec, next) => {
  const t = exec.arguments.text;
  if (exec.name !== "swap") return next();
  if (t === "render") def.output.render = (a, v) => [{ type: "text", text: "second " + v }];
  if (t === "execute") def.execute = (args) => "run by the new execute";
  if (t === "listen") off = on("tools/pre-execute", (exec, next) => exec.arguments.text === "deny" ? { kind: "deny", reason: "dynamic" } : next());
  if (t === "unlisten") off();
  return next();
});
`})
	apiNoDiags(t, e)
	call := func(text string) string {
		return e.call(t, "swap", dsl.NewObject(dsl.Member{Key: "text", Value: text}))
	}
	ok := func(v, text string) string {
		return `{"isError":false,"value":"` + v + `","content":[{"type":"text","text":"` + text + `"}]}`
	}
	hosttest.Want(t, call("a"), ok("a", "first a"))
	hosttest.Want(t, call("deny"), ok("deny", "first deny"))
	hosttest.Want(t, call("render"), ok("render", "second render"))
	hosttest.Want(t, call("b"), ok("b", "second b"))
	hosttest.Want(t, call("listen"), ok("listen", "second listen"))
	hosttest.Want(t, call("deny"), hosttest.Failure("dynamic", ""))
	hosttest.Want(t, call("unlisten"), ok("unlisten", "second unlisten"))
	hosttest.Want(t, call("deny"), ok("deny", "second deny"))
	hosttest.Want(t, call("execute"), ok("run by the new execute", "second run by the new execute"))
	hosttest.Want(t, call("c"), ok("run by the new execute", "second run by the new execute"))
}
