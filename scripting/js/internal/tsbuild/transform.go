package tsbuild

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/dsh-go/dsh/scripting"
)

// Output is one transformed file. Outputs are shared through the cache: a
// caller must not modify one or anything it holds.
type Output struct {
	// Path is the name the file was transformed under: the one diagnostics
	// and the source map use, and the one to compile Code under so that
	// [Output.MapStack] recognises its stack frames.
	Path string
	// Code is CommonJS for ES2017, ASCII only (esbuild escapes the rest). Its
	// first line is always a comment, so a caller may put a function header
	// (the CommonJS wrapper) in front of it on the same line without moving
	// any mapped position. Regular expression literals stay literals; those
	// jsguard must watch are wrapped in RegExp(…) (see regexp.go).
	Code []byte
	// Map maps Code back to the original source.
	Map *SourceMap
	// Warnings are esbuild's warnings (for example a BigInt literal, or
	// import.meta, which is empty in CommonJS), with original positions.
	Warnings []*Diagnostic

	src      []byte
	srcLines []int // byte offset of each line of src
	genLines []int // byte offset of each line of Code
}

// Diagnostic is an esbuild error or warning located in the original file
// (1-based line, column in bytes as goja counts; zero when esbuild gave no
// position): the plugin machinery's own diagnostic type.
type Diagnostic = scripting.Diagnostic

// banner is the first line of every Output.Code (after a hashbang, which is
// turned into a comment too). Keeping user code off line 1 lets a caller
// prefix Code on the same line without shifting mapped columns.
const banner = "// transformed by esbuild for dsh"

// strictTsconfig makes esbuild emit a "use strict" directive: TypeScript
// with "alwaysStrict" (tsc's default under "strict") and ES modules are
// strict code, which a CommonJS function is not unless it says so.
const strictTsconfig = `{"compilerOptions":{"alwaysStrict":true}}`

// esmProbeText is esbuild's error for a top-level return in an ES module:
// the probe that tells an ES module .js file from a CommonJS one.
const esmProbeText = "Top-level return cannot be used inside an ECMAScript module"

// Transform turns a .ts, .js or .mjs file into CommonJS for ES2017 with
// esbuild: loader ts for .ts, js for .js and .mjs; format CommonJS; target
// ES2017, except that BigInt literals stay (goja has BigInt), regular
// expression literals stay literals (see Output.Code) and import() is
// lowered too (to a promise of require(), since goja cannot parse it in a
// script); an external source map; nothing minified, so names stay
// readable. path names the file in diagnostics and in the source map; its
// extension picks the loader.
//
// Every .js file goes through esbuild, ES module or not: for a CommonJS file
// (no import or export) esbuild's CommonJS output is the same program
// (top-level this is exports, a top-level return still works) with syntax
// newer than ES2017 lowered, and its positions map back like any other.
// Strictness follows the language: .ts, .mjs and ES module .js files get a
// "use strict" directive, CommonJS .js files stay sloppy as in Node. Whether
// a .js file is an ES module is esbuild's own judgement: when the source
// mentions import or export at all, a probe transform with a top-level
// return appended tells, since esbuild refuses that in an ES module only.
//
// A syntax error is a *[Diagnostic] at its original position: the first one
// when esbuild reports several. So is a regular expression literal that uses
// syntax goja runs wrong ("named capture groups are not supported:
// /(?<year>\d{4})/"), its Err a *jsregexp.UnsupportedError. Results,
// errors included, are cached by content (sha256 of path, a zero byte, and
// src) in a bounded, concurrency safe cache: transforming the same input
// again returns the same *Output.
func Transform(path string, src []byte) (*Output, error) {
	return defaultCache.transform(path, src)
}

// Original maps a position in Code (1-based line, 1-based byte column, as a
// goja stack trace or compile error reports it) to the original file and
// its 1-based line and byte column. It reports false for a position without
// a mapping, such as esbuild's helper functions at the top of Code.
func (o *Output) Original(line, col int) (file string, oline, ocol int, ok bool) {
	if o == nil || o.Map == nil || line < 1 || line > len(o.genLines) || col < 1 {
		return "", 0, 0, false
	}
	gl := lineText(o.Code, o.genLines, line-1)
	m, ok := o.Map.Lookup(line-1, utf16Col(gl, col-1))
	if !ok {
		return "", 0, 0, false
	}
	if m.Line >= len(o.srcLines) {
		return "", 0, 0, false
	}
	sl := lineText(o.src, o.srcLines, m.Line)
	return m.Source, m.Line + 1, byteCol(sl, m.Col) + 1, true
}

