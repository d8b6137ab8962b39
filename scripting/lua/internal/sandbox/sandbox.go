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

// ownFuncs is how many functions open makes besides gopher-lua's kept ones
// (a bound: past it, the functions take a second allocation).
const ownFuncs = 30

// open builds the sandboxed libraries: only their kept members, each state
// with tables and function values of its own (see stdlib.go).
func (b *box) open(L *lua.LState) error {
	s, err := std()
	if err != nil {
		return err
	}
	g := L.G.Global
	// The state's Go functions, as L.NewFunction makes them, in one
	// allocation rather than one each.
	funcs := make([]lua.LFunction, 0, s.count+ownFuncs)
	fn := func(f lua.LGFunction) *lua.LFunction {
		funcs = append(funcs, lua.LFunction{IsG: true, Env: L.Env, GFunction: f, Upvalues: []*lua.Upvalue{}})
		return &funcs[len(funcs)-1]
	}
	// The fields of the table being built: lib starts a library's with
	// its kept members, set adds one, and table makes the table.
	var buf [40]field
	fields := buf[:0]
	kept := func(name string) {
		for _, member := range stdKept[name] {
			fields = append(fields, field{member, fn(s.funcs[name][member])})
		}
	}
	lib := func(name string) {
		fields = buf[:0]
		kept(name)
	}
	set := func(name string, v lua.LValue) { fields = append(fields, field{name, v}) }
	table := func(sh *shape) *lua.LTable {
		t := L.CreateTable(0, 0)
		setFields(t, sh, fields)
		return t
	}
	wrapped := func(libName, member string) lua.LGFunction { return s.funcs[libName][member] }

	b.concatFn = fn(b.concat)
	self := L.NewUserData()
	self.Value = b
	L.G.Registry.RawSetString(boxKey, self)
	b.protect = fn(protected)

	lib(lua.StringLibName)
	set("rep", fn(b.strRep))
	set("format", fn(b.strFormat(wrapped(lua.StringLibName, "format"))))
	set("find", fn(b.strFind))
	set("match", fn(b.strMatch))
	set("gsub", fn(b.strGsub))
	gmatch := fn(b.strGmatch)
	set("gmatch", gmatch)
	set("gfind", gmatch)
	str := table(&shapeString)
	// Strings get a metatable of their own (gopher-lua's would be the
	// string library table itself, string.__index == string), which
	// getmetatable("") does not reveal.
	strMeta := L.CreateTable(0, 2)
	strMeta.RawSetString("__index", str)
	strMeta.RawSetString("__metatable", lua.LString("protected"))
	L.SetMetatable(lua.LString(""), strMeta)

	lib(lua.TabLibName)
	set("concat", fn(b.tableConcat))
	set("insert", fn(tableInsert(wrapped(lua.TabLibName, "insert"))))
	tbl := table(&shapeTable)

	lib(lua.MathLibName)
	set("pi", lua.LNumber(math.Pi))
	set("huge", lua.LNumber(math.Inf(1)))
	set("random", fn(b.mathRandom))
	set("randomseed", fn(b.mathRandomseed))
	m := table(&shapeMath)

	lib(lua.CoroutineLibName)
	set("create", fn(b.create(wrapped(lua.CoroutineLibName, "create"))))
	set("resume", fn(b.resume(wrapped(lua.CoroutineLibName, "resume"))))
	set("wrap", fn(b.wrap(wrapped(lua.CoroutineLibName, "wrap"))))
	co := table(&shapeCoroutine)

	lib(lua.OsLibName)
	set("date", fn(b.osDate(wrapped(lua.OsLibName, "date"))))
	osLib := table(&shapeOs)

	// The globals, the library tables last.
	fields = buf[:0]
	set("_G", g)
	set("_VERSION", lua.LString(lua.LuaVersion))
	kept(lua.BaseLibName)
	set("ipairs", L.NewClosure(s.ipairs, fn(s.ipairsAux)))
	set("pairs", L.NewClosure(s.pairs, fn(s.pairsAux)))
	set("require", fn(b.require))
	set("load", fn(b.load))
	set("loadstring", fn(b.loadstring))
	set("collectgarbage", fn(collectGarbage))
	set("setmetatable", fn(setMetatable))
	set("pcall", fn(b.pcall))
	set("xpcall", fn(b.xpcall))
	set(lua.StringLibName, str)
	set(lua.TabLibName, tbl)
	set(lua.MathLibName, m)
	set(lua.CoroutineLibName, co)
	set(lua.OsLibName, osLib)
	setFields(g, &shapeGlobals, fields)
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
func tableInsert(insert lua.LGFunction) lua.LGFunction {
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
func (b *box) osDate(date lua.LGFunction) lua.LGFunction {
	return func(L *lua.LState) int {
		if L.GetTop() >= 1 {
			if f := L.CheckString(1); len(f) > b.opts.MaxStringBytes/32 {
				L.ArgError(1, fmt.Sprintf("format longer than %d bytes", b.opts.MaxStringBytes/32))
			}
		}
		return date(L)
	}
}
