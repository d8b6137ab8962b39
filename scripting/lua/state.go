package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/scripting/lua/internal/luavalue"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// setup makes the instance's sandboxed state on its goroutine and installs
// the dsh module, print, and the error and assert that remember what they
// raise.
func (i *instance) setup() error {
	L, err := sandbox.New(sandbox.Options{Root: i.pool.src.Root, Modules: i.requireHost})
	if err != nil {
		return err
	}
	i.L = L
	i.conv = luavalue.New(L, luavalue.Limits{})
	i.newMetatables(L)
	i.dsh = i.dshModule(L)
	g := L.G.Global
	g.RawSetString("print", L.NewFunction(i.print))
	// error and assert remember what they raise, so that a failure tells
	// the script's own errors from the interpreter's.
	for _, name := range []string{"error", "assert"} {
		if f, ok := g.RawGetString(name).(*glua.LFunction); ok && f.IsG {
			g.RawSetString(name, L.NewFunction(i.noteRaise(f.GFunction, name == "assert")))
		}
	}
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
