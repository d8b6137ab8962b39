package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/scripting/lua/internal/luavalue"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// setup makes the instance's sandboxed state on its goroutine and installs
// the dsh module and print.
func (i *instance) setup() error {
	L, err := sandbox.New(sandbox.Options{Root: i.pool.src.Root, Modules: i.requireHost})
	if err != nil {
		return err
	}
	i.L = L
	i.conv = luavalue.New(L, luavalue.Limits{})
	i.newMetatables(L)
	i.dsh = i.dshModule(L)
	L.G.Global.RawSetString("print", L.NewFunction(i.print))
	return nil
}

// requireHost resolves the host modules of require: "dsh" and "dsh.<name>".
func (i *instance) requireHost(_ *glua.LState, name string) (glua.LValue, bool) {
	if name == "dsh" {
		return i.dsh, true
	}
	rest := name[len("dsh."):]
	if dshFields[rest] {
		return nil, false
	}
	t, ok := i.dsh.RawGetString(rest).(*glua.LTable)
	return t, ok
}
