package scripting_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// tracedPlugins are, in each language, a tools plugin (echo, rm, and outer,
// which calls echo) and a policy plugin that denies rm.
var tracedPlugins = map[string]map[string]string{
	".js": {
		"tools.js": `const { defineTool, tools } = require("dsh");
const tool = (name, execute) => tools.register(defineTool({
  name, description: "test", parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  execute,
}));
tool("echo", async () => "ran");
tool("rm", async () => "removed");
tool("outer", async (args, exec) => {
  const r = await tools.call("echo", {}, exec);
  return r.value;
});
`,
		"policy.js": `const { on } = require("dsh");
on("tools/pre-execute", (exec, next) => exec.name === "rm" ? { kind: "deny", reason: "no rm" } : next());
`,
	},
	".lua": {
		"tools.lua": `
local dsh = require("dsh")
local tools = dsh.tools
local function tool(name, execute)
  tools.register(dsh.define_tool {
    name = name, description = "test", parameters = {},
    output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end },
    execute = execute,
  })
end
tool("echo", function() return "ran" end)
tool("rm", function() return "removed" end)
tool("outer", function(args, exec)
  local r = tools.call("echo", {}, exec)
  return r.value
end)
`,
		"policy.lua": `
local dsh = require("dsh")
dsh.on("tools/pre-execute", function(exec, next)
  if exec.name == "rm" then return { kind = "deny", reason = "no rm" } end
  return next()
end)
`,
	},
}

func TestScriptPoliciesAreNamedInTheirSpans(t *testing.T) {
	hosts := map[string]scripting.Host{
		".js":  &js.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond},
		".lua": &lua.Host{ListenerTimeout: 10 * time.Second, Grace: 20 * time.Millisecond},
	}
	for _, ext := range []string{".js", ".lua"} {
		t.Run("in "+ext+", the denying listener's span names its plugin file and a nested call parents under its caller", func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			defer func() { _ = tp.Shutdown(context.Background()) }()
			svc := engine.New(engine.WithTracerProvider(tp))
			hosttest.LoadPlugins(t, context.Background(), svc, hosts[ext], tracedPlugins[ext])
			call := func(name string) *engine.Result {
				return svc.Call(context.Background(), engine.Input{CallID: name + "-1", Name: name, Arguments: dsl.NewObject()})
			}
			if r := call("rm"); !r.IsError || r.Error.Message != "no rm" {
				t.Fatalf("rm: %+v, want the denial", r.Error)
			}
			if r := call("outer"); r.IsError || r.Value != "ran" {
				t.Fatalf("outer: %+v", r)
			}
			spans := map[string]sdktrace.ReadOnlySpan{}
			var denials []map[string]string
			for _, s := range rec.Ended() {
				spans[s.Name()] = s
				a := map[string]string{}
				for _, kv := range s.Attributes() {
					a[string(kv.Key)] = kv.Value.String()
				}
				if s.Name() == "dsh.policy pre-execute" && a["dsh.policy.decision"] == "deny" {
					denials = append(denials, a)
				}
			}
			if len(denials) != 1 || denials[0]["dsh.plugin"] != "policy"+ext {
				t.Errorf("denying spans %v, want one naming policy%s", denials, ext)
			}
			outer, inner := spans["execute_tool outer"], spans["execute_tool echo"]
			if outer == nil || inner == nil {
				t.Fatalf("spans %v lack outer's or echo's", rec.Ended())
			}
			if inner.Parent().SpanID() != outer.SpanContext().SpanID() {
				t.Error("the nested call's span is not a child of its caller's")
			}
		})
	}
}
