package lua_test

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/gopher-lua/parse"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/lua"
)

// declared lists the names the meta file declares on a table: functions
// `function <table>.name(` and fields `<table>.name =`.
func declared(t *testing.T, table string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(?:function ` + regexp.QuoteMeta(table) + `\.(\w+)\(|` + regexp.QuoteMeta(table) + `\.(\w+) =)`)
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(lua.Declarations()), -1) {
		out = append(out, m[1]+m[2])
	}
	if len(out) == 0 {
		t.Fatalf("dsh.lua declares nothing on %s", table)
	}
	return sortedNames(out)
}

func sortedNames(s []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(s)))
}

func TestTheDeclarationsAreALuaLSMetaFile(t *testing.T) {
	src := lua.Declarations()
	if !bytes.HasPrefix(src, []byte("---@meta dsh\n")) {
		t.Errorf("dsh.lua does not start with ---@meta dsh")
	}
	if _, err := parse.Parse(bytes.NewReader(src), "dsh.lua"); err != nil {
		t.Errorf("dsh.lua is not Lua: %v", err)
	}
	t.Run("each call returns a copy", func(t *testing.T) {
		a := lua.Declarations()
		a[0] = 'X'
		if lua.Declarations()[0] == 'X' {
			t.Error("changing the returned slice changed the declarations")
		}
	})
}

// TestTheDeclarationsNameWhatTheHostInstalls compares what dsh.lua declares
// with the keys a plugin really finds in dsh, dsh.tools, a scope's view,
// dsh.log and each capability module.
func TestTheDeclarationsNameWhatTheHostInstalls(t *testing.T) {
	mods, err := capability.Modules(capability.Config{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e := load(t, map[string]string{"keys.lua": `
local dsh = require("dsh")
local function keys(t) local out = {} for k in pairs(t) do out[#out + 1] = k end table.sort(out) return out end
dsh.tools.register { name = "keys", description = "", parameters = { type = "object" },
  output = { schema = {}, render = function() return {} end },
  execute = function()
    local r = { dsh = keys(dsh), tools = keys(dsh.tools), scope = keys(dsh.tools.scope("a")), log = keys(dsh.log) }
    for _, m in ipairs({ "fs", "process", "http", "path" }) do r[m] = keys(dsh[m]) end
    return r
  end }
`}, func(h *lua.Host, _ *engine.Service) { h.Modules = mods })
	noDiags(t, e)
	toolsView := declared(t, "ToolsView")
	w := dsl.NewObject(
		dsl.Member{Key: "dsh", Value: declared(t, "dsh")},
		dsl.Member{Key: "fs", Value: declared(t, "fs")},
		dsl.Member{Key: "http", Value: declared(t, "http")},
		dsl.Member{Key: "log", Value: declared(t, "Logger")},
		dsl.Member{Key: "path", Value: declared(t, "path")},
		dsl.Member{Key: "process", Value: declared(t, "process")},
		dsl.Member{Key: "scope", Value: sortedNames(append(declared(t, "ScopedTools"), toolsView...))},
		dsl.Member{Key: "tools", Value: sortedNames(append(declared(t, "Tools"), toolsView...))},
	)
	hosttest.Want(t, e.value(t, "keys", nil), marshal(t, w))
	t.Run("every capability module is declared", func(t *testing.T) {
		var names []string
		for _, m := range mods {
			names = append(names, m.Name)
		}
		declaredModules := regexp.MustCompile(`(?m)^---@class dsh\.(\w+)\n(?:---.*\n)*local \w+ = \{\}`)
		var got []string
		for _, m := range declaredModules.FindAllStringSubmatch(string(lua.Declarations()), -1) {
			if strings.Contains(strings.Join(names, " "), m[1]) {
				got = append(got, m[1])
			}
		}
		hosttest.Want(t, strings.Join(sortedNames(got), ","), strings.Join(sortedNames(names), ","))
	})
}
