package dsl

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Marshal returns the canonical JSON text of v: byte for byte what
// JavaScript's JSON.stringify gives for the same value.
//
// Marshal accepts what [Snapshot] accepts and refuses the rest with the same
// *SnapshotError. Members of an *Object are written in order, a map[string]any
// with its keys sorted.
func Marshal(v any) ([]byte, error) {
	bp := marshalBufs.Get().(*[]byte)
	b, err := AppendJSON((*bp)[:0], v)
	var out []byte
	if err == nil {
		out = append([]byte(nil), b...)
	}
	if cap(b) <= maxPooledBuf {
		*bp = b[:0]
		marshalBufs.Put(bp)
	}
	return out, err
}

// AppendJSON appends the canonical JSON text of v to dst, as [Marshal] writes
// it. On error it returns dst as it was given.
func AppendJSON(dst []byte, v any) ([]byte, error) {
	b, err := encodeJSON(dst, v, cycleCheckDepth)
	if err == errNotGoForm {
		// v holds values of other Go types: the snapshot converts them or
		// says which one is refused.
		s, serr := Snapshot(v)
		if serr != nil {
			return dst, serr
		}
		b, err = encodeJSON(dst, s, cycleCheckDepth)
		if err == errNotGoForm {
			err = &SnapshotError{Path: "value", Reason: fmt.Sprintf("snapshot of %T is not in Go form", v)}
		}
	}
	if err != nil {
		return dst, err
	}
	return b, nil
}

// maxPooledBuf is the largest buffer Marshal keeps for reuse.
const maxPooledBuf = 64 << 10

var marshalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// cycleCheckDepth is the nesting depth from which the encoder tracks the
// containers it is inside: a cycle is only noticed once it has been unrolled
// that deep, and shallow values pay nothing for the check.
const cycleCheckDepth = 64

// errNotGoForm says the encoder met a value outside the Go form of JSON.
var errNotGoForm = errors.New("dsl: value not in Go form")

const reasonCycle = "the value contains itself (cycle)"

// encFrame is an open array or object of the encoder: list or obj, and the
// index of the item being written.
type encFrame struct {
	list []any
	obj  *Object
	i    int
}

// encIdent identifies a container for cycle detection: a slice by its first
// element and length, an object by its pointer.
type encIdent struct {
	first *any
	n     int
	obj   *Object
}

func (f *encFrame) ident() encIdent {
	if f.obj != nil {
		return encIdent{obj: f.obj}
	}
	return encIdent{first: &f.list[0], n: len(f.list)}
}

// encodeJSON appends the text of v, which is in Go form, to b without
// recursion. Containers are checked for cycles from depth trackFrom on; a
// cycle found that way is reported where it first repeats.
func encodeJSON(b []byte, v any, trackFrom int) ([]byte, error) {
	root := v
	stack := make([]encFrame, 0, 16)
	var open map[encIdent]struct{} // containers open at depth >= trackFrom
	push := func(f encFrame) bool {
		if len(stack) >= trackFrom {
			id := f.ident()
			if _, dup := open[id]; dup {
				return false
			}
			if open == nil {
				open = make(map[encIdent]struct{})
			}
			open[id] = struct{}{}
		}
		stack = append(stack, f)
		return true
	}
	var ok bool
	for {
		switch x := v.(type) {
		case nil:
			b = append(b, "null"...)
		case bool:
			if x {
				b = append(b, "true"...)
			} else {
				b = append(b, "false"...)
			}
		case float64:
			if x == 0 || x-x != 0 { // zero, NaN or infinite
				if r := floatReason(x); r != "" {
					return b, encodeError(stack, len(stack), r)
				}
			}
			b = appendJSNumber(b, x)
		case string:
			if b, ok = appendJSONString(b, x); !ok {
				return b, encodeError(stack, len(stack), "invalid UTF-8 in string")
			}
		case []any:
			if x == nil {
				return b, encodeError(stack, len(stack), "nil []any is not lossless JSON")
			}
			if len(x) == 0 {
				b = append(b, "[]"...)
				break
			}
			if !push(encFrame{list: x}) {
				return b, cycleError(root, stack, trackFrom)
			}
			b = append(b, '[')
			v = x[0]
			continue
		case *Object:
			if x == nil {
				return b, encodeError(stack, len(stack), "nil *dsl.Object is not lossless JSON")
			}
			if len(x.members) == 0 {
				b = append(b, "{}"...)
				break
			}
			if !push(encFrame{obj: x}) {
				return b, cycleError(root, stack, trackFrom)
			}
			b = append(b, '{')
			m := &x.members[0]
			if b, ok = appendJSONString(b, m.Key); !ok {
				return b, encodeError(stack, len(stack)-1, reasonKeyUTF8)
			}
			b = append(b, ':')
			v = m.Value
			continue
		default:
			return b, errNotGoForm
		}

		// v is written: move to the next item of the innermost open container,
		// closing the containers that are done.
		for {
			n := len(stack)
			if n == 0 {
				return b, nil
			}
			f := &stack[n-1]
			f.i++
			if f.obj == nil {
				if f.i < len(f.list) {
					b = append(b, ',')
					v = f.list[f.i]
					break
				}
				b = append(b, ']')
			} else {
				if f.i < len(f.obj.members) {
					m := &f.obj.members[f.i]
					b = append(b, ',')
					if b, ok = appendJSONString(b, m.Key); !ok {
						return b, encodeError(stack, n-1, reasonKeyUTF8)
					}
					b = append(b, ':')
					v = m.Value
					break
				}
				b = append(b, '}')
			}
			if n-1 >= trackFrom {
				delete(open, f.ident())
			}
			stack = stack[:n-1]
		}
	}
}

