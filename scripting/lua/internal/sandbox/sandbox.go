package sandbox

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	lua "github.com/yuin/gopher-lua"
)

// Defaults of [Options].
const (
	DefaultCallStackSize    = 200
	DefaultRegistrySize     = 256     // every coroutine has its own: 4 KiB each
	DefaultRegistryMaxSize  = 1 << 20 // slots of 16 bytes: 16 MiB
	DefaultRegistryGrowStep = 1 << 16
	DefaultMaxStringBytes   = 16 << 20
	DefaultMaxChunkBytes    = 1 << 20
	DefaultMaxPatternSteps  = 100_000_000
	DefaultMaxCoroutines    = 10_000
	// MaxSyntaxDepth is how deeply a chunk's syntax tree may nest. gopher-lua
	// compiles deep trees in time quadratic in their depth, without a
	// context check; Lua 5.1 itself refuses more than 200 levels.
	MaxSyntaxDepth = 1000
)

// Options configure [New]. A zero field takes its default.
type Options struct {
	// Root is the scripts directory: require("lib.util") loads
	// Root/lib/util.lua, opened through os.Root so that neither ".." nor a
	// symbolic link leads out of it. Empty: only host modules can be
	// required.
	Root string
	// CallStackSize bounds the Lua call stack (default 200 frames): runaway
	// recursion is a Lua error "stack overflow".
	CallStackSize int
	// RegistrySize and RegistryMaxSize bound the value stack of the state
	// and of each coroutine (default 256 slots, growing by RegistryGrowStep
	// up to 1 Mi slots); beyond it, a Lua error "registry overflow". RegistryGrowStep defaults to 64 Ki slots:
	// gopher-lua grows the stack by this constant step, copying it each
	// time, so a small step makes growth quadratic.
	RegistrySize, RegistryMaxSize, RegistryGrowStep int
	// MaxStringBytes caps the strings the .. operator, string.rep,
	// string.format, string.gsub, table.concat and os.date make (default 16
	// MiB); beyond it, a Lua error such as "string concatenation: the
	// result would be 33554432 bytes, over the limit of 16777216 bytes".
	MaxStringBytes int
	// MaxChunkBytes caps the source text of one chunk given to load,
	// loadstring, require or [Load] (default 1 MiB).
	MaxChunkBytes int
	// MaxPatternSteps caps the work of one call of string.find, match,
	// gsub, or of one step of a gmatch iterator (default 100,000,000 steps
	// of the matcher, about a second); beyond it, a Lua error "pattern too
	// complex". The matcher also checks the state's context as it goes.
	MaxPatternSteps int
	// MaxCoroutines caps the coroutines coroutine.create and
	// coroutine.wrap make during one call into the state (default 10,000;
	// a coroutine is a gopher-lua thread of 6 KiB or more); beyond it, a Lua
	// error "too many coroutines (the limit is <n> per call)". [Call] starts
	// a new count when it is called from the host rather than from inside a
	// script's call.
	MaxCoroutines int
	// Modules supplies the host modules: require("dsh") and
	// require("dsh.<anything>") call it, once per name and state, and
	// return its value; false means there is no such module.
	Modules func(L *lua.LState, name string) (lua.LValue, bool)
}

func (o *Options) defaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&o.CallStackSize, DefaultCallStackSize)
	def(&o.RegistrySize, DefaultRegistrySize)
	def(&o.RegistryMaxSize, DefaultRegistryMaxSize)
	def(&o.RegistryGrowStep, DefaultRegistryGrowStep)
	def(&o.MaxStringBytes, DefaultMaxStringBytes)
	def(&o.MaxChunkBytes, DefaultMaxChunkBytes)
	def(&o.MaxPatternSteps, DefaultMaxPatternSteps)
	def(&o.MaxCoroutines, DefaultMaxCoroutines)
	o.RegistryMaxSize = max(o.RegistryMaxSize, o.RegistrySize)
}

// box is the sandbox state of one *lua.LState, shared by its Go functions.
type box struct {
	opts   Options
	rand   *rand.Rand
	loaded map[string]lua.LValue // require's cache: the value of each module, nil while it runs

	protect     *lua.LFunction // protected, see protect.go
	concatFn    *lua.LFunction // b.concat, see concat.go
	resumeDepth int            // coroutines being resumed inside one another
	coroutines  int            // coroutines made by the current call
	parts       []string       // the concat function's scratch space
}