// MapStack rewrites the "file:line:col" positions of o's frames (those whose
// file is o.Path) in a goja stack trace to original positions; see
// [MapStack].
func (o *Output) MapStack(stack string) string {
	return MapStack(stack, o)
}

// MapStack rewrites every "name:line:col" position in a goja stack trace
// (such as "at f (plugins/a.ts:9:11(12))") whose name is the Path of one of
// outs to the original position. A name counts where it starts the text or
// follows whitespace or "("; positions that do not map stay as they are, as
// does everything else (goja's "(pc)" suffixes included).
func MapStack(stack string, outs ...*Output) string {
	var b strings.Builder
	i := 0
	for i < len(stack) {
		if i > 0 && !isFrameStart(stack[i-1]) {
			b.WriteByte(stack[i])
			i++
			continue
		}
		o, n := matchFrame(stack[i:], outs)
		if o == nil {
			b.WriteByte(stack[i])
			i++
			continue
		}
		b.WriteString(stack[i : i+n])
		i += n
		i = rewritePosition(&b, stack, i, o)
	}
	return b.String()
}

func isFrameStart(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '('
}

// matchFrame finds the Output whose Path (followed by ':') starts s and
// returns it with the length of Path and the colon.
func matchFrame(s string, outs []*Output) (*Output, int) {
	for _, o := range outs {
		if o != nil && o.Path != "" && strings.HasPrefix(s, o.Path) && strings.HasPrefix(s[len(o.Path):], ":") {
			return o, len(o.Path) + 1
		}
	}
	return nil, 0
}

// rewritePosition reads "line:col" at stack[i:] and writes the mapped (or
// the unchanged) text to b, returning the index after it.
func rewritePosition(b *strings.Builder, stack string, i int, o *Output) int {
	line, n1 := leadingInt(stack[i:])
	if n1 == 0 || i+n1 >= len(stack) || stack[i+n1] != ':' {
		return i
	}
	col, n2 := leadingInt(stack[i+n1+1:])
	if n2 == 0 {
		return i
	}
	end := i + n1 + 1 + n2
	if _, ol, oc, ok := o.Original(line, col); ok {
		b.WriteString(strconv.Itoa(ol) + ":" + strconv.Itoa(oc))
	} else {
		b.WriteString(stack[i:end])
	}
	return end
}

// leadingInt parses the decimal digits at the start of s.
func leadingInt(s string) (int, int) {
	n := 0
	for n < len(s) && n < 9 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	if n == 0 || (n < len(s) && s[n] >= '0' && s[n] <= '9') {
		return 0, 0
	}
	v, _ := strconv.Atoi(s[:n])
	return v, n
}

