package jsregexp

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// ErrTimeout is what [Matcher.MatchAt] returns when its match ran out of
// time.
var ErrTimeout = errors.New("jsregexp: match timeout")

const hexDigits = "0123456789abcdef"

func writeHex4(b *strings.Builder, v rune) {
	b.WriteByte(hexDigits[v>>12&0xF])
	b.WriteByte(hexDigits[v>>8&0xF])
	b.WriteByte(hexDigits[v>>4&0xF])
	b.WriteByte(hexDigits[v&0xF])
}

// decodeLenient decodes UTF-16 as goja reads it: a surrogate pair is one
// code point, a lone surrogate stays itself.
func decodeLenient(units []uint16) []rune {
	out := make([]rune, 0, len(units))
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		if utf16.IsSurrogate(u) && u < 0xDC00 && i+1 < len(units) {
			if r := utf16.DecodeRune(u, rune(units[i+1])); r != utf8.RuneError {
				out = append(out, r)
				i++
				continue
			}
		}
		out = append(out, u)
	}
	return out
}

// PatternFromUTF16 is the pattern goja compiles for a source given as
// UTF-16: the text, with every lone surrogate written as a \uXXXX escape
// (and, as goja does, a backslash doubled when it stands right before the
// first of them).
func PatternFromUTF16(units []uint16) string {
	runes := decodeLenient(units)
	var b strings.Builder
	escaped := false
	for i, r := range runes {
		switch {
		case utf16.IsSurrogate(r):
			if !escaped {
				escaped = true
				b.WriteString(string(runes[:i]))
				if i > 0 && runes[i-1] == '\\' {
					b.WriteByte('\\')
				}
			}
			b.WriteString(`\u`)
			writeHex4(&b, r)
		case escaped:
			b.WriteRune(r)
		}
	}
	if !escaped {
		return string(runes)
	}
	return b.String()
}

// StringUnits returns the UTF-16 code units of a goja string.
func StringUnits(s goja.String) []uint16 {
	units := make([]uint16, s.Length())
	for i := range units {
		units[i] = s.CharAt(i)
	}
	return units
}

func decodeHex4(s string) (rune, bool) {
	var v rune
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			v = v*16 + rune(c-'0')
		case 'a' <= c && c <= 'f':
			v = v*16 + rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v*16 + rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// toUnicodePattern is goja's rewrite of a pattern with the u flag: every
// escaped surrogate pair \uXXXX\uXXXX becomes the character itself.
func toUnicodePattern(p string) string {
	var b strings.Builder
	pos := 0
	for i := 0; i < len(p)-11; {
		r, size := utf8.DecodeRuneInString(p[i:])
		if r != '\\' {
			i += size
			continue
		}
		i++
		if p[i] == 'u' && p[i+5] == '\\' && p[i+6] == 'u' {
			if first, ok := decodeHex4(p[i+1 : i+5]); ok && first >= 0xD800 && first <= 0xDBFF {
				if second, ok := decodeHex4(p[i+7 : i+11]); ok && second >= 0xDC00 && second <= 0xDFFF {
					b.WriteString(p[pos : i-1])
					b.WriteRune(utf16.DecodeRune(first, second))
					i += 11
					pos = i
					continue
				}
			}
		}
		i++
	}
	if pos == 0 {
		return p
	}
	b.WriteString(p[pos:])
	return b.String()
}

// toUTF16Pattern is goja's rewrite of a pattern without the u flag: every
// character outside the BMP becomes its surrogate pair, escaped.
func toUTF16Pattern(p string) string {
	var b strings.Builder
	pos := 0
	var prev rune
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if r > 0xFFFF {
			b.WriteString(p[pos:i])
			if prev == '\\' {
				b.WriteByte('\\')
			}
			first, second := utf16.EncodeRune(r)
			b.WriteString(`\u`)
			writeHex4(&b, first)
			b.WriteString(`\u`)
			writeHex4(&b, second)
			pos = i + size
		}
		i += size
		prev = r
	}
	if pos == 0 {
		return p
	}
	b.WriteString(p[pos:])
	return b.String()
}

func convert(pattern string, unicode bool) string {
	if unicode {
		return toUnicodePattern(pattern)
	}
	return toUTF16Pattern(pattern)
}

// Backtracking reports whether goja compiles the pattern for regexp2 (the
// backtracking engine) rather than RE2: its translator refuses lookaround
// and backreferences, and RE2 refuses repeat counts over 1000. A pattern
// goja cannot compile at all counts as backtracking.
func Backtracking(pattern, flags string) bool {
	return compileRE2(pattern, flags) == nil
}

// compileRE2 is the RE2 regular expression goja compiles a pattern to, or
// nil when goja runs it on regexp2.
func compileRE2(pattern, flags string) *regexp.Regexp {
	unicode := strings.ContainsRune(flags, 'u')
	dotAll := strings.ContainsRune(flags, 's')
	re2, err := parser.TransformRegExp(convert(pattern, unicode), dotAll, unicode)
	if err != nil {
		return nil
	}
	var mode string
	for _, f := range "msi" {
		if strings.ContainsRune(flags, f) {
			mode += string(f)
		}
	}
	if mode != "" {
		re2 = "(?" + mode + ":" + re2 + ")"
	}
	re, err := regexp.Compile(re2)
	if err != nil {
		return nil
	}
	return re
}

// Matcher reruns a regular expression's match as goja runs it on regexp2.
type Matcher struct {
	re      *regexp2.Regexp // the pattern, as goja compiles it
	sticky  *regexp2.Regexp // \G(?:pattern), for the y flag; nil without it
	re2     *regexp.Regexp  // the pattern for RE2, when goja has one
	unicode bool
}

