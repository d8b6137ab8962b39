package luavalue

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// Reasons for refusing a value, as dsl.SnapshotError.Reason.
const (
	reasonNaN         = "NaN is not lossless JSON"
	reasonNegZero     = "-0 is not lossless JSON"
	reasonInf         = "Infinity is not lossless JSON"
	reasonNegInf      = "-Infinity is not lossless JSON"
	reasonFunction    = "a function is not lossless JSON"
	reasonUserdata    = "a userdata is not lossless JSON"
	reasonThread      = "a thread (coroutine) is not lossless JSON"
	reasonChannel     = "a channel is not lossless JSON"
	reasonCycle       = "the value contains itself (cycle)"
	reasonMetatable   = "a table with a metatable is not lossless JSON"
	reasonMixed       = "a table with both string and number keys is not lossless JSON"
	reasonArrayString = "an array (dsh.array, or from a JSON array) with a string key is not lossless JSON"
	reasonString      = "invalid UTF-8 in string"
	reasonKey         = "invalid UTF-8 in key"

	// Reasons that stand for exceeding a limit; fail words them (see dsl.Limits).
	reasonDepth = "\x00depth"
	reasonNodes = "\x00nodes"
	reasonBytes = "\x00bytes"
)

// maxSafeInteger is 2^53: integer keys beyond it do not all have a float64.
const maxSafeInteger = 1 << 53

// ToGo converts a Lua value to the Go form of JSON values (nil, bool,
// float64, string, []any, *dsl.Object) by the rules of the package
// documentation, or returns a *dsl.SnapshotError whose Path starts with root
// and names the first value refused (depth first, object members in sorted
// key order, array elements in order), as in value.items[3] or value["a b"].
//
// schema is the raw JSON Schema (dsl Go form, *dsl.Object or map[string]any)
// that applies to v, or nil. It only decides what an unmarked empty table
// is: an array where the schema admits arrays and not objects (type "array",
// a type list holding "array" but not "object", or a oneOf whose branches
// say so), an object everywhere else. ToGo follows properties,
// additionalProperties, items and, where exactly one branch fits the table,
// oneOf down the value; it validates nothing.
//
// ToGo never runs script code and never calls a metamethod.
func (c *Converter) ToGo(v lua.LValue, root string, schema any) (any, error) {
	g := c.spare
	if g == nil {
		g = &toGo{c: c}
		g.visit = g.visitEntry
	} else {
		c.spare = nil
	}
	out, err := g.run(v, root, schema)
	g.reset()
	c.spare = g
	return out, err
}

// entry is one key and value of a table being read.
type entry struct {
	key string // an object member's key
	idx int64  // an integer key
	num bool   // the key is the number idx, not the string key
	val lua.LValue
}

// frame is a table being read.
type frame struct {
	t       *lua.LTable
	object  bool
	ents    []entry // the children, in output order
	i       int     // the index after the current child
	schema  any     // the schema of this table, narrowed to its kind, or nil
	list    []any
	members []dsl.Member
	slot    *any // where a finished object goes
}

// scan is what reading one table's keys found.
type scan struct {
	n        int // entries seen
	nStr     int // string keys
	nPos     int // integer keys in 1..2^53
	maxPos   int64
	nLow     int   // integer keys in -2^53..0
	minLow   int64 // the least of those
	badTypes uint32
	nan      bool    // a NaN key
	odd      bool    // a number key that is not an integer within ±2^53
	minOdd   float64 // the least of those
	budget   int     // entries that may still be kept
}

// scanDepth is how deep the stack gets before the tables on it are kept in a
// map for the cycle check; below it, scanning the stack is cheaper.
const scanDepth = 32

// Beyond these capacities a toGo does not keep its buffers for the next call.
const (
	keepStack   = 256
	keepEntries = 4096
	keepMembers = 1024
)

// toGo is the state of one ToGo call. It walks with an explicit stack.
type toGo struct {
	c       *Converter
	root    string
	nodes   int
	stack   []frame
	open    map[*lua.LTable]struct{}
	ents    []entry      // the entries of the open tables, each frame's a slice of it
	members []dsl.Member // the members of the open objects, likewise
	sc      scan
	visit   func(k, v lua.LValue) // visitEntry, bound once
	out     any                   // the result, kept here so that it need not escape
	// How far this call filled stack, ents and members: only that part of
	// them holds references for reset to clear.
	usedStack, usedEnts, usedMembers int
	maxDepth                         int
	maxNodes                         int
	maxBytes                         int
	bytes                            int // the size so far, as dsl.Limits.MaxBytes counts it
	hole                             int // 1 + the JSON index of the missing array element being reported, or 0
}

