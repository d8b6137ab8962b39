package sandbox

import (
	"fmt"
	"maps"
	"reflect"
	"sync"
	"unsafe"

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

// Building the library tables.
//
// gopher-lua's RawSetString keeps, besides the key's entry, an ordered key
// list and an index of it (for next), both grown one key at a time and
// neither presizable from outside: about two thirds of a fresh state's
// allocations. Every state's library tables have the same keys in the same
// order, so [setFields] makes that list and index once per table shape and
// gives each state's table the shared list (read-only: gopher-lua only ever
// appends to it, and its length is its capacity, so a state adding a key
// gets a copy of its own) and a copy of the index; only the values, the
// state's own, are set one by one, into a map made at its final size.
//
// gopher-lua's LTable keeps these fields unexported; their offsets and types
// are read by reflection once per process. It fails closed: when the layout
// is not the one known here, when a table is not empty, or when the keys
// differ from the shape's first ones, the fields are set by RawSetString.

// field is a string key of a table and its value.
type field struct {
	name  string
	value lua.LValue
}

// shape is the keys of one of the tables open builds, in the order they are
// set: fixed by the first state, read-only after.
type shape struct {
	once  sync.Once
	names []string
	keys  []lua.LValue       // gopher-lua's key list; len == cap
	k2i   map[lua.LValue]int // and its index, copied for each table
	ok    bool               // false: the keys repeat one, set them one by one
}

// The shapes of open's tables.
var (
	shapeGlobals, shapeString, shapeTable, shapeMath, shapeCoroutine, shapeOs shape
)

// ltable is where LTable keeps its string entries, its key list and the
// list's index, if the layout is the one setFields knows.
type ltable struct {
	ok                 bool
	strdict, keys, k2i uintptr // offsets
}

var ltableLayout = sync.OnceValue(func() ltable {
	want := map[string]reflect.Type{
		"strdict": reflect.TypeFor[map[string]lua.LValue](),
		"keys":    reflect.TypeFor[[]lua.LValue](),
		"k2i":     reflect.TypeFor[map[lua.LValue]int](),
	}
	var l ltable
	found := 0
	t := reflect.TypeFor[lua.LTable]()
	for i := range t.NumField() {
		f := t.Field(i)
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		if f.Type != w {
			return ltable{}
		}
		found++
		switch f.Name {
		case "strdict":
			l.strdict = f.Offset
		case "keys":
			l.keys = f.Offset
		case "k2i":
			l.k2i = f.Offset
		}
	}
	l.ok = found == len(want)
	return l
})

// init fixes the shape from the first fields set with it, and reports
// whether fields have its keys.
func (s *shape) init(fields []field) bool {
	s.once.Do(func() {
		s.names = make([]string, len(fields))
		s.keys = make([]lua.LValue, len(fields))
		s.k2i = make(map[lua.LValue]int, len(fields))
		for i, f := range fields {
			s.names[i] = f.name
			s.keys[i] = lua.LString(f.name)
			s.k2i[s.keys[i]] = i
		}
		s.ok = len(s.k2i) == len(fields)
	})
	if !s.ok || len(fields) != len(s.names) {
		return false
	}
	for i, f := range fields {
		if f.name != s.names[i] || f.value == lua.LNil {
			return false
		}
	}
	return true
}

// setFields sets t's string keys, in order, to their values, as
// RawSetString would: t is a table with no string key yet.
func setFields(t *lua.LTable, s *shape, fields []field) {
	l := ltableLayout()
	if l.ok && s.init(fields) {
		p := unsafe.Pointer(t)
		strdict := (*map[string]lua.LValue)(unsafe.Add(p, l.strdict))
		keys := (*[]lua.LValue)(unsafe.Add(p, l.keys))
		k2i := (*map[lua.LValue]int)(unsafe.Add(p, l.k2i))
		if len(*strdict) == 0 && len(*keys) == 0 && len(*k2i) == 0 {
			if *strdict == nil { // else gopher-lua made it (the globals')
				*strdict = make(map[string]lua.LValue, len(fields))
			}
			for _, f := range fields {
				(*strdict)[f.name] = f.value
			}
			*keys = s.keys
			*k2i = maps.Clone(s.k2i)
			return
		}
	}
	for _, f := range fields {
		t.RawSetString(f.name, f.value)
	}
}
