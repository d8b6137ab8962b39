package lua_test

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/toolnametest"
)

// toolNamePlugin registers "attempt": its body registers a tool named
// args.name in the way args.how says and returns the error's message.
const toolNamePlugin = `
local dsh = require("dsh")
local tools = dsh.tools
local out = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end }
local function raw(name)
  return { name = name, description = "", parameters = { type = "object" }, output = out, execute = function() return "x" end }
end
local ways = {
  raw = function(name) tools.register(raw(name)) end,
  define_tool = function(name) tools.register(dsh.define_tool { name = name, description = "", parameters = {}, output = out, execute = function() return "x" end }) end,
  scoped = function(name) tools.scope("worker").register(raw(name)) end,
  no_output = function(name) local d = raw(name); d.output = false; tools.register(d) end,
}
tools.register { name = "attempt", description = "", parameters = { type = "object" }, output = { schema = {}, render = function() return {} end },
  execute = function(args)
    local ok, err = pcall(ways[args.how], args.name)
    return ok and "registered" or err.message
  end }
`

func TestToolNamesOutsideTheRuleAreRefused(t *testing.T) {
	e := load(t, map[string]string{"names.lua": toolNamePlugin})
	noDiags(t, e)
	for _, c := range toolnametest.Cases() {
		for _, how := range []string{"raw", "define_tool", "scoped", "no_output"} {
			t.Run(c.Label+" is refused by tools.register, "+how, func(t *testing.T) {
				a := dsl.NewObject(dsl.Member{Key: "name", Value: c.Name}, dsl.Member{Key: "how", Value: how})
				got := e.value(t, "attempt", a)
				if want := marshal(t, c.Want()); got != want {
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
		"good.lua": tool("good", `{ type = "string" }`, `return "ok"`),
		"half.lua": tool("half_ok", `{ type = "string" }`, `return "x"`) +
			"\ndsh.tools.register(dsh.define_tool { name = \"evil\\27[2J\\n\" .. string.rep(\"x\", 1048576), description = '', parameters = {}, output = { schema = { type = 'string' }, render = function() return {} end }, execute = function() return 'x' end })\n",
	})
	want := `half.lua:11: tool name "evil\x1b[2J\n` + strings.Repeat("x", 55) + `…" (1048585 bytes) is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'`
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