// reset readies g for another call, dropping every reference to this one's
// values.
func (g *toGo) reset() {
	clear(g.stack[:g.usedStack])
	g.stack = g.stack[:0]
	if cap(g.stack) > keepStack {
		g.stack = nil
	}
	clear(g.ents[:g.usedEnts])
	g.ents = g.ents[:0]
	if cap(g.ents) > keepEntries {
		g.ents = nil
	}
	clear(g.members[:g.usedMembers])
	g.members = g.members[:0]
	if cap(g.members) > keepMembers {
		g.members = nil
	}
	g.usedStack, g.usedEnts, g.usedMembers = 0, 0, 0
	g.open = nil
	g.out = nil
	g.nodes, g.bytes = 0, 0
	g.hole = 0
	g.sc = scan{}
}

func (g *toGo) run(v lua.LValue, root string, schema any) (any, error) {
	g.root, g.maxDepth, g.maxNodes, g.maxBytes = root, g.c.lim.MaxDepth, g.c.lim.MaxNodes, g.c.lim.MaxBytes
	g.out = nil
	g.nodes, g.bytes = 1, dsl.ValueBytes
	if g.bytes > g.maxBytes {
		return nil, g.fail(reasonBytes)
	}
	if reason := g.enter(v, &g.out, schema); reason != "" {
		return nil, g.fail(reason)
	}
	for len(g.stack) > 0 {
		f := &g.stack[len(g.stack)-1]
		if f.i == len(f.ents) {
			g.finish()
			continue
		}
		e := &f.ents[f.i]
		f.i++
		var slot *any
		if f.object {
			if !utf8.ValidString(e.key) {
				return nil, g.fail(reasonKey)
			}
			f.members[f.i-1].Key = e.key
			slot = &f.members[f.i-1].Value
		} else {
			slot = &f.list[f.i-1]
		}
		var childSchema any
		if f.schema != nil {
			if _, ok := e.val.(*lua.LTable); ok {
				childSchema = schemaChild(f.schema, f.object, e.key)
			}
		}
		if reason := g.enter(e.val, slot, childSchema); reason != "" {
			return nil, g.fail(reason)
		}
	}
	return g.out, nil
}

// finish closes the table on top of the stack.
func (g *toGo) finish() {
	f := &g.stack[len(g.stack)-1]
	if f.object {
		// NewObject copies the members; their place in the buffer is free
		// again, as this frame's are the last ones in it.
		*f.slot = dsl.NewObject(f.members...)
		clear(f.members)
		g.members = g.members[:len(g.members)-len(f.members)]
	}
	clear(f.ents)
	g.ents = g.ents[:len(g.ents)-len(f.ents)]
	if g.open != nil {
		delete(g.open, f.t)
	}
	g.stack[len(g.stack)-1] = frame{}
	g.stack = g.stack[:len(g.stack)-1]
}

// enter converts v into *slot, opening a frame for a non-empty table. It
// returns the reason v is refused, or "".
func (g *toGo) enter(v lua.LValue, slot *any, schema any) string {
	switch x := v.(type) {
	case lua.LString:
		if g.bytes += len(x); g.bytes > g.maxBytes {
			return reasonBytes
		}
		if !utf8.ValidString(string(x)) {
			return reasonString
		}
		*slot = string(x)
	case lua.LNumber:
		f := float64(x)
		if reason := floatReason(f); reason != "" {
			return reason
		}
		*slot = f
	case lua.LBool:
		*slot = bool(x)
	case *lua.LTable:
		return g.openTable(x, slot, schema)
	case *lua.LUserData:
		if x != g.c.null {
			return reasonUserdata
		}
		*slot = nil
	case *lua.LNilType, nil:
		return "nil is not lossless JSON (use " + g.c.nullName + " for null)"
	case *lua.LFunction:
		return reasonFunction
	case *lua.LState:
		return reasonThread
	case lua.LChannel:
		return reasonChannel
	default:
		return "a " + v.Type().String() + " is not lossless JSON"
	}
	return ""
}