// boxKey is the registry key of a state's box (as userdata); scripts
// cannot reach the registry (there is no debug library).
const boxKey = "dsh.sandbox.box"

// boxOf returns the box of a state New made, or nil.
func boxOf(L *lua.LState) *box {
	if ud, ok := L.G.Registry.RawGetString(boxKey).(*lua.LUserData); ok {
		if b, ok := ud.Value.(*box); ok {
			return b
		}
	}
	return nil
}

// New returns a fresh state holding only the sandboxed libraries (see the
// package documentation). It fails if opts.Root is set and is not a
// directory.
func New(opts Options) (*lua.LState, error) {
	opts.defaults()
	if opts.Root != "" {
		fi, err := os.Stat(opts.Root)
		if err != nil {
			return nil, fmt.Errorf("sandbox: scripts directory: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("sandbox: scripts directory %s is not a directory", opts.Root)
		}
	}
	L := lua.NewState(lua.Options{
		SkipOpenLibs:        true,
		MinimizeStackMemory: true, // a coroutine starts with a few frames, not CallStackSize
		CallStackSize:       opts.CallStackSize,
		RegistrySize:        opts.RegistrySize,
		RegistryMaxSize:     opts.RegistryMaxSize,
		RegistryGrowStep:    opts.RegistryGrowStep,
	})
	b := &box{
		opts:   opts,
		rand:   rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		loaded: make(map[string]lua.LValue),
	}
	if err := b.open(L); err != nil {
		L.Close()
		return nil, err
	}
	return L, nil
}

// open opens the libraries and trims them.
func (b *box) open(L *lua.LState) error {
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
			return fmt.Errorf("sandbox: opening %q: %w", lib.name, err)
		}
	}
	g := L.G.Global
	for _, name := range []string{"dofile", "loadfile", "getfenv", "setfenv", "module", "newproxy", "_printregs", "print", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	set := func(t *lua.LTable, name string, fn lua.LGFunction) { t.RawSetString(name, L.NewFunction(fn)) }
	b.concatFn = L.NewFunction(b.concat)
	self := L.NewUserData()
	self.Value = b
	L.G.Registry.RawSetString(boxKey, self)
	b.protect = L.NewFunction(protected)
	set(g, "require", b.require)
	set(g, "load", b.load)
	set(g, "loadstring", b.loadstring)
	set(g, "collectgarbage", collectGarbage)
	set(g, "setmetatable", setMetatable)
	set(g, "pcall", b.pcall)
	set(g, "xpcall", b.xpcall)

	str, err := libTable(g, "string")
	if err != nil {
		return err
	}
	str.RawSetString("dump", lua.LNil)
	set(str, "rep", b.strRep)
	set(str, "format", b.strFormat(str.RawGetString("format")))
	set(str, "find", b.strFind)
	set(str, "match", b.strMatch)
	set(str, "gsub", b.strGsub)
	gmatch := L.NewFunction(b.strGmatch)
	str.RawSetString("gmatch", gmatch)
	str.RawSetString("gfind", gmatch)
	// gopher-lua makes the string library table the strings' metatable too
	// (string.__index == string). Give strings a metatable of their own,
	// which getmetatable("") does not reveal.
	str.RawSetString("__index", lua.LNil)
	strMeta := L.CreateTable(0, 2)
	strMeta.RawSetString("__index", str)
	strMeta.RawSetString("__metatable", lua.LString("protected"))
	L.SetMetatable(lua.LString(""), strMeta)

	tbl, err := libTable(g, "table")
	if err != nil {
		return err
	}
	set(tbl, "concat", b.tableConcat)
	set(tbl, "insert", tableInsert(tbl.RawGetString("insert")))

	m, err := libTable(g, "math")
	if err != nil {
		return err
	}
	m.RawSetString("huge", lua.LNumber(math.Inf(1)))
	set(m, "random", b.mathRandom)
	set(m, "randomseed", b.mathRandomseed)

	co, err := libTable(g, "coroutine")
	if err != nil {
		return err
	}
	set(co, "create", b.create(co.RawGetString("create")))
	set(co, "resume", b.resume(co.RawGetString("resume")))
	set(co, "wrap", b.wrap(co.RawGetString("wrap")))

	osLib, err := libTable(g, "os")
	if err != nil {
		return err
	}
	safeOS := L.CreateTable(0, 3)
	safeOS.RawSetString("time", osLib.RawGetString("time"))
	safeOS.RawSetString("clock", osLib.RawGetString("clock"))
	safeOS.RawSetString("date", L.NewFunction(b.osDate(osLib.RawGetString("date"))))
	g.RawSetString("os", safeOS)

	// The libraries' own tables in the registry's _LOADED (unreachable
	// without debug, but the full os library should not linger).
	if reg, ok := L.Get(lua.RegistryIndex).(*lua.LTable); ok {
		reg.RawSetString("_LOADED", lua.LNil)
	}
	return nil
}