// reasonKeyUTF8 refuses a key; the path is the object's, as for a map key.
const reasonKeyUTF8 = "invalid UTF-8 in object key"

// cycleError returns the error for a container found open again.
func cycleError(root any, stack []encFrame, trackFrom int) error {
	if trackFrom == 0 {
		return encodeError(stack, len(stack), reasonCycle)
	}
	// Only deep containers were tracked: walk again tracking all of them, to
	// name the first place where the value repeats.
	_, err := encodeJSON(nil, root, 0)
	if err == nil {
		err = encodeError(stack, len(stack), reasonCycle) // not reached: the walk is the same
	}
	return err
}

// encodeError returns the error for the item being written in the outermost
// depth containers of stack.
func encodeError(stack []encFrame, depth int, reason string) error {
	var b strings.Builder
	b.WriteString("value")
	for _, f := range stack[:depth] {
		if f.obj != nil {
			WritePathKey(&b, f.obj.members[f.i].Key)
			continue
		}
		b.WriteByte('[')
		b.WriteString(strconv.Itoa(f.i))
		b.WriteByte(']')
	}
	return &SnapshotError{Path: b.String(), Reason: reason}
}

// appendJSNumber appends x as ECMAScript's Number::toString writes it. x is
// finite and not -0.
func appendJSNumber(b []byte, x float64) []byte {
	if x == math.Trunc(x) && x >= -maxSafeInteger && x <= maxSafeInteger {
		// Every integer up to 2^53 is exact, so its shortest round-trip
		// digits are its own.
		return strconv.AppendInt(b, int64(x), 10)
	}
	return appendJSNumberDigits(b, x)
}

// appendJSNumberDigits is appendJSNumber for any x: it lays out the shortest
// round-trip digits as Number::toString does.
func appendJSNumberDigits(b []byte, x float64) []byte {
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], x, 'e', -1, 64) // [-]d[.ddd]e±dd
	if s[0] == '-' {
		b = append(b, '-')
		s = s[1:]
	}
	e := len(s) - 1
	for s[e] != 'e' {
		e--
	}
	exp, _ := strconv.Atoi(string(s[e+1:]))
	var dbuf [24]byte
	digits := append(dbuf[:0], s[0])
	if e > 1 {
		digits = append(digits, s[2:e]...)
	}
	k, n := len(digits), exp+1 // x = 0.digits × 10^n
	switch {
	case k <= n && n <= 21:
		b = append(b, digits...)
		for range n - k {
			b = append(b, '0')
		}
	case 0 < n && n <= 21:
		b = append(b, digits[:n]...)
		b = append(b, '.')
		b = append(b, digits[n:]...)
	case -6 < n && n <= 0:
		b = append(b, '0', '.')
		for range -n {
			b = append(b, '0')
		}
		b = append(b, digits...)
	default:
		b = append(b, digits[0])
		if k > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if n-1 >= 0 {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(n-1), 10)
	}
	return b
}

// plainASCII marks the ASCII bytes a JSON string holds as they are.
var plainASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const lowerHex = "0123456789abcdef"

// appendJSONString appends s quoted as JSON.stringify quotes it; ok is false
// when s is not valid UTF-8.
func appendJSONString(b []byte, s string) (_ []byte, ok bool) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return b, false
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"'), true
}