func floatReason(f float64) string {
	switch {
	case math.IsNaN(f):
		return reasonNaN
	case math.IsInf(f, 1):
		return reasonInf
	case math.IsInf(f, -1):
		return reasonNegInf
	case f == 0 && math.Signbit(f):
		return reasonNegZero
	}
	return ""
}

// The kinds of table, by mark.
const (
	unmarked = iota
	markedArray
	markedObject
)

// openTable reads t's keys and classifies it.
func (g *toGo) openTable(t *lua.LTable, slot *any, schema any) string {
	kind := unmarked
	switch t.Metatable {
	case lua.LNil:
	case lua.LValue(g.c.arrayMT):
		kind = markedArray
	case lua.LValue(g.c.objectMT):
		kind = markedObject
	default:
		return reasonMetatable
	}
	if g.isOpen(t) {
		return reasonCycle
	}
	if len(g.stack)+1 > g.maxDepth {
		return reasonDepth
	}

	start := len(g.ents)
	g.sc = scan{budget: g.maxNodes - g.nodes}
	t.ForEach(g.visit) // reads the Go maps and slice of t; calls no metamethod
	g.usedEnts = max(g.usedEnts, len(g.ents))
	sc := &g.sc
	ents := g.ents[start:]
	if sc.n > sc.budget {
		return g.tooMany()
	}
	if reason := sc.keyReason(kind); reason != "" {
		return reason
	}
	object := false
	switch {
	case kind == markedObject:
		object = true
	case kind == markedArray:
		if sc.nStr > 0 {
			return reasonArrayString
		}
	case sc.nStr > 0:
		if sc.nPos+sc.nLow > 0 {
			return reasonMixed
		}
		object = true
	case sc.n == 0:
		object = schema == nil || admits(schema) != admitArray
	}
	if sc.nLow > 0 && !object {
		return "a number key " + lua.LNumber(sc.minLow).String() + " is not lossless JSON (array indices are 1..n)"
	}

	if object {
		if len(ents) == 0 {
			g.ents = g.ents[:start]
			*slot = dsl.NewObject()
			return ""
		}
		if reason := objectOrder(ents, sc.nStr < sc.n); reason != "" {
			return reason
		}
		if !g.addBytes(ents, true) {
			return reasonBytes
		}
		n := len(ents)
		mstart := len(g.members)
		g.members = slices.Grow(g.members, n)[:mstart+n]
		g.usedMembers = max(g.usedMembers, len(g.members))
		g.push(frame{t: t, object: true, ents: ents[:n:n], schema: narrow(schema, admitObject),
			members: g.members[mstart : mstart+n : mstart+n], slot: slot})
		return ""
	}

	if len(ents) == 0 {
		g.ents = g.ents[:start]
		*slot = []any{}
		return ""
	}
	if !slices.IsSortedFunc(ents, compareIndex) {
		slices.SortFunc(ents, compareIndex) // integer keys that gopher-lua keeps in its hash part
	}
	if int64(sc.nPos) != sc.maxPos {
		for i := range ents {
			if ents[i].idx != int64(i)+1 {
				g.ents = g.ents[:start]
				return g.holeReason(i)
			}
		}
	}
	if !g.addBytes(ents, false) {
		return reasonBytes
	}
	list := make([]any, len(ents))
	*slot = list
	g.push(frame{t: t, ents: ents[:len(ents):len(ents)], schema: narrow(schema, admitArray), list: list})
	return ""
}

// holeReason is the reason for the missing element at JSON index i, which
// it also puts into the path.
func (g *toGo) holeReason(i int) string {
	g.hole = i + 1
	return fmt.Sprintf("nil at Lua index %d of an array is not lossless JSON (use %s for null)", i+1, g.c.nullName)
}

func compareIndex(a, b entry) int { return cmp.Compare(a.idx, b.idx) }

