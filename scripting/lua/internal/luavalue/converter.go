package luavalue

import (
	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// Default limits of [Converter.ToGo] and [Converter.ToLua]: dsl's, the same
// as JavaScript's.
const (
	DefaultMaxDepth = dsl.DefaultMaxDepth
	DefaultMaxNodes = dsl.DefaultMaxNodes
	DefaultMaxBytes = dsl.DefaultMaxBytes
)

// Limits bound the values a [Converter] converts: nesting depth, number of
// values and size in bytes (see dsl.Limits). A zero or negative field takes
// its default.
type Limits = dsl.Limits

// The strings getmetatable returns for the null sentinel and for marked tables.
const (
	NullName   = "dsh.null"
	ArrayName  = "dsh.array"
	ObjectName = "dsh.object"
)

// Converter converts between the Lua values of one state and the Go form of
// JSON values. It remembers which tables are JSON arrays or objects through
// marks that live with the tables (see the package documentation).
//
// A Converter is not safe for concurrent use; use it from the goroutine that
// drives its state.
type Converter struct {
	state    *lua.LState
	lim      Limits
	null     *lua.LUserData
	arrayMT  *lua.LTable
	objectMT *lua.LTable
	nullName string // how messages name the sentinel (NullName)

	spare    *toGo      // the buffers of the last ToGo, reused by the next
	luaStack []luaFrame // the stack of the last ToLua, reused by the next
}

// New returns a converter for L with the given limits. It creates the null
// sentinel and the two mark metatables; nothing is stored in L's globals or
// registry.
func New(L *lua.LState, lim Limits) *Converter {
	lim = lim.WithDefaults()
	nullMT := L.CreateTable(0, 2)
	nullMT.RawSetString("__metatable", lua.LString(NullName))
	nullMT.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString(NullName))
		return 1
	}))
	c := &Converter{
		state:    L,
		lim:      lim,
		null:     &lua.LUserData{Value: nullValue{}, Metatable: nullMT},
		arrayMT:  L.CreateTable(0, 1),
		objectMT: L.CreateTable(0, 1),
		nullName: NullName,
	}
	c.arrayMT.RawSetString("__metatable", lua.LString(ArrayName))
	c.objectMT.RawSetString("__metatable", lua.LString(ObjectName))
	return c
}

// nullValue is the Go value inside the null sentinel.
type nullValue struct{}

// Null returns the dsh.null sentinel: a userdata, the same one for every call,
// that converts to JSON null. tostring(dsh.null) is "dsh.null", as is
// getmetatable(dsh.null).
func (c *Converter) Null() lua.LValue { return c.null }

// SetNullName sets how conversion messages name the null sentinel, for a
// state that offers it under another name (run_code programs' null): "nil
// is not lossless JSON (use <name> for null)".
func (c *Converter) SetNullName(name string) { c.nullName = name }

// IsNull reports whether v is this converter's null sentinel.
func (c *Converter) IsNull(v lua.LValue) bool { return v == lua.LValue(c.null) }

// MarkArray marks t as a JSON array: ToGo converts it to an array even when
// it is empty, and refuses it unless its keys are 1..n. It replaces any
// metatable t had.
func (c *Converter) MarkArray(t *lua.LTable) { t.Metatable = c.arrayMT }

// MarkObject marks t as a JSON object: ToGo converts it to an object even
// when it is empty or its keys are integers (which become decimal strings).
// It replaces any metatable t had.
func (c *Converter) MarkObject(t *lua.LTable) { t.Metatable = c.objectMT }

// IsArray reports whether t carries the array mark.
func (c *Converter) IsArray(t *lua.LTable) bool { return t.Metatable == lua.LValue(c.arrayMT) }

// IsObject reports whether t carries the object mark.
func (c *Converter) IsObject(t *lua.LTable) bool { return t.Metatable == lua.LValue(c.objectMT) }