// libTable returns the global library table name.
func libTable(g *lua.LTable, name string) (*lua.LTable, error) {
	t, ok := g.RawGetString(name).(*lua.LTable)
	if !ok {
		return nil, fmt.Errorf("sandbox: the %s library is missing", name)
	}
	return t, nil
}

// goFunction returns the Go function behind a library function value.
func goFunction(v lua.LValue) lua.LGFunction {
	if f, ok := v.(*lua.LFunction); ok && f.IsG {
		return f.GFunction
	}
	return func(L *lua.LState) int {
		L.RaiseError("sandbox: library function missing")
		return 0
	}
}

// collectGarbage replaces collectgarbage, which runs a full Go collection
// for the whole process. It does nothing and returns 0.
func collectGarbage(L *lua.LState) int {
	L.Push(lua.LNumber(0))
	return 1
}

// setMetatable is Lua 5.1's setmetatable: the first argument must be a
// table (gopher-lua's would also replace the metatable shared by every
// string, number, boolean or function of the state).
func setMetatable(L *lua.LState) int {
	t := L.CheckTable(1)
	mt := L.Get(2)
	if mt != lua.LNil {
		if _, ok := mt.(*lua.LTable); !ok {
			L.ArgError(2, "nil or table expected")
		}
	}
	if m, ok := t.Metatable.(*lua.LTable); ok && m.RawGetString("__metatable") != lua.LNil {
		L.RaiseError("cannot change a protected metatable")
	}
	t.Metatable = mt
	L.SetTop(1)
	return 1
}

// tableInsert is table.insert refusing a position beyond #t+1 (as Lua 5.2
// does), which gopher-lua would honour by growing the table's array part up
// to it, a gigabyte for t[6e7].
func tableInsert(orig lua.LValue) lua.LGFunction {
	insert := goFunction(orig)
	return func(L *lua.LState) int {
		if L.GetTop() == 3 {
			t := L.CheckTable(1)
			pos := L.CheckNumber(2)
			if pos < 1 || float64(pos) > float64(t.Len()+1) {
				L.ArgError(2, "position out of bounds")
			}
		}
		return insert(L)
	}
}

// mathRandom is math.random on the state's own generator: no argument, a
// float in [0,1); m, an integer in [1,m]; m and n, an integer in [m,n].
func (b *box) mathRandom(L *lua.LState) int {
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(b.rand.Float64()))
		return 1
	case 1:
		m := int64(L.CheckNumber(1))
		if m < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(b.rand.Int64N(m) + 1))
		return 1
	}
	lo, hi := int64(L.CheckNumber(1)), int64(L.CheckNumber(2))
	if lo > hi {
		L.ArgError(2, "interval is empty")
	}
	if hi-lo+1 <= 0 {
		L.ArgError(2, "interval is too large")
	}
	L.Push(lua.LNumber(lo + b.rand.Int64N(hi-lo+1)))
	return 1
}

// mathRandomseed reseeds the state's generator (gopher-lua's reseeds the
// process-wide one).
func (b *box) mathRandomseed(L *lua.LState) int {
	seed := uint64(int64(L.CheckNumber(1)))
	b.rand = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return 0
}

// osDate is os.date with a format short enough that the result stays within
// MaxStringBytes (a conversion expands to at most 32 bytes or so).
func (b *box) osDate(orig lua.LValue) lua.LGFunction {
	date := goFunction(orig)
	return func(L *lua.LState) int {
		if L.GetTop() >= 1 {
			if f := L.CheckString(1); len(f) > b.opts.MaxStringBytes/32 {
				L.ArgError(1, fmt.Sprintf("format longer than %d bytes", b.opts.MaxStringBytes/32))
			}
		}
		return date(L)
	}
}
