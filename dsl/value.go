package dsl

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// Undefined stands for a script's undefined value. Only the validator gives it
// a meaning (an absent property); everything else rejects it as non-lossless.
type Undefined struct{}

// maxSafeInteger is 2^53, the largest magnitude up to which every integer is a float64.
const maxSafeInteger = 1 << 53

// SnapshotError reports the first value a snapshot refused and where it is.
// Its Path is short however deep the value (see [WritePath]), so the
// message stays a few hundred characters at most.
type SnapshotError struct {
	Path   string // e.g. value.items[3]
	Reason string // e.g. NaN is not lossless JSON
	Err    error  // ErrLimit when the value exceeds [Limits], else nil
}

func (e *SnapshotError) Error() string { return e.Path + ": " + e.Reason }

// Unwrap returns Err.
func (e *SnapshotError) Unwrap() error { return e.Err }

// Snapshot returns a detached deep copy of v in the Go form of JSON values, or a
// *SnapshotError naming the path (rooted at "value") of the first value that is
// not lossless JSON.
//
// It accepts nil, bool, string (valid UTF-8), finite float64 and float32 other
// than -0, integers of every kind within ±2^53, json.Number, *Object, []any,
// map[string]any (whose keys come out sorted), and slices, arrays and
// string-keyed maps of accepted values. Shared references are copied each time
// they occur; a value that contains itself is refused, and so is one nested
// deeper than [DefaultMaxDepth] levels.
func Snapshot(v any) (any, error) { return SnapshotAt("value", v) }

// SnapshotAt is [Snapshot] with another name for the root of error paths.
func SnapshotAt(root string, v any) (any, error) {
	w := walker{copy: true, maxDepth: DefaultMaxDepth}
	return w.run(root, v)
}

// SnapshotWithin is [SnapshotAt] that also refuses a value beyond lim (its
// zero fields taking their defaults), as the script hosts do. The limits are
// checked before anything is copied.
func SnapshotWithin(root string, v any, lim Limits) (any, error) {
	lim = lim.WithDefaults()
	w := walker{copy: true, maxDepth: lim.MaxDepth, maxNodes: lim.MaxNodes, maxBytes: lim.MaxBytes}
	return w.run(root, v)
}

// CheckLossless returns nil when v is lossless JSON, else the error [Snapshot]
// would return, without copying anything.
func CheckLossless(v any) error {
	w := walker{maxDepth: DefaultMaxDepth}
	_, err := w.run("value", v)
	return err
}

// IsLossless reports whether v is lossless JSON.
func IsLossless(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	}
	return CheckLossless(v) == nil
}

// frameKind says what a walker frame iterates over.
type frameKind uint8

const (
	frameObject frameKind = iota
	frameSlice
	frameMap   // map[string]any, keys sorted
	frameRList // reflect slice or array
	frameRMap  // reflect string-keyed map, keys sorted
)

// frame is one open container of an iterative walk.
type frame struct {
	kind  frameKind
	i, n  int
	obj   *Object
	list  []any
	m     map[string]any
	keys  []string
	rv    reflect.Value
	id    identity
	dObj  *Object // destination when copying
	dList []any
}

// identity is what makes a container the same container for cycle detection.
type identity struct {
	p unsafe.Pointer
	n int
}

// framePool recycles walker stacks, which would otherwise be allocated for
// every container value checked or copied.
var framePool = sync.Pool{New: func() any { s := make([]frame, 0, 16); return &s }}

// deepScan is the stack depth up to which cycle checks scan the stack.
const deepScan = 32

// walker converts (or checks) a value without recursion.
type walker struct {
	copy    bool
	stack   []frame
	open    map[identity]int // open containers, once the stack is deep
	indexed []identity       // the stack prefix that open reflects

	// Limits; maxNodes and maxBytes are not checked when zero.
	maxDepth, maxNodes, maxBytes int
	nodes, bytes                 int
}

