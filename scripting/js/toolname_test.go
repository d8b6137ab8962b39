package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/toolnametest"
)

// toolNamePlugin registers "attempt": its body registers a tool named
// args.name in the way args.how says and returns the error's message.
const toolNamePlugin = `
const { defineTool, tools } = require("dsh");
const out = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
const raw = (name) => ({ name, description: "", parameters: { type: "object" }, output: out, async execute() { return "x"; } });
const ways = {
  raw: (name) => tools.register(raw(name)),
  defineTool: (name) => tools.register(defineTool({ name, description: "", parameters: {}, output: out, async execute() { return "x"; } })),
  scoped: (name) => tools.scope("worker").register(raw(name)),
  noOutput: (name) => tools.register(Object.assign(raw(name), { output: undefined })),
};
tools.register({ name: "attempt", description: "", parameters: { type: "object" }, output: { schema: {}, render: () => [] },
  async execute(args) {
    try { ways[args.how](args.name); return "registered"; } catch (e) { return e.message; }
  } });
`

func TestToolNamesOutsideTheRuleAreRefused(t *testing.T) {
	e := load(t, map[string]string{"names.js": toolNamePlugin})
	apiNoDiags(t, e)
	for _, c := range toolnametest.Cases() {
		for _, how := range []string{"raw", "defineTool", "scoped", "noOutput"} {
			t.Run(c.Label+" is refused by tools.register, "+how, func(t *testing.T) {
				a := dsl.NewObject(dsl.Member{Key: "name", Value: c.Name}, dsl.Member{Key: "how", Value: how})
				got := e.apiValue(t, "attempt", a)
				if want := string(mustJSON(t, c.Want())); got != want {
					t.Errorf("got  %.300s\nwant %s", got, want)
				}
			})
		}
		t.Run(c.Label+" registers nothing", func(t *testing.T) {
			if n := len(e.svc.Global().Definitions(nil)); n != 1 {
				t.Errorf("%d tools registered, want only attempt", n)
			}
		})
	}
}

func TestAPluginRegisteringABadNameIsRolledBack(t *testing.T) {
	e := load(t, map[string]string{
		"good.js": tool("good", `{type: "string"}`, `return "ok"`),
		"half.js": tool("half_ok", `{type: "string"}`, `return "x"`) + "\ntools.register(defineTool({ name: \"evil\\x1b[2J\\n\" + \"x\".repeat(1 << 20), description: '', parameters: {}, output: { schema: { type: 'string' }, render: () => [] }, async execute() { return 'x'; } }));\n",
	})
	want := `half.js:11:7: tool name "evil\x1b[2J\n` + strings.Repeat("x", 55) + `…" (1048585 bytes) is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'`
	if got := e.diagnostics(); len(got) != 1 || got[0] != want {
		t.Fatalf("diagnostics %q\nwant %q", got, want)
	}
	if e.svc.Global().Get("half_ok") != nil {
		t.Error("the tool the plugin registered before the bad name is still registered")
	}
	if got := e.call(t, "good", nil); !strings.Contains(got, `"value":"ok"`) {
		t.Errorf("the good plugin does not serve: %s", got)
	}
}

func mustJSON(t *testing.T, s string) []byte {
	t.Helper()
	b, err := dsl.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestADecisionNamingHugeKeysIsQuotedBounded(t *testing.T) {
	e := load(t, map[string]string{
		"good.js": tool("good", `{type: "string"}`, `return "ok"`),
		"pol.js": `const { on } = require("dsh");
on("tools/pre-execute", async (exec, next) => {
  if (exec.arguments.k === 1) return { kind: "allow", ["\x1b[2J" + "k".repeat(1e6)]: 1 };
  if (exec.arguments.k === 2) return { kind: "\x1b" + "z".repeat(1e6) };
  return next();
});`,
	})
	apiNoDiags(t, e)
	for _, tc := range []struct{ name, args, want string }{
		{"a key the decision does not take is quoted escaped and cut to 64 bytes", `{"k":1}`,
			`tools/pre-execute listener returned an invalid decision: "allow" does not take "\x1b[2J` + strings.Repeat("k", 60) + `…"`},
		{"an unknown kind is shown as JSON cut to 100 bytes", `{"k":2}`,
			`tools/pre-execute listener returned an invalid decision: unknown kind "\u001b` + strings.Repeat("z", 93) + `…`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.svc.Call(context.Background(), engine.Input{CallID: "c1", Name: "good", Arguments: args(t, tc.args)})
			if r.Error == nil || r.Error.Message != tc.want {
				t.Errorf("got  %+v\nwant %q", r.Error, tc.want)
			}
		})
	}
}
