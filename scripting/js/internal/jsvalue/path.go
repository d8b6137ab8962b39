package jsvalue

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// maxKeySegment is the length from which loneKeySegment cuts a key.
const maxKeySegment = 34

// Error paths use the notation of dsl.Snapshot: the root name, then .key for
// identifier-like keys, ["key"] (JSON-quoted) for the others and [i] for
// array elements, as in value.items[3] or value["a b"].c.

// loneKeySegment renders a key holding a lone surrogate as ["…"], escaping
// the lone surrogate as \udxxx the way JSON.stringify does. Like
// dsl.WritePathKey, it cuts a long key, ending it with "…".
func loneKeySegment(units []uint16) string {
	var b strings.Builder
	b.WriteString(`["`)
	const hex = "0123456789abcdef"
	for i := 0; i < len(units); i++ {
		if b.Len() > maxKeySegment {
			b.WriteString("…")
			break
		}
		u := rune(units[i])
		switch {
		case utf16.IsSurrogate(u) && u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff:
			b.WriteRune(utf16.DecodeRune(u, rune(units[i+1])))
			i++
		case utf16.IsSurrogate(u) || u < 0x20 && u != '\b' && u != '\f' && u != '\n' && u != '\r' && u != '\t':
			b.WriteString(`\u`)
			b.WriteByte(hex[u>>12&0xf])
			b.WriteByte(hex[u>>8&0xf])
			b.WriteByte(hex[u>>4&0xf])
			b.WriteByte(hex[u&0xf])
		case u == '"' || u == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u == '\b':
			b.WriteString(`\b`)
		case u == '\f':
			b.WriteString(`\f`)
		case u == '\n':
			b.WriteString(`\n`)
		case u == '\r':
			b.WriteString(`\r`)
		case u == '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(u)
		}
	}
	b.WriteString(`"]`)
	return b.String()
}

// goString returns s as UTF-8. JavaScript strings are UTF-16 and may hold
// lone surrogates, which UTF-8 cannot; ok is false for those.
//
// goja's String method on a string value decodes it with unicode/utf16,
// which turns a lone surrogate into U+FFFD, so a result without U+FFFD (and
// valid UTF-8: a string imported from Go returns its bytes as they were) is
// exact. Otherwise the code units are read one by one (CharAt reads a Go
// slice) to tell a real U+FFFD from a lone surrogate.
func goString(s goja.String) (str string, ok bool) {
	str = s.String()
	if utf8.ValidString(str) && !strings.Contains(str, "\uFFFD") {
		return str, true
	}
	units := codeUnits(s)
	if hasLoneSurrogate(units) {
		return "", false
	}
	return string(utf16.Decode(units)), true
}

// codeUnits returns the UTF-16 code units of s.
func codeUnits(s goja.String) []uint16 {
	units := make([]uint16, s.Length())
	for i := range units {
		units[i] = s.CharAt(i)
	}
	return units
}

// hasLoneSurrogate reports whether units holds a surrogate that is not half
// of a high-low pair.
func hasLoneSurrogate(units []uint16) bool {
	for i := 0; i < len(units); i++ {
		u := units[i]
		switch {
		case u < 0xd800 || u > 0xdfff:
		case u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff:
			i++
		default:
			return true
		}
	}
	return false
}

// utf8Size returns the size in UTF-8 of the UTF-16 code units, and whether
// they hold a lone surrogate (counted as 3 bytes, as U+FFFD).
func utf8Size(units []uint16) (n int, lone bool) {
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case u < 0x80:
			n++
		case u < 0x800:
			n += 2
		case u < 0xd800 || u > 0xdfff:
			n += 3
		case u < 0xdc00 && i+1 < len(units) && units[i+1] >= 0xdc00 && units[i+1] <= 0xdfff:
			n += 4
			i++
		default:
			n += 3
			lone = true
		}
	}
	return n, lone
}

// utf16ToString converts code units without a lone surrogate, whose UTF-8
// size is n, in one allocation of n bytes.
func utf16ToString(units []uint16, n int) string {
	var b strings.Builder
	b.Grow(n)
	for i := 0; i < len(units); i++ {
		r := rune(units[i])
		if utf16.IsSurrogate(r) && i+1 < len(units) {
			r = utf16.DecodeRune(r, rune(units[i+1]))
			i++
		}
		b.WriteRune(r)
	}
	return b.String()
}