func (w *walker) run(root string, v any) (any, error) {
	out, fr, open, reason := w.enter(v)
	if reason != "" {
		return nil, &SnapshotError{Path: root, Reason: reason}
	}
	w.nodes = 1
	if err := w.account(root, out, fr, open); err != nil {
		return nil, err
	}
	if !open {
		return out, nil
	}
	// The root's leading plain scalars need no stack: a root holding nothing
	// else (most arguments and results) is done without one. A scalar that
	// would pass maxBytes is left to the loop below, which reports it.
	for fr.i < fr.n {
		key, child := fr.child()
		if !plainScalar(child) || (fr.kind == frameObject && !utf8.ValidString(key)) {
			break
		}
		if w.maxBytes > 0 {
			n := w.bytes + len(key)
			if s, ok := child.(string); ok {
				n += len(s)
			}
			if n > w.maxBytes {
				break
			}
			w.bytes = n
		}
		if w.copy {
			if fr.dObj != nil {
				fr.dObj.appendNew(key, child)
			} else {
				fr.dList[fr.i] = child
			}
		}
		fr.i++
	}
	if fr.i == fr.n {
		return out, nil
	}
	// used is how far the walk filled the stack: only that part holds
	// references to clear before the stack goes back to the pool.
	used := 1
	if p, ok := framePool.Get().(*[]frame); ok {
		w.stack = (*p)[:0]
		defer func() {
			clear(w.stack[:used])
			*p = w.stack[:0]
			framePool.Put(p)
		}()
	}
	w.stack = append(w.stack, fr)
	for len(w.stack) > 0 {
		top := len(w.stack) - 1
		f := &w.stack[top]
		if f.i >= f.n {
			w.stack = w.stack[:top]
			continue
		}
		key, child := f.child()
		if w.maxBytes > 0 {
			w.bytes += len(key)
			if s, ok := child.(string); ok {
				w.bytes += len(s)
			}
			if w.bytes > w.maxBytes {
				return nil, BytesError(w.path(root), w.maxBytes)
			}
		}
		if plainScalar(child) && (f.kind != frameObject || utf8.ValidString(key)) {
			// The common case, without the cost of a frame: the scalar is
			// immutable and kept as the same interface value.
			if w.copy {
				if f.dObj != nil {
					f.dObj.appendNew(key, child)
				} else {
					f.dList[f.i] = child
				}
			}
			f.i++
			continue
		}
		cout, cfr, open, reason := w.enter(child)
		if f.kind == frameObject && !utf8.ValidString(key) {
			reason = "invalid UTF-8 in object key"
		}
		if reason == "" && open && w.onStack(cfr.id) {
			reason = "the value contains itself (cycle)"
		}
		if reason != "" {
			return nil, &SnapshotError{Path: w.path(root), Reason: reason}
		}
		if s, ok := cout.(string); ok && w.maxBytes > 0 {
			if _, plain := child.(string); !plain { // a named string type
				if w.bytes += len(s); w.bytes > w.maxBytes {
					return nil, BytesError(w.path(root), w.maxBytes)
				}
			}
		}
		if open {
			if len(w.stack)+1 > w.maxDepth {
				return nil, DepthError(w.path(root), w.maxDepth)
			}
			if err := w.account(root, nil, cfr, true); err != nil {
				return nil, err
			}
		}
		if w.copy {
			if f.dObj != nil {
				f.dObj.appendNew(key, cout)
			} else {
				f.dList[f.i] = cout
			}
		}
		f.i++
		if open {
			w.stack = append(w.stack, cfr)
			used = max(used, len(w.stack))
		}
	}
	return out, nil
}

// account counts a container's children (or, at the root, the root string's
// bytes) against maxNodes and maxBytes, before any of them is copied. The
// children's strings and keys are counted as they are reached.
func (w *walker) account(root string, v any, fr frame, open bool) error {
	if w.maxNodes == 0 {
		return nil
	}
	at := root
	if len(w.stack) > 0 {
		at = w.path(root)
	}
	if open && fr.n > w.maxNodes-w.nodes {
		return NodesError(at, w.maxNodes)
	}
	if open {
		w.nodes += fr.n
		w.bytes += ValueBytes * fr.n
	} else {
		w.bytes += ValueBytes
		if s, ok := v.(string); ok {
			w.bytes += len(s)
		}
	}
	if len(w.stack) == 0 && open {
		w.bytes += ValueBytes // the root container itself
	}
	if w.bytes > w.maxBytes {
		return BytesError(at, w.maxBytes)
	}
	return nil
}