// compile runs esbuild and builds the Output.
func compile(p string, src []byte) (*Output, error) {
	// Before any esbuild run, the ES module probe of isESM included: a
	// chain or nesting esbuild recurses on would overflow the Go stack.
	if err := CheckNesting(src, 0); err != nil {
		ne := err.(*NestingError) // CheckNesting's only error
		return nil, &Diagnostic{File: p, Line: ne.Line, Col: ne.Column, Message: ne.message()}
	}
	var loader api.Loader
	strict := false
	switch path.Ext(strings.ReplaceAll(p, `\`, "/")) {
	case ".ts":
		loader, strict = api.LoaderTS, true
	case ".mjs":
		loader, strict = api.LoaderJS, true
	case ".js":
		loader = api.LoaderJS
		strict = isESM(p, src)
	default:
		return nil, &Diagnostic{File: p, Message: "cannot transform: not a .ts, .js or .mjs file"}
	}
	opts := options(p, loader)
	if strict {
		opts.TsconfigRaw = strictTsconfig
	}
	r := api.Transform(string(src), opts)
	if len(r.Errors) > 0 {
		return nil, diagnostic(p, r.Errors[0])
	}
	code := r.Code
	if bytes.HasPrefix(code, []byte("#!")) {
		// A hashbang is only valid at the very start of a script, not in a
		// CommonJS function wrapper: make it a comment of the same length.
		code = append([]byte("//"), code[2:]...)
	}
	m, err := ParseSourceMap(r.Map)
	if err != nil {
		return nil, &Diagnostic{File: p, Message: "esbuild wrote a bad source map: " + err.Error()}
	}
	out := &Output{
		Path:     p,
		Code:     code,
		Map:      m,
		src:      src,
		srcLines: lineStarts(src),
		genLines: lineStarts(code),
	}
	for _, w := range r.Warnings {
		out.Warnings = append(out.Warnings, diagnostic(p, w))
	}
	if err := out.guardRegExps(); err != nil {
		return nil, err
	}
	return out, nil
}

// guardRegExps refuses the regular expression literals that use syntax goja
// runs wrong, at their original position, and wraps those jsguard must
// watch in RegExp(…), moving the source map's mappings after them (see
// regexp.go).
func (o *Output) guardRegExps() error {
	const prefix, suffix = "(function(){", "\n})"
	code := string(o.Code)
	wrap, bad, err := regexpPlan(prefix, code, suffix)
	if err != nil {
		d := &Diagnostic{File: o.Path, Message: err.Error(), Err: err}
		line, col := o.genPosition(bad.start)
		if _, ol, oc, ok := o.Original(line+1, col+1); ok {
			d.Line, d.Col = ol, oc
		}
		return d
	}
	if len(wrap) == 0 {
		return nil
	}
	ins := make(map[int][]insertion)
	for _, lit := range wrap {
		// A literal holds no line terminator: it starts and ends on one line.
		line, col := o.genPosition(lit.start)
		ins[line] = append(ins[line],
			insertion{col: col, n: len(regexpWrapOpen)},
			insertion{col: col + lit.end - lit.start, n: len(regexpWrapClose), after: true})
	}
	m, err := o.Map.withInsertions(ins)
	if err != nil {
		return &Diagnostic{File: o.Path, Message: "rewriting the source map: " + err.Error(), Err: err}
	}
	o.Map = m
	o.Code = []byte(applyWraps(code, wrap))
	o.genLines = lineStarts(o.Code)
	return nil
}

// genPosition is the 0-based line and byte column in Code of a byte offset.
func (o *Output) genPosition(off int) (line, col int) {
	line = sort.Search(len(o.genLines), func(i int) bool { return o.genLines[i] > off }) - 1
	return line, off - o.genLines[line]
}

// supported overrides esbuild's ES2017 feature table: BigInt literals stay
// (goja has BigInt), import() is lowered, and regular expression literals
// are never turned into new RegExp("…") calls: goja runs the dotAll and
// lookbehind ones, and guardRegExps refuses the rest at their position,
// which it could not do once they were strings.
var supported = map[string]bool{
	"bigint":                          true,
	"dynamic-import":                  false,
	"regexp-dot-all-flag":             true,
	"regexp-lookbehind-assertions":    true,
	"regexp-match-indices":            true,
	"regexp-named-capture-groups":     true,
	"regexp-set-notation":             true,
	"regexp-sticky-and-unicode-flags": true,
	"regexp-unicode-property-escapes": true,
}

// options are the esbuild options shared by the transform and the probe.
func options(p string, loader api.Loader) api.TransformOptions {
	return api.TransformOptions{
		LogLevel:       api.LogLevelSilent,
		Loader:         loader,
		Format:         api.FormatCommonJS,
		Target:         api.ES2017,
		Supported:      supported,
		Sourcemap:      api.SourceMapExternal,
		SourcesContent: api.SourcesContentExclude,
		Sourcefile:     p,
		Banner:         banner,
	}
}

// isESM reports whether esbuild considers a .js source an ES module. Such a
// module must mention import or export (import.meta included); for the rest
// the probe appends a top-level return, which esbuild rejects, with
// esmProbeText, in an ES module only. A source with a syntax error of its
// own is not a module as far as the probe can tell; the real transform then
// reports that error.
func isESM(p string, src []byte) bool {
	if !bytes.Contains(src, []byte("import")) && !bytes.Contains(src, []byte("export")) {
		return false
	}
	opts := options(p, api.LoaderJS)
	opts.Sourcemap = api.SourceMapNone
	opts.Banner = ""
	r := api.Transform(string(src)+"\n;return;\n", opts)
	for _, e := range r.Errors {
		if e.Text == esmProbeText {
			return true
		}
	}
	return false
}

// diagnostic converts an esbuild message; esbuild's positions are in the
// input, that is, original ones.
func diagnostic(p string, m api.Message) *Diagnostic {
	d := &Diagnostic{File: p, Message: m.Text}
	if l := m.Location; l != nil && l.Line > 0 {
		d.Line, d.Col = l.Line, l.Column+1
	}
	return d
}

// lineStarts returns the byte offset of every line of b. Lines end at \n,
// \r\n, \r, U+2028 and U+2029, as in JavaScript (and in esbuild and goja).
func lineStarts(b []byte) []int {
	starts := []int{0}
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case 0xE2:
			if i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9) {
				i += 2
				starts = append(starts, i+1)
			}
		}
	}
	return starts
}

// lineText is line i (0-based) of b, without its terminator.
func lineText(b []byte, starts []int, i int) []byte {
	end := len(b)
	if i+1 < len(starts) {
		end = starts[i+1]
	}
	return b[starts[i]:end]
}

// utf16Col converts a 0-based byte column in line to UTF-16 code units.
func utf16Col(line []byte, col int) int {
	n := 0
	for i := 0; i < len(line) && i < col; {
		r, size := utf8.DecodeRune(line[i:])
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	if col > len(line) {
		n += col - len(line)
	}
	return n
}

// byteCol converts a 0-based UTF-16 column in line to bytes.
func byteCol(line []byte, col int) int {
	i, n := 0, 0
	for i < len(line) && n < col {
		r, size := utf8.DecodeRune(line[i:])
		i += size
		n++
		if r >= 0x10000 {
			n++
		}
	}
	if n < col {
		i += col - n
	}
	return i
}

// cacheSize bounds the transform cache.
const cacheSize = 512

var defaultCache = newCache(cacheSize)

// cache is a bounded LRU cache of transform results, safe for concurrent use.
type cache struct {
	mu    sync.Mutex
	max   int
	ll    *list.List // of *entry, most recently used first
	items map[[sha256.Size]byte]*list.Element
	// running holds the transforms under way: a miss on an input being
	// compiled waits for that compile rather than starting another, so a
	// load abandoned at its deadline and retried (a reload, dsh watch)
	// does not run esbuild on the same input twice at once.
	running map[[sha256.Size]byte]*running
	compile func(path string, src []byte) (*Output, error)
}

// running is a compile under way; done closes when out and err are set.
type running struct {
	done chan struct{}
	out  *Output
	err  error
}

type entry struct {
	key [sha256.Size]byte
	out *Output
	err error
}

func newCache(max int) *cache {
	return &cache{max: max, ll: list.New(), items: make(map[[sha256.Size]byte]*list.Element),
		running: make(map[[sha256.Size]byte]*running), compile: compile}
}

func cacheKey(path string, src []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(src)
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}

// transform returns the cached result for (path, src), compiling it on a
// miss. Concurrent misses on the same input compile once: the later ones
// wait for the first.
func (c *cache) transform(path string, src []byte) (*Output, error) {
	k := cacheKey(path, src)
	c.mu.Lock()
	if el, ok := c.items[k]; ok {
		c.ll.MoveToFront(el)
		e := el.Value.(*entry)
		c.mu.Unlock()
		return e.out, e.err
	}
	if r, ok := c.running[k]; ok {
		c.mu.Unlock()
		<-r.done
		return r.out, r.err
	}
	r := &running{done: make(chan struct{})}
	c.running[k] = r
	c.mu.Unlock()

	// esbuild keeps no reference to its input; the Output keeps src, so copy
	// it: the caller may reuse its buffer.
	src = bytes.Clone(src)
	r.out, r.err = c.compile(path, src)
	out, err := r.out, r.err

	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.running, k)
	close(r.done)
	c.items[k] = c.ll.PushFront(&entry{key: k, out: out, err: err})
	for c.ll.Len() > c.max {
		last := c.ll.Back()
		c.ll.Remove(last)
		delete(c.items, last.Value.(*entry).key)
	}
	return out, err
}

// len is the number of cached results.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ll.Len()
}
