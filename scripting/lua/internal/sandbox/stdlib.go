package sandbox

import (
	"fmt"
	"sync"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's library functions, taken once.
//
// Opening gopher-lua's libraries in every state registers some 90 functions
// one at a time, through the registry's _LOADED table, of which the sandbox
// then deletes or replaces a third. [New] instead builds each library table
// with only what it keeps, from the Go functions below: gopher-lua's own,
// taken once per process from a state that opened the libraries and was
// closed. A Go function value holds nothing a program can change; every
// state still gets its own tables and its own *lua.LFunction values (with
// its own environment and upvalues), so no state sees another's changes.

// stdKept lists, per library (the base library under ""), the members of
// gopher-lua's libraries that the sandbox keeps as they are, and stdWrapped
// those it wraps (see open).
var (
	stdKept = map[string][]string{
		lua.BaseLibName:      {"assert", "error", "getmetatable", "next", "rawequal", "rawget", "rawset", "select", "tonumber", "tostring", "type", "unpack"},
		lua.StringLibName:    {"byte", "char", "len", "lower", "reverse", "sub", "upper"},
		lua.TabLibName:       {"getn", "maxn", "remove", "sort"},
		lua.MathLibName:      {"abs", "acos", "asin", "atan", "atan2", "ceil", "cos", "cosh", "deg", "exp", "floor", "fmod", "frexp", "ldexp", "log", "log10", "max", "min", "mod", "modf", "pow", "rad", "sin", "sinh", "sqrt", "tan", "tanh"},
		lua.CoroutineLibName: {"running", "status", "yield"},
		lua.OsLibName:        {"clock", "time"},
	}
	stdWrapped = map[string][]string{
		lua.StringLibName:    {"format"},
		lua.TabLibName:       {"insert"},
		lua.CoroutineLibName: {"create", "resume", "wrap"},
		lua.OsLibName:        {"date"},
	}
)

// stdLib is what New takes from gopher-lua's libraries.
type stdLib struct {
	// funcs holds the Go function of each kept member, by library and name.
	funcs map[string]map[string]lua.LGFunction
	// count is how many members stdKept lists.
	count int
	// ipairs and pairs are closures over an iterator, ipairsAux and
	// pairsAux.
	ipairs, ipairsAux, pairs, pairsAux lua.LGFunction
}

// std returns gopher-lua's library functions, taken from a throwaway state
// the first time.
var std = sync.OnceValues(func() (*stdLib, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.CoroutineLibName, lua.OpenCoroutine},
		{lua.OsLibName, lua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		if err := L.PCall(1, 0, nil); err != nil {
			return nil, fmt.Errorf("sandbox: opening %q: %w", lib.name, err)
		}
	}
	g := L.G.Global
	s := &stdLib{funcs: make(map[string]map[string]lua.LGFunction, len(stdKept))}
	for lib, kept := range stdKept {
		names := append(kept[:len(kept):len(kept)], stdWrapped[lib]...)
		t := g
		if lib != lua.BaseLibName {
			var err error
			if t, err = libTable(g, lib); err != nil {
				return nil, err
			}
		}
		fns := make(map[string]lua.LGFunction, len(names))
		for _, name := range names {
			f, ok := t.RawGetString(name).(*lua.LFunction)
			if !ok || !f.IsG {
				return nil, fmt.Errorf("sandbox: the %s library has no Go function %s", lib, name)
			}
			fns[name] = f.GFunction
		}
		s.funcs[lib] = fns
		s.count += len(kept)
	}
	var err error
	if s.ipairs, s.ipairsAux, err = iterator(g, "ipairs"); err != nil {
		return nil, err
	}
	if s.pairs, s.pairsAux, err = iterator(g, "pairs"); err != nil {
		return nil, err
	}
	return s, nil
})

// iterator returns the Go functions of gopher-lua's ipairs or pairs, a
// closure whose one upvalue is its iterator.
func iterator(g *lua.LTable, name string) (fn, aux lua.LGFunction, err error) {
	f, ok := g.RawGetString(name).(*lua.LFunction)
	if ok && f.IsG && len(f.Upvalues) == 1 {
		if a, ok := f.Upvalues[0].Value().(*lua.LFunction); ok && a.IsG && len(a.Upvalues) == 0 {
			return f.GFunction, a.GFunction, nil
		}
	}
	return nil, nil, fmt.Errorf("sandbox: unexpected %s in gopher-lua's base library", name)
}