// Compile compiles pattern with flags for regexp2 as goja does (same
// rewrite, same options), with timeout as the match timeout of every
// match. With the y flag it also compiles the pattern anchored where the
// match starts (\G), so that a sticky match tries that position only.
func Compile(pattern, flags string, timeout time.Duration) (*Matcher, error) {
	unicode := strings.ContainsRune(flags, 'u')
	var opts regexp2.RegexOptions = regexp2.ECMAScript
	if strings.ContainsRune(flags, 'm') {
		opts |= regexp2.Multiline
	}
	if strings.ContainsRune(flags, 's') {
		opts |= regexp2.Singleline
	}
	if strings.ContainsRune(flags, 'i') {
		opts |= regexp2.IgnoreCase
	}
	if unicode {
		opts |= regexp2.Unicode
	}
	p := convert(pattern, unicode)
	re, err := regexp2.Compile(p, opts)
	if err != nil {
		return nil, fmt.Errorf("jsregexp: compiling %s: %w", Show(pattern, flags), err)
	}
	re.MatchTimeout = timeout
	m := &Matcher{re: re, unicode: unicode, re2: compileRE2(pattern, flags)}
	if strings.ContainsRune(flags, 'y') {
		if m.sticky, err = regexp2.Compile(`\G(?:`+p+`)`, opts); err != nil {
			return nil, fmt.Errorf("jsregexp: compiling %s: %w", Show(pattern, flags), err)
		}
		m.sticky.MatchTimeout = timeout
	}
	return m, nil
}

// spuriousRetries is how many times a match runs again when regexp2
// reports a timeout well before the timeout elapsed: its clock is a
// goroutine that ticks every 100 ms, and after it has been stopped (it
// stops a second after the last timed match) or starved, its first tick
// jumps forward and ends a match that has barely started.
const spuriousRetries = 2

// MatchAt reports whether goja's exec of the regular expression finds a
// match in s from the UTF-16 index start: at or after start, or exactly at
// start with the y flag. A match that runs out of time returns ErrTimeout;
// one that regexp2 stopped much earlier than its timeout is run again, up
// to spuriousRetries times.
func (m *Matcher) MatchAt(s goja.String, start int) (bool, error) {
	if m.sticky != nil {
		return m.find(m.sticky, s, start)
	}
	return m.find(m.re, s, start)
}

// SearchFrom reports whether the pattern matches anywhere in s at or after
// start, whatever its flags: the search goja's split, and match and replace
// with the g flag, run for every match.
func (m *Matcher) SearchFrom(s goja.String, start int) (bool, error) {
	return m.find(m.re, s, start)
}

// SearchRE2 reports whether the pattern matches anywhere in s, searched for
// in linear time on RE2, as goja's exec from 0 does; ok is false when goja
// runs the pattern on regexp2 only.
func (m *Matcher) SearchRE2(s goja.String) (found, ok bool) {
	if m.re2 == nil {
		return false, false
	}
	units := StringUnits(s)
	var runes []rune
	if m.unicode {
		runes = decodeLenient(units)
	} else {
		runes = make([]rune, len(units))
		for i, u := range units {
			runes[i] = rune(u)
		}
	}
	return m.re2.MatchReader(&runeReader{runes: runes}), true
}

// runeReader reads runes from a slice.
type runeReader struct {
	runes []rune
	pos   int
}

func (r *runeReader) ReadRune() (rune, int, error) {
	if r.pos >= len(r.runes) {
		return 0, 0, io.EOF
	}
	r.pos++
	return r.runes[r.pos-1], 1, nil
}

func (m *Matcher) find(re *regexp2.Regexp, s goja.String, start int) (bool, error) {
	units := StringUnits(s)
	if start < 0 || start > len(units) {
		return false, nil
	}
	var runes []rune
	at := start
	if m.unicode {
		var split bool
		runes, at, split = unicodeRunes(units, start)
		if split && re == m.sticky {
			// goja reports a match from inside a surrogate pair at the
			// pair's start, never at start itself.
			return false, nil
		}
	} else {
		runes = make([]rune, len(units))
		for i, u := range units {
			runes[i] = rune(u)
		}
	}
	for try := 0; ; try++ {
		began := time.Now()
		match, err := re.FindRunesMatchStartingAt(runes, at)
		if err != nil {
			if time.Since(began) < re.MatchTimeout/2 && try < spuriousRetries {
				continue
			}
			return false, ErrTimeout
		}
		return match != nil, nil
	}
}

// unicodeRunes is goja's input for a pattern with the u flag: code points
// (lone surrogates as themselves) and the rune index to start at. A start
// inside a surrogate pair (split) starts at the pair, with its first rune
// replaced by the pair's second surrogate.
func unicodeRunes(units []uint16, start int) (runes []rune, at int, split bool) {
	runes = make([]rune, 0, len(units))
	found := false
	pos := 0
	for i := 0; i <= len(units); {
		if !found {
			if pos == start {
				at, found = len(runes), true
			} else if pos > start {
				at, found, split = len(runes)-1, true, true
			}
		}
		if i == len(units) {
			break
		}
		r, size := rune(units[i]), 1
		if utf16.IsSurrogate(r) && r < 0xDC00 && i+1 < len(units) {
			if d := utf16.DecodeRune(r, rune(units[i+1])); d != utf8.RuneError {
				r, size = d, 2
			}
		}
		runes = append(runes, r)
		pos += size
		i += size
	}
	if split {
		_, second := utf16.EncodeRune(runes[at])
		runes[at] = second
	}
	return runes, at, split
}