// plainScalar reports whether v is a lossless scalar already in Go form.
func plainScalar(v any) bool {
	switch x := v.(type) {
	case nil, bool:
		return true
	case string:
		return utf8.ValidString(x)
	case float64:
		return floatReason(x) == ""
	}
	return false
}

// child returns the current child's key (objects) and value.
func (f *frame) child() (string, any) {
	switch f.kind {
	case frameObject:
		m := f.obj.members[f.i]
		return m.Key, m.Value
	case frameSlice:
		return "", f.list[f.i]
	case frameMap:
		k := f.keys[f.i]
		return k, f.m[k]
	case frameRList:
		return "", f.rv.Index(f.i).Interface()
	default:
		k := f.keys[f.i]
		return k, f.rv.MapIndex(reflect.ValueOf(k).Convert(f.rv.Type().Key())).Interface()
	}
}

// onStack reports whether a container is open on the stack. Shallow stacks are
// scanned; past deepScan frames an index of the open containers takes over.
func (w *walker) onStack(id identity) bool {
	if id.p == nil {
		return false
	}
	if len(w.stack) <= deepScan {
		if len(w.indexed) > 0 {
			w.indexed, w.open = w.indexed[:0], nil
		}
		for i := range w.stack {
			if w.stack[i].id == id {
				return true
			}
		}
		return false
	}
	if w.open == nil {
		w.open = make(map[identity]int, 2*deepScan)
	}
	// Bring the index up to date with the stack. Since the last call at this
	// depth, one frame was pushed and any number popped, so what the index
	// holds beyond the stack's length is stale and the rest is a prefix.
	for len(w.indexed) > 0 && (len(w.indexed) > len(w.stack) || w.indexed[len(w.indexed)-1] != w.stack[len(w.indexed)-1].id) {
		last := w.indexed[len(w.indexed)-1]
		if w.open[last]--; w.open[last] == 0 {
			delete(w.open, last)
		}
		w.indexed = w.indexed[:len(w.indexed)-1]
	}
	for i := len(w.indexed); i < len(w.stack); i++ {
		w.indexed = append(w.indexed, w.stack[i].id)
		w.open[w.stack[i].id]++
	}
	return w.open[id] > 0
}

// path renders the location of the current child of the top frame. Frames
// below the top have already moved past the child they descended into.
func (w *walker) path(root string) string {
	var b strings.Builder
	WritePath(&b, root, len(w.stack), func(b *strings.Builder, i int) {
		f := w.stack[i]
		if i < len(w.stack)-1 {
			f.i--
		}
		switch f.kind {
		case frameSlice, frameRList:
			WritePathIndex(b, f.i)
		default:
			key, _ := f.child()
			WritePathKey(b, key)
		}
	})
	return b.String()
}

// WritePathIndex appends one array step of a value path: [i].
func WritePathIndex(b *strings.Builder, i int) {
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(']')
}

// WritePathKey appends one object step of a value path as [Snapshot] errors
// render it: .key, or ["key"] (JSON-quoted) when key is not identifier-like.
// A key longer than 32 bytes is cut, and ends with "…". Other value
// boundaries (the script hosts) use it so that paths read alike.
func WritePathKey(b *strings.Builder, key string) {
	if IsIdentifier(key) {
		b.WriteByte('.')
		if len(key) > pathKey {
			b.WriteString(key[:pathKey]) // ASCII
			b.WriteString("…")
			return
		}
		b.WriteString(key)
		return
	}
	b.WriteString(`["`)
	var buf [16]byte
	n := 0
	for i := 0; i < len(key); {
		r, size := utf8.DecodeRuneInString(key[i:])
		var piece []byte
		if r == utf8.RuneError && size == 1 {
			// Invalid UTF-8, only from Go input: \xff, as strconv.Quote has it.
			piece = append(buf[:0], '\\', 'x', lowerHex[key[i]>>4], lowerHex[key[i]&0xf])
		} else {
			q, _ := appendJSONString(buf[:0], key[i:i+size])
			piece = q[1 : len(q)-1]
		}
		if n+len(piece) > pathKey {
			b.WriteString("…")
			break
		}
		b.Write(piece)
		n += len(piece)
		i += size
	}
	b.WriteString(`"]`)
}