// SyntaxError reports JSON text that [Unmarshal] refuses: malformed, or not
// lossless.
type SyntaxError struct {
	Offset int64  // byte offset of the problem in the input
	Msg    string // what is wrong
}

func (e *SyntaxError) Error() string {
	return "json: " + e.Msg + " at offset " + strconv.FormatInt(e.Offset, 10)
}

// Unmarshal parses the JSON text data (RFC 8259) and returns its value in Go
// form: nil, bool, float64, string, []any or *Object, objects keeping the
// order of the document.
//
// Besides malformed text it refuses what is not lossless JSON: duplicate keys,
// invalid UTF-8, lone surrogate escapes, a leading byte order mark, and numbers
// a float64 does not hold as written (overflow, a non-zero literal that
// underflows to 0, -0, an integer literal that no float64 equals, such as
// 9007199254740993). Errors are *SyntaxError.
//
// Strings without escapes share the memory of one copy of data: a string kept
// from the result keeps that copy alive.
func Unmarshal(data []byte) (any, error) {
	d := decoders.Get().(*jsonDecoder)
	// Unescaped strings are cut from one copy of the input rather than
	// allocated one by one.
	d.data, d.text, d.pos = data, string(data), 0
	v, err := d.parse()
	d.reset()
	return v, err
}

// decFrame is an open array or object of the decoder. Its items so far are
// d.vals[start:] or d.mems[start:].
type decFrame struct {
	obj   bool
	start int
	key   string              // object: the key whose value is being read
	keys  map[string]struct{} // object: the keys so far, once there are many
}

// dupScanLimit is the member count up to which duplicate keys are found by
// scanning rather than with a set.
const dupScanLimit = 16

// jsonDecoder parses JSON text without recursion.
type jsonDecoder struct {
	data  []byte
	text  string // data as a string
	pos   int
	stack []decFrame
	vals  []any    // items of the open arrays
	mems  []Member // members of the open objects
	buf   []byte   // scratch for strings with escapes
}

// decoders keeps decoders for reuse of their scratch space.
var decoders = sync.Pool{New: func() any { return new(jsonDecoder) }}

// maxPooledScratch is the most items a pooled decoder keeps room for.
const maxPooledScratch = 1024

// reset empties d and returns it to the pool unless its scratch has grown big.
func (d *jsonDecoder) reset() {
	// Closed containers cleared their items already.
	clear(d.stack)
	clear(d.vals)
	clear(d.mems)
	d.data, d.text = nil, ""
	if cap(d.stack) > maxPooledScratch || cap(d.vals) > maxPooledScratch || cap(d.mems) > maxPooledScratch || cap(d.buf) > maxPooledBuf {
		return
	}
	d.stack, d.vals, d.mems, d.buf = d.stack[:0], d.vals[:0], d.mems[:0], d.buf[:0]
	decoders.Put(d)
}

func (d *jsonDecoder) parse() (any, error) {
	if len(d.data) >= 3 && d.data[0] == 0xef && d.data[1] == 0xbb && d.data[2] == 0xbf {
		return nil, d.errAt(0, "byte order mark is not allowed")
	}
	var v any
	var err error
	for {
		d.skipSpace()
		if d.pos >= len(d.data) {
			return nil, d.eof()
		}
		switch c := d.data[d.pos]; c {
		case '{':
			d.pos++
			d.skipSpace()
			if d.pos < len(d.data) && d.data[d.pos] == '}' {
				d.pos++
				v = newObjectCap(0)
				break
			}
			d.stack = append(d.stack, decFrame{obj: true, start: len(d.mems)})
			if err = d.key(); err != nil {
				return nil, err
			}
			continue
		case '[':
			d.pos++
			d.skipSpace()
			if d.pos < len(d.data) && d.data[d.pos] == ']' {
				d.pos++
				v = []any{}
				break
			}
			d.stack = append(d.stack, decFrame{start: len(d.vals)})
			continue
		case '"':
			if v, err = d.string(); err != nil {
				return nil, err
			}
		case 't':
			if v, err = d.literal("true", true); err != nil {
				return nil, err
			}
		case 'f':
			if v, err = d.literal("false", false); err != nil {
				return nil, err
			}
		case 'n':
			if v, err = d.literal("null", nil); err != nil {
				return nil, err
			}
		default:
			if c != '-' && (c < '0' || c > '9') {
				return nil, d.invalid(d.pos, "looking for beginning of value")
			}
			if v, err = d.number(); err != nil {
				return nil, err
			}
		}

		// v is complete: add it to the innermost open container, closing the
		// containers that end here.
		for {
			n := len(d.stack)
			d.skipSpace()
			if n == 0 {
				if d.pos < len(d.data) {
					return nil, d.invalid(d.pos, "after top-level value")
				}
				return v, nil
			}
			if d.pos >= len(d.data) {
				return nil, d.eof()
			}
			f := &d.stack[n-1]
			c := d.data[d.pos]
			if f.obj {
				d.mems = append(d.mems, Member{f.key, v})
				if c == ',' {
					d.pos++
					if err = d.key(); err != nil {
						return nil, err
					}
					break
				}
				if c != '}' {
					return nil, d.invalid(d.pos, "after object key:value pair")
				}
				d.pos++
				members := d.mems[f.start:]
				o := newObjectCap(len(members))
				for _, m := range members {
					o.appendNew(m.Key, m.Value)
				}
				clear(members)
				d.mems = d.mems[:f.start]
				v = o
			} else {
				d.vals = append(d.vals, v)
				if c == ',' {
					d.pos++
					break
				}
				if c != ']' {
					return nil, d.invalid(d.pos, "after array element")
				}
				d.pos++
				items := d.vals[f.start:]
				v = append([]any(nil), items...)
				clear(items)
				d.vals = d.vals[:f.start]
			}
			*f = decFrame{}
			d.stack = d.stack[:n-1]
		}
	}
}