// objectOrder sorts an object's entries by key, writing number keys (of a
// table marked as an object) as decimal strings, and refuses two keys that
// are the same JSON key.
func objectOrder(ents []entry, numbers bool) string {
	if numbers {
		for i := range ents {
			if ents[i].num {
				ents[i].key = strconv.FormatInt(ents[i].idx, 10)
			}
		}
	}
	slices.SortFunc(ents, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	if numbers {
		for i := 1; i < len(ents); i++ {
			if ents[i].key == ents[i-1].key {
				return "the number key " + ents[i].key + " and the string key " + strconv.Quote(ents[i].key) +
					" are the same JSON key"
			}
		}
	}
	return ""
}

// keyReason refuses the keys no table may have: keys that are neither
// strings nor numbers, and number keys that are not integers within ±2^53.
func (sc *scan) keyReason(kind int) string {
	if sc.badTypes != 0 {
		for _, t := range [...]lua.LValueType{lua.LTBool, lua.LTTable, lua.LTFunction, lua.LTUserData, lua.LTThread, lua.LTChannel} {
			if sc.badTypes&(1<<t) != 0 {
				return "a " + t.String() + " key is not lossless JSON"
			}
		}
		return "a key of another type is not lossless JSON"
	}
	switch {
	case sc.nan:
		return "a number key nan is not lossless JSON"
	case sc.odd:
		return "a number key " + lua.LNumber(sc.minOdd).String() + " is not lossless JSON"
	}
	return ""
}

// visitEntry records one key and value of the table being opened.
func (g *toGo) visitEntry(k, v lua.LValue) {
	sc := &g.sc
	sc.n++
	var e entry
	switch k := k.(type) {
	case lua.LString:
		sc.nStr++
		e = entry{key: string(k), val: v}
	case lua.LNumber:
		f := float64(k)
		switch {
		case f != f:
			sc.nan = true
			return
		case f != math.Trunc(f) || f > maxSafeInteger || f < -maxSafeInteger:
			if !sc.odd || f < sc.minOdd {
				sc.minOdd = f
			}
			sc.odd = true
			return
		}
		i := int64(f)
		if i >= 1 {
			sc.nPos++
			sc.maxPos = max(sc.maxPos, i)
		} else {
			if sc.nLow == 0 || i < sc.minLow {
				sc.minLow = i
			}
			sc.nLow++
		}
		e = entry{idx: i, num: true, val: v}
	default:
		sc.badTypes |= 1 << k.Type()
		return
	}
	if sc.n <= sc.budget {
		g.ents = append(g.ents, e)
	}
}

// isOpen reports whether t is a table on the stack.
func (g *toGo) isOpen(t *lua.LTable) bool {
	if g.open != nil {
		_, ok := g.open[t]
		return ok
	}
	for i := range g.stack {
		if g.stack[i].t == t {
			return true
		}
	}
	return false
}

// push opens a frame.
func (g *toGo) push(f frame) {
	g.nodes += len(f.ents)
	g.stack = append(g.stack, f)
	g.usedStack = max(g.usedStack, len(g.stack))
	switch {
	case g.open != nil:
		g.open[f.t] = struct{}{}
	case len(g.stack) > scanDepth:
		g.open = make(map[*lua.LTable]struct{}, 2*len(g.stack))
		for i := range g.stack {
			g.open[g.stack[i].t] = struct{}{}
		}
	}
}

// tooMany is the reason for exceeding MaxNodes.
func (g *toGo) tooMany() string { return reasonNodes }

// addBytes counts a table's entries, and an object's keys, and reports
// whether the size is still within MaxBytes.
func (g *toGo) addBytes(ents []entry, object bool) bool {
	g.bytes += dsl.ValueBytes * len(ents)
	if object {
		for i := range ents {
			g.bytes += len(ents[i].key)
		}
	}
	return g.bytes <= g.maxBytes
}

// fail returns the error for reason at the current position: the root, then
// the child each open table is at, then the element hole names, if any.
func (g *toGo) fail(reason string) error {
	n := len(g.stack)
	if g.hole > 0 {
		n++
	}
	var b strings.Builder
	dsl.WritePath(&b, g.root, n, func(b *strings.Builder, i int) {
		if i == len(g.stack) {
			dsl.WritePathIndex(b, g.hole-1)
			return
		}
		f := &g.stack[i]
		if f.object {
			dsl.WritePathKey(b, f.ents[f.i-1].key)
		} else {
			dsl.WritePathIndex(b, f.i-1)
		}
	})
	return limitError(b.String(), reason, g.c.lim)
}

// limitError is the error for reason at path, worded by dsl when reason
// stands for a limit.
func limitError(path, reason string, lim Limits) error {
	switch reason {
	case reasonDepth:
		return dsl.DepthError(path, lim.MaxDepth)
	case reasonNodes:
		return dsl.NodesError(path, lim.MaxNodes)
	case reasonBytes:
		return dsl.BytesError(path, lim.MaxBytes)
	}
	return &dsl.SnapshotError{Path: path, Reason: reason}
}
