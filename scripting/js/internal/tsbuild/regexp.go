package tsbuild

import (
	"bytes"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/scripting/js/internal/jsregexp"
)

// Regular expression literals get two treatments before goja sees them
// (see jsguard's package documentation, "Regular expressions"):
//
//   - A literal that uses syntax goja accepts but runs wrong (named capture
//     groups, Unicode property escapes, the d and v flags...: see
//     jsregexp.Check) is a syntax error at its original position.
//   - A literal goja would run on its backtracking engine where jsguard
//     cannot see the match (lookaround, backreferences; and, in a source
//     that calls an exec (execMention), one with the g or y flag, whose
//     exec from a lastIndex past 0 runs there too) is wrapped in a call to
//     RegExp:
//     RegExp(/a(?=b)/) is the same object as /a(?=b)/, made through jsguard's
//     RegExp, which gives it a watched exec. A literal creates a new object
//     each time it is evaluated; so does the call.

// regexpWrapOpen and regexpWrapClose wrap a literal.
const (
	regexpWrapOpen  = "RegExp("
	regexpWrapClose = ")"
)

// regexpHints are texts without which (and without a match of execMention,
// largeRepeat or refusedFlags) a source has no literal to check or wrap:
// lookaround and groups, and escapes Check refuses or the backtracking
// engine needs.
var regexpHints = [][]byte{
	[]byte("(?"), []byte(`\k`), []byte(`\p`), []byte(`\P`), []byte(`\a`), []byte(`\e`), []byte(`\A`),
	[]byte(`\G`), []byte(`\Z`), []byte(`\z`), []byte(`\S`), []byte(`\1`), []byte(`\2`), []byte(`\3`),
	[]byte(`\4`), []byte(`\5`), []byte(`\6`), []byte(`\7`), []byte(`\8`), []byte(`\9`),
}

// execMention finds where a source may call a regular expression's exec:
// a property access .exec, or the name as a string (["exec"]). The plain
// word is everywhere in plugins, whose listeners name their execution
// object exec.
var execMention = regexp.MustCompile(`\.\s*exec\b|["'\x60]exec["'\x60]`)

// largeRepeat finds a repeat count RE2 refuses ({1001} and up), and
// refusedFlags a slash followed by flags that include d or v (loosely: it
// also finds a division by a variable named d).
var (
	largeRepeat  = regexp.MustCompile(`\{[0-9]*[1-9][0-9]{3}`)
	refusedFlags = regexp.MustCompile(`/[gimsuy]*[dv]`)
)

// mayHaveRegExpWork reports whether src may hold a literal to check or
// wrap: false means none, true means parse and see.
func mayHaveRegExpWork(src []byte) bool {
	for _, h := range regexpHints {
		if bytes.Contains(src, h) {
			return true
		}
	}
	return largeRepeat.Match(src) || refusedFlags.Match(src) || execMention.Match(src)
}

// regexpLiteral is a regular expression literal found in a source.
type regexpLiteral struct {
	start, end     int // byte offsets of the literal in the source
	pattern, flags string
}

// regexpLiterals parses prefix+src+suffix with goja's parser and returns
// the regular expression literals inside src, in source order; ok is false
// when it does not parse (goja then reports the error itself).
func regexpLiterals(prefix, src, suffix string) (lits []regexpLiteral, ok bool) {
	file, err := parser.ParseFile(nil, "", prefix+src+suffix, 0)
	if err != nil {
		return nil, false
	}
	for _, re := range collectRegExps(file) {
		// The literal's text is its pattern and flags between slashes (not
		// re.Literal, which loses the flags of a literal that ends the source).
		text := "/" + re.Pattern + "/" + re.Flags
		start := int(re.Idx) - 1 - len(prefix)
		end := start + len(text)
		if start < 0 || end > len(src) || src[start:end] != text {
			continue
		}
		lits = append(lits, regexpLiteral{start: start, end: end, pattern: re.Pattern, flags: re.Flags})
	}
	sort.Slice(lits, func(i, j int) bool { return lits[i].start < lits[j].start })
	return lits, true
}

var astPkg = reflect.TypeFor[ast.Program]().PkgPath()

// collectRegExps walks a goja AST (by reflection: goja has no visitor) and
// returns its regular expression literals.
func collectRegExps(root *ast.Program) []*ast.RegExpLiteral {
	var out []*ast.RegExpLiteral
	seen := make(map[uintptr]bool)
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			if v.IsNil() || v.Elem().Kind() != reflect.Struct || v.Elem().Type().PkgPath() != astPkg {
				return
			}
			if seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if v.CanInterface() {
				if re, ok := v.Interface().(*ast.RegExpLiteral); ok {
					out = append(out, re)
					return
				}
			}
			walk(v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		}
	}
	walk(reflect.ValueOf(root))
	return out
}

// regexpNeedsWrap reports whether a literal must be made through RegExp so
// that jsguard sees its exec: it runs on the backtracking engine, or it has
// the g or y flag in a source that calls an exec (execMention).
func regexpNeedsWrap(lit regexpLiteral, mentionsExec bool) bool {
	if mentionsExec && strings.ContainsAny(lit.flags, "gy") {
		return true
	}
	return jsregexp.Backtracking(lit.pattern, lit.flags)
}

// regexpPlan checks the literals of src (parsed inside prefix and suffix)
// and returns those to wrap. The error is the first literal's refusal, with
// its offset in src.
func regexpPlan(prefix, src, suffix string) (wrap []regexpLiteral, bad *regexpLiteral, err error) {
	if !mayHaveRegExpWork([]byte(src)) {
		return nil, nil, nil
	}
	lits, ok := regexpLiterals(prefix, src, suffix)
	if !ok {
		return nil, nil, nil
	}
	mentionsExec := execMention.MatchString(src)
	for i := range lits {
		lit := lits[i]
		if err := jsregexp.Check(lit.pattern, lit.flags); err != nil {
			return nil, &lits[i], err
		}
		if regexpNeedsWrap(lit, mentionsExec) {
			wrap = append(wrap, lit)
		}
	}
	return wrap, nil, nil
}

// applyWraps returns src with each literal of wrap (in source order)
// wrapped in RegExp(…).
func applyWraps(src string, wrap []regexpLiteral) string {
	var b strings.Builder
	b.Grow(len(src) + len(wrap)*(len(regexpWrapOpen)+len(regexpWrapClose)))
	pos := 0
	for _, lit := range wrap {
		b.WriteString(src[pos:lit.start])
		b.WriteString(regexpWrapOpen)
		b.WriteString(src[lit.start:lit.end])
		b.WriteString(regexpWrapClose)
		pos = lit.end
	}
	b.WriteString(src[pos:])
	return b.String()
}

// GuardRegExpLiterals checks the regular expression literals of a script
// given to eval or to the Function constructors (src, parsed inside prefix
// and suffix, which make it a whole program: a function header and its
// closing brace) and returns src with the literals jsguard must watch
// wrapped in RegExp(…) (see Transform). The error is a
// *jsregexp.UnsupportedError for the first literal that uses syntax goja
// runs wrong. A source that does not parse is returned as it is, for goja
// to report.
func GuardRegExpLiterals(src, prefix, suffix string) (string, error) {
	wrap, _, err := regexpPlan(prefix, src, suffix)
	if err != nil {
		return "", err
	}
	if len(wrap) == 0 {
		return src, nil
	}
	return applyWraps(src, wrap), nil
}