// key reads an object key and its colon for the innermost open object.
func (d *jsonDecoder) key() error {
	d.skipSpace()
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != '"' {
		return d.invalid(d.pos, "looking for beginning of object key string")
	}
	start := d.pos
	key, err := d.string()
	if err != nil {
		return err
	}
	f := &d.stack[len(d.stack)-1]
	seen := d.mems[f.start:]
	if f.keys == nil && len(seen) < dupScanLimit {
		for i := range seen {
			if seen[i].Key == key {
				return d.duplicate(start, key)
			}
		}
	} else {
		if f.keys == nil {
			f.keys = make(map[string]struct{}, 2*len(seen))
			for _, m := range seen {
				f.keys[m.Key] = struct{}{}
			}
		}
		if _, dup := f.keys[key]; dup {
			return d.duplicate(start, key)
		}
		f.keys[key] = struct{}{}
	}
	f.key = key
	d.skipSpace()
	if d.pos >= len(d.data) {
		return d.eof()
	}
	if d.data[d.pos] != ':' {
		return d.invalid(d.pos, "after object key")
	}
	d.pos++
	return nil
}

func (d *jsonDecoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *jsonDecoder) literal(word string, v any) (any, error) {
	for i := 1; i < len(word); i++ {
		p := d.pos + i
		if p >= len(d.data) {
			return nil, d.eof()
		}
		if d.data[p] != word[i] {
			return nil, d.invalid(p, "in literal "+word)
		}
	}
	d.pos += len(word)
	return v, nil
}

// string reads a string literal starting at its opening quote.
func (d *jsonDecoder) string() (string, error) {
	data := d.data
	start := d.pos + 1
	i := start
	for i < len(data) {
		c := data[i]
		if c < utf8.RuneSelf {
			if plainASCII[c] {
				i++
				continue
			}
			if c == '"' {
				d.pos = i + 1
				return d.text[start:i], nil
			}
			if c == '\\' {
				return d.escapedString(start, i)
			}
			return "", d.invalid(i, "in string literal")
		}
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size == 1 {
			return "", d.errAt(i, "invalid UTF-8 in string")
		}
		i += size
	}
	return "", d.eof()
}

// escapedString finishes a string literal whose first escape is at i.
func (d *jsonDecoder) escapedString(start, i int) (string, error) {
	data := d.data
	b := append(d.buf[:0], data[start:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.pos = i + 1
			d.buf = b
			return string(b), nil
		case c == '\\':
			if i+1 >= len(data) {
				return "", d.eof()
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, err := d.hex4(i + 2)
				if err != nil {
					return "", err
				}
				if utf8.ValidRune(r) {
					b = utf8.AppendRune(b, r)
					i += 6
					continue
				}
				// r is a surrogate: only a high one followed by a low one is a character.
				if r < 0xdc00 && i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
					if lo, err := d.hex4(i + 8); err == nil && lo >= 0xdc00 && lo <= 0xdfff {
						b = utf8.AppendRune(b, 0x10000+(r-0xd800)<<10+(lo-0xdc00))
						i += 12
						continue
					}
				}
				return "", d.errAt(i, fmt.Sprintf(`lone surrogate \u%04x in string`, r))
			default:
				return "", d.invalid(i+1, "in string escape code")
			}
			i += 2
		case c < 0x20:
			return "", d.invalid(i, "in string literal")
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return "", d.errAt(i, "invalid UTF-8 in string")
			}
			b = append(b, data[i:i+size]...)
			i += size
		}
	}
	return "", d.eof()
}