// IsIdentifier reports whether s is an ASCII JavaScript identifier
// ([A-Za-z_$][A-Za-z0-9_$]*): a key that needs no quoting.
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// enter converts a scalar, or opens a container frame (open is then true). A
// non-empty reason means v is not lossless. Scalars already in Go form are
// returned as the same interface value, so no new box is allocated.
func (w *walker) enter(v any) (out any, fr frame, open bool, reason string) {
	switch x := v.(type) {
	case nil, bool:
		return v, fr, false, ""
	case string:
		if !utf8.ValidString(x) {
			return nil, fr, false, "invalid UTF-8 in string"
		}
		return v, fr, false, ""
	case float64:
		if r := floatReason(x); r != "" {
			return nil, fr, false, r
		}
		return v, fr, false, ""
	case *Object:
		if x == nil {
			return nil, fr, false, "nil *dsl.Object is not lossless JSON"
		}
		fr = frame{kind: frameObject, obj: x, n: len(x.members), id: identity{unsafe.Pointer(x), 0}}
		if w.copy {
			fr.dObj = newObjectCap(fr.n)
			out = fr.dObj
		}
		return out, fr, true, ""
	case []any:
		if x == nil {
			return nil, fr, false, "nil []any is not lossless JSON"
		}
		fr = frame{kind: frameSlice, list: x, n: len(x)}
		if len(x) > 0 {
			fr.id = identity{unsafe.Pointer(unsafe.SliceData(x)), len(x)}
		}
		if w.copy {
			fr.dList = make([]any, len(x))
			out = fr.dList
		}
		return out, fr, true, ""
	case map[string]any:
		if x == nil {
			return nil, fr, false, "nil map[string]any is not lossless JSON"
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			if !utf8.ValidString(k) {
				return nil, fr, false, "invalid UTF-8 in object key"
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fr = frame{kind: frameMap, m: x, keys: keys, n: len(keys), id: identity{reflect.ValueOf(x).UnsafePointer(), 0}}
		if w.copy {
			fr.dObj = newObjectCap(fr.n)
			out = fr.dObj
		}
		return out, fr, true, ""
	case float32:
		return w.enter(float64(x))
	case int:
		return intValue(int64(x))
	case int64:
		return intValue(x)
	case int32:
		return float64(x), fr, false, ""
	case int16:
		return float64(x), fr, false, ""
	case int8:
		return float64(x), fr, false, ""
	case uint:
		return uintValue(uint64(x))
	case uint64:
		return uintValue(x)
	case uint32:
		return float64(x), fr, false, ""
	case uint16:
		return float64(x), fr, false, ""
	case uint8:
		return float64(x), fr, false, ""
	case json.Number:
		f, r := losslessNumber(string(x))
		if r != "" {
			return nil, fr, false, r
		}
		return f, fr, false, ""
	case Undefined:
		return nil, fr, false, "undefined is not lossless JSON"
	}
	return w.enterReflect(v)
}

// enterReflect handles named scalar kinds, typed slices, arrays and string-keyed maps.
func (w *walker) enterReflect(v any) (out any, fr frame, open bool, reason string) {
	rv := reflect.ValueOf(v)
	bad := fmt.Sprintf("%T is not lossless JSON", v)
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool(), fr, false, ""
	case reflect.String:
		return w.enter(rv.String())
	case reflect.Float32, reflect.Float64:
		return w.enter(rv.Float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intValue(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintValue(rv.Uint())
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && (rv.IsNil() || rv.Type().Elem().Kind() == reflect.Uint8) {
			return nil, fr, false, bad
		}
		fr = frame{kind: frameRList, rv: rv, n: rv.Len()}
		if rv.Kind() == reflect.Slice && fr.n > 0 {
			fr.id = identity{rv.UnsafePointer(), fr.n}
		}
		if w.copy {
			fr.dList = make([]any, fr.n)
			out = fr.dList
		}
		return out, fr, true, ""
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.IsNil() {
			return nil, fr, false, bad
		}
		keys := make([]string, 0, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				return nil, fr, false, "invalid UTF-8 in object key"
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fr = frame{kind: frameRMap, rv: rv, keys: keys, n: len(keys), id: identity{rv.UnsafePointer(), 0}}
		if w.copy {
			fr.dObj = newObjectCap(fr.n)
			out = fr.dObj
		}
		return out, fr, true, ""
	}
	return nil, fr, false, bad
}

func floatReason(x float64) string {
	switch {
	case x == 0:
		if math.Signbit(x) {
			return "-0 is not lossless JSON"
		}
	case math.IsNaN(x):
		return "NaN is not lossless JSON"
	case math.IsInf(x, 1):
		return "Infinity is not lossless JSON"
	case math.IsInf(x, -1):
		return "-Infinity is not lossless JSON"
	}
	return ""
}

func intValue(i int64) (any, frame, bool, string) {
	if i > maxSafeInteger || i < -maxSafeInteger {
		return nil, frame{}, false, "integer " + strconv.FormatInt(i, 10) + " is outside ±2^53"
	}
	return float64(i), frame{}, false, ""
}

func uintValue(u uint64) (any, frame, bool, string) {
	if u > maxSafeInteger {
		return nil, frame{}, false, "integer " + strconv.FormatUint(u, 10) + " is outside ±2^53"
	}
	return float64(u), frame{}, false, ""
}

// losslessNumber parses a JSON number literal, refusing what a float64 cannot
// hold as written: overflow, a non-zero literal that underflows to zero, -0,
// and an integer literal that no float64 equals. reason is empty when the
// literal is accepted.
func losslessNumber(lit string) (f float64, reason string) {
	intPart, isInt, ok := scanJSONNumber(lit)
	if !ok {
		return 0, "number " + strconv.Quote(lit) + " is not a JSON number"
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, "number " + lit + " is not a JSON number"
	}
	switch {
	case math.IsInf(f, 0):
		return 0, "number " + lit + " overflows a float64"
	case f == 0 && math.Signbit(f):
		return 0, "-0 is not lossless JSON"
	case f == 0 && !allZeroDigits(lit):
		return 0, "number " + lit + " underflows to 0"
	case isInt && intPart > 15 && !exactInteger(lit, f):
		return 0, "integer " + lit + " is not exactly a float64"
	}
	return f, ""
}

// exactInteger reports whether the integer literal lit stands for f, its
// nearest float64, without loss: it is f exactly (1e20 written out in full),
// or it is the text Marshal writes for f (1152921504606847000 for 2^60). It is
// not for 9007199254740993, which reads as 9007199254740992.
func exactInteger(lit string, f float64) bool {
	if string(appendJSNumber(nil, f)) == lit {
		return true
	}
	want, ok := new(big.Int).SetString(lit, 10)
	if !ok {
		return false
	}
	got, acc := new(big.Float).SetFloat64(f).Int(nil)
	return acc == big.Exact && got.Cmp(want) == 0
}

// scanJSONNumber checks the RFC 8259 number grammar. It returns the count of
// integer digits and whether the literal has neither fraction nor exponent.
func scanJSONNumber(s string) (intDigits int, isInt, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return 0, false, false
	}
	intDigits = i
	if s[0] == '-' {
		intDigits--
	}
	isInt = true
	if i < len(s) && s[i] == '.' {
		isInt = false
		i++
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return 0, false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isInt = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start {
			return 0, false, false
		}
	}
	return intDigits, isInt, i == len(s)
}

// allZeroDigits reports whether the mantissa of a JSON number literal is all zeros.
func allZeroDigits(lit string) bool {
	for i := 0; i < len(lit); i++ {
		switch c := lit[i]; {
		case c == 'e' || c == 'E':
			return true
		case c >= '1' && c <= '9':
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
