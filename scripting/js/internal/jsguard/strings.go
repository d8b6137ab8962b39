package jsguard

import (
	"strings"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// String results made in one native call: split with a string separator
// makes an array of one string per piece, replace and replaceAll with a
// string pattern a string whose size follows from the matches. Both are
// computed here before the builtin runs, from the UTF-8 form of the
// strings (the one goja's split itself works on): exact for ASCII, and an
// upper bound otherwise (a code unit never takes fewer UTF-8 bytes). A
// regular expression pattern goes through RegExp.prototype[Symbol.split]
// or [Symbol.replace], bounded in regexp.go by the number of matches.

// stringCheck returns the check of a String.prototype method at path
// wrapped around impl, or nil when it has none.
func (g *guard) stringCheck(path string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	switch path {
	case "String.prototype.split":
		return g.splitChecked(impl)
	case "String.prototype.replace":
		return g.replaceChecked(path, false, impl)
	case "String.prototype.replaceAll":
		return g.replaceChecked(path, true, impl)
	}
	return nil
}

// splitChecked refuses a split by a string whose pieces would take more
// than the cap (pieceBytes each): "x".repeat(1e8).split("") made 4.8 GiB.
func (g *guard) splitChecked(impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	const name = "String.prototype.split"
	return func(c goja.FunctionCall) goja.Value {
		if _, isObj := c.Argument(0).(*goja.Object); isObj {
			return impl(c) // its Symbol.split, if any, decides
		}
		s, ok := g.thisString(c.This)
		if !ok {
			return impl(c)
		}
		sepArg, limitArg := c.Argument(0), c.Argument(1)
		limit := int64(-1)
		if !goja.IsUndefined(limitArg) {
			limitArg = limitArg.ToNumber()
			limit = int64(uint32(int64(toInteger(limitArg.ToFloat())) & 0xffffffff))
		}
		args := []goja.Value{sepArg, limitArg}
		if goja.IsUndefined(sepArg) || limit == 0 {
			return impl(goja.FunctionCall{This: s, Arguments: args})
		}
		sep := g.toStr(sepArg)
		args[0] = sep
		// Quick bound first: no more pieces than code units plus one.
		if bound := int64(s.Length()) + 1; limit >= 0 && limit < bound {
			bound = limit
		} else if !g.tooBig(float64(bound) * pieceBytes) {
			return impl(goja.FunctionCall{This: s, Arguments: args})
		}
		str, sepStr := s.String(), sep.String()
		var pieces int64
		if sepStr == "" {
			pieces = int64(utf8.RuneCountInString(str))
		} else {
			pieces = int64(strings.Count(str, sepStr)) + 1
		}
		if limit >= 0 {
			pieces = min(pieces, limit)
		}
		if g.tooBig(float64(pieces) * pieceBytes) {
			panic(g.capErr(name, "result"))
		}
		return impl(goja.FunctionCall{This: s, Arguments: args})
	}
}

// substitution is what a replacement string writes per match (goja's
// writeSubstitution with only the match as capture): literal UTF-8 bytes,
// and how many times it writes the match ($&), the text before it ($`)
// and the text after it ($').
type substitution struct {
	literal              int64
	match, before, after int64
}

func parseSubstitution(r string) substitution {
	var sub substitution
	for i := 0; i < len(r); i++ {
		if r[i] != '$' || i == len(r)-1 {
			sub.literal++
			continue
		}
		switch r[i+1] {
		case '$':
			sub.literal++
		case '&':
			sub.match++
		case '`':
			sub.before++
		case '\'':
			sub.after++
		default:
			sub.literal += 2
		}
		i++
	}
	return sub
}

// replaceChecked refuses a replace or replaceAll by a string pattern with
// a replacement string whose result would be larger than the cap. A
// replacement function's results are the script's own strings, each call
// an interruptible call into the script.
func (g *guard) replaceChecked(name string, all bool, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		search, repl := c.Argument(0), c.Argument(1)
		if _, isObj := search.(*goja.Object); isObj {
			return impl(c)
		}
		if _, isFn := goja.AssertFunction(repl); isFn {
			return impl(c)
		}
		s, ok := g.thisString(c.This)
		if !ok {
			return impl(c)
		}
		ss, rs := g.toStr(search), g.toStr(repl)
		args := []goja.Value{ss, rs}
		sub := parseSubstitution(rs.String())
		// Quick bound, in code units: every match writes the replacement
		// at its longest ($` and $' the whole string).
		{
			n, l := int64(s.Length()), int64(ss.Length())
			maxMatches := int64(1)
			if all {
				maxMatches = n/max(l, 1) + 1
			}
			perMatch := int64(rs.Length()) + sub.match*l + (sub.before+sub.after)*n
			if !g.tooBig(float64(stringBytes(n)) + float64(maxMatches)*float64(stringBytes(perMatch))) {
				return impl(goja.FunctionCall{This: s, Arguments: args})
			}
		}
		str, pat := s.String(), ss.String()
		n, l := int64(len(str)), int64(len(pat))
		perMatch := sub.literal + sub.match*l
		if sub.before == 0 && sub.after == 0 {
			k := int64(0)
			switch {
			case !all:
				if strings.Contains(str, pat) {
					k = 1
				}
			case l == 0:
				k = int64(utf8.RuneCountInString(str)) + 1
			default:
				k = int64(strings.Count(str, pat))
			}
			if g.tooBig(float64(stringBytes(n-k*l)) + float64(k)*float64(stringBytes(perMatch))) {
				panic(g.capErr(name, "result"))
			}
			return impl(goja.FunctionCall{This: s, Arguments: args})
		}
		// $` and $': walk the matches, adding up what each writes; the
		// text written so far (the gaps and the replacements) only grows,
		// so the walk stops as soon as it passes the cap.
		written, last, from := int64(0), 0, 0
		for from <= len(str) {
			i := strings.Index(str[from:], pat)
			if i < 0 {
				break
			}
			p := from + i
			written += int64(p-last) + perMatch + sub.before*int64(p) + sub.after*max(n-int64(p)-l, 0)
			if g.tooBig(float64(stringBytes(written))) {
				panic(g.capErr(name, "result"))
			}
			last = p + len(pat)
			if !all {
				break
			}
			from = p + max(len(pat), 1)
		}
		if g.tooBig(float64(stringBytes(written + n - int64(last)))) {
			panic(g.capErr(name, "result"))
		}
		return impl(goja.FunctionCall{This: s, Arguments: args})
	}
}
