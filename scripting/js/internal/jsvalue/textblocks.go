package jsvalue

import (
	"reflect"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// TextBlocks reads v as content made of text blocks only — an array of
// objects whose own properties are exactly type, the string "text", and
// text, a string — and returns a block made by mk of each text, for the
// renderer's result that a tool call converts every time. It reads through
// ToGo's fast path (see fast.go), calling nothing, and answers only when
// ToGo would give the same texts: ok is false for any other value, for a
// shape the fast path does not read (an accessor, a frozen copy it does not
// know, a proxy, another prototype), for a string with a lone surrogate, and
// for content that might not fit lim; ToGo then gives the answer, or the
// reason it refuses the value. TextBlocks allocates the slice of blocks,
// what mk does, and the strings it must convert from UTF-16.
func TextBlocks[B any](r *Realm, v goja.Value, lim Limits, mk func(text string) B) (blocks []B, ok bool) {
	l := r.fast
	o, isObj := v.(*goja.Object)
	if l == nil || !isObj || o == nil {
		return nil, false
	}
	lim = r.limitsFor(lim)
	var buf [8]goja.Value
	elems, ok := l.array(o, r.arrayProto, buf[:0])
	if !ok || 1+3*len(elems) > lim.MaxNodes || lim.MaxDepth < 2 {
		return nil, false
	}
	// An upper bound on what ToGo counts (see Limits): every value, the
	// keys, the type's string, and each text, at 3 bytes a UTF-16 unit when
	// it is not held as a Go string.
	size := dsl.ValueBytes * (1 + 3*len(elems))
	if size > lim.MaxBytes {
		return nil, false
	}
	var kbuf [2]string
	var vbuf [2]goja.Value
	blocks = make([]B, len(elems))
	for i, e := range elems {
		eo, isObj := e.(*goja.Object)
		if !isObj {
			return nil, false
		}
		keys, vals, res := l.object(eo, r.objectProto, kbuf[:0], vbuf[:0], 2, lim.MaxBytes)
		if res != fastOK || len(keys) != 2 {
			return nil, false
		}
		var kind, text goja.String
		for k, key := range keys {
			s, isStr := vals[k].(goja.String)
			if !isStr {
				return nil, false
			}
			switch key {
			case "type":
				kind = s
			case "text":
				text = s
			}
		}
		if kind == nil || text == nil || kind.String() != "text" {
			return nil, false
		}
		size += len("type") + len("text") + len("text") + r.sizeUpper(text) // the keys, the type, the text
		if size > lim.MaxBytes {
			return nil, false
		}
		s, valid := goString(text)
		if !valid {
			return nil, false
		}
		blocks[i] = mk(s)
	}
	return blocks, true
}

// sizeUpper returns an upper bound on the UTF-8 size of s: the exact size
// for the representations that hold a Go string, 3 bytes a UTF-16 unit for
// the others.
func (r *Realm) sizeUpper(s goja.String) int {
	if t := reflect.TypeOf(s); t == r.noCopyStrings[0] || t == r.noCopyStrings[1] {
		return len(s.String())
	}
	return 3 * s.Length()
}