// hex4 reads the four hex digits of a \u escape at p.
func (d *jsonDecoder) hex4(p int) (rune, error) {
	var r rune
	for j := p; j < p+4; j++ {
		if j >= len(d.data) {
			return 0, d.eof()
		}
		c := d.data[j]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, d.invalid(j, `in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// number reads a number literal and refuses it when a float64 would not hold
// it as written.
func (d *jsonDecoder) number() (any, error) {
	data := d.data
	start := d.pos
	i := start
	neg := data[i] == '-'
	if neg {
		i++
	}
	if i >= len(data) {
		return nil, d.eof()
	}
	intStart := i
	switch c := data[i]; {
	case c == '0':
		i++
	case '1' <= c && c <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return nil, d.invalid(i, "in numeric literal")
	}
	intDigits := i - intStart
	simple := true
	if i < len(data) && data[i] == '.' {
		simple = false
		i++
		if i >= len(data) {
			return nil, d.eof()
		}
		if data[i] < '0' || data[i] > '9' {
			return nil, d.invalid(i, "after decimal point in numeric literal")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		simple = false
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) {
			return nil, d.eof()
		}
		if data[i] < '0' || data[i] > '9' {
			return nil, d.invalid(i, "in exponent of numeric literal")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	lit := data[start:i]
	d.pos = i

	if simple && intDigits <= 15 {
		// At most 15 digits: exact, and within 2^53.
		var u uint64
		for _, c := range data[intStart:i] {
			u = u*10 + uint64(c-'0')
		}
		switch {
		case neg && u == 0:
			return nil, d.errAt(start, "number "+clipLiteral(lit)+" is negative zero")
		case neg:
			return -float64(u), nil
		case u < uint64(len(smallNumbers)):
			return smallNumbers[u], nil
		}
		return float64(u), nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	switch {
	case math.IsInf(f, 0):
		return nil, d.errAt(start, "number "+clipLiteral(lit)+" overflows a float64")
	case err != nil:
		return nil, d.errAt(start, "number "+clipLiteral(lit)+" is malformed") // not reached: the grammar was checked
	case f == 0 && nonZeroMantissa(lit):
		return nil, d.errAt(start, "number "+clipLiteral(lit)+" underflows to 0")
	case f == 0 && neg:
		return nil, d.errAt(start, "number "+clipLiteral(lit)+" is negative zero")
	case simple && !exactInteger(string(lit), f):
		return nil, d.errAt(start, "integer "+clipLiteral(lit)+" is not exactly a float64")
	}
	return f, nil
}

// smallNumbers holds the small integers already boxed, so that reading one
// does not allocate.
var smallNumbers = func() (t [1024]any) {
	for i := range t {
		t[i] = float64(i)
	}
	return t
}()

// nonZeroMantissa reports whether a number literal has a non-zero digit
// before its exponent.
func nonZeroMantissa(lit []byte) bool {
	for _, c := range lit {
		switch {
		case c == 'e' || c == 'E':
			return false
		case '1' <= c && c <= '9':
			return true
		}
	}
	return false
}

// clipLiteral returns a number literal for an error message, shortened when long.
func clipLiteral(lit []byte) string {
	const max = 40
	if len(lit) > max {
		return string(lit[:max]) + "…"
	}
	return string(lit)
}

func (d *jsonDecoder) errAt(offset int, msg string) error {
	return &SyntaxError{Offset: int64(offset), Msg: msg}
}

func (d *jsonDecoder) eof() error {
	return d.errAt(len(d.data), "unexpected end of JSON input")
}

func (d *jsonDecoder) duplicate(offset int, key string) error {
	q, _ := appendJSONString(nil, key)
	return d.errAt(offset, "duplicate key "+string(q))
}

// invalid reports an unexpected byte at p; context says what was expected.
func (d *jsonDecoder) invalid(p int, context string) error {
	what := "byte " + fmt.Sprintf("0x%02x", d.data[p])
	if r, size := utf8.DecodeRune(d.data[p:]); r != utf8.RuneError || size > 1 {
		what = "character " + strconv.QuoteRune(r)
	}
	return d.errAt(p, "invalid "+what+" "+context)
}
