package capability

import (
	"context"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// Bounds of glob patterns and walks.
const (
	maxPatternLen    = 4096
	maxAlternatives  = 1024
	maxGlobVisits    = 1_000_000
	maxGlobTotal     = 100_000
	globReadDirBatch = 256
)

// globPattern is a compiled doublestar pattern: its brace alternatives, each
// a list of path segments.
type globPattern struct {
	alts    [][]segment
	dirOnly bool // the pattern ended in "/"
}

// segment is one path segment of a pattern: "**" or a segment pattern.
type segment struct {
	pat   string
	star2 bool
}

// errPattern describes a malformed pattern.
type errPattern string

func (e errPattern) Error() string { return string(e) }

// compileGlob parses a doublestar pattern: "**" matches any number of
// segments, "*" and "?" any string and any one character within a
// segment, "[abc]", "[a-z]", "[!a]" (or "[^a]") character classes, "{a,b}"
// alternatives (nested too) and "\" escapes the next character.
func compileGlob(pattern string) (*globPattern, error) {
	if pattern == "" {
		return nil, errPattern("pattern must not be empty")
	}
	if len(pattern) > maxPatternLen {
		return nil, errPattern("pattern is longer than 4096 bytes")
	}
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, errPattern("pattern must not contain a NUL byte")
	}
	if pattern[0] == '/' {
		return nil, errPattern("pattern must be relative (use options.cwd for a directory)")
	}
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	g := &globPattern{}
	for i, alt := range alts {
		dirOnly := strings.HasSuffix(alt, "/") && !strings.HasSuffix(alt, `\/`)
		if i == 0 {
			g.dirOnly = dirOnly
		} else if dirOnly != g.dirOnly {
			return nil, errPattern(`alternatives must all end in "/" or none`)
		}
		var segs []segment
		for _, s := range strings.Split(alt, "/") {
			switch s {
			case "", ".":
				continue
			case "..":
				return nil, errPattern(`pattern must not contain ".." segments`)
			case "**":
				if len(segs) > 0 && segs[len(segs)-1].star2 {
					continue // "**/**" is "**"
				}
				segs = append(segs, segment{star2: true})
				continue
			}
			if err := checkSegment(s); err != nil {
				return nil, err
			}
			segs = append(segs, segment{pat: s})
		}
		if alt[0] == '/' {
			return nil, errPattern("pattern must be relative (use options.cwd for a directory)")
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// expandBraces returns the alternatives of the pattern's "{a,b}" groups.
func expandBraces(p string) ([]string, error) {
	open, closing, commas, err := firstBraceGroup(p)
	if err != nil {
		return nil, err
	}
	if open < 0 {
		return []string{p}, nil
	}
	prefix, suffix := p[:open], p[closing+1:]
	var out []string
	start := open + 1
	for _, c := range append(commas, closing) {
		sub, err := expandBraces(prefix + p[start:c] + suffix)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
		if len(out) > maxAlternatives {
			return nil, errPattern("pattern has more than 1024 alternatives")
		}
		start = c + 1
	}
	return out, nil
}

// firstBraceGroup finds the first top-level brace group: the positions of
// its "{", its "}" and its top-level commas; open is -1 when there is none.
func firstBraceGroup(p string) (open, closing int, commas []int, err error) {
	open = -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			end := classEnd(p, i)
			if end < 0 {
				return 0, 0, nil, errPattern("unclosed [ in pattern")
			}
			i = end
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				return 0, 0, nil, errPattern("unmatched } in pattern")
			}
			depth--
			if depth == 0 {
				return open, i, commas, nil
			}
		}
	}
	if depth > 0 {
		return 0, 0, nil, errPattern("unclosed { in pattern")
	}
	return -1, 0, nil, nil
}

// classEnd returns the index of the "]" closing the class opened at
// p[start], or -1.
func classEnd(p string, start int) int {
	i := start + 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		i++
	}
	first := true
	for ; i < len(p); i++ {
		switch {
		case p[i] == '\\':
			i++
		case p[i] == ']' && !first:
			return i
		case p[i] == '/':
			return -1
		}
		first = false
	}
	return -1
}

// checkSegment validates a segment's classes and escapes.
func checkSegment(s string) error {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 >= len(s) {
				return errPattern(`pattern ends with a lone "\"`)
			}
			i++
		case '[':
			end := classEnd(s, i)
			if end < 0 {
				return errPattern("unclosed [ in pattern")
			}
			if _, _, ok := parseClass(s[i:end+1], 0); !ok {
				return errPattern("bad character class in pattern")
			}
			i = end
		}
	}
	return nil
}

// matchSegment reports whether name matches the segment pattern p, with the
// usual single backtracking point for "*".
func matchSegment(p, name string) bool {
	px, nx := 0, 0
	starPx, starNx := -1, -1
	for px < len(p) || nx < len(name) {
		if px < len(p) {
			switch c := p[px]; c {
			case '*':
				starPx, starNx = px, nx
				px++
				continue
			case '?':
				if nx < len(name) {
					_, w := utf8.DecodeRuneInString(name[nx:])
					px++
					nx += w
					continue
				}
			case '[':
				if nx < len(name) {
					r, w := utf8.DecodeRuneInString(name[nx:])
					if n, ok, valid := classMatch(p[px:], r); valid && ok {
						px += n
						nx += w
						continue
					}
				}
			case '\\':
				if px+1 < len(p) && nx < len(name) && p[px+1] == name[nx] {
					px += 2
					nx++
					continue
				}
			default:
				if nx < len(name) && name[nx] == c {
					px++
					nx++
					continue
				}
			}
		}
		if starPx >= 0 && starNx < len(name) {
			_, w := utf8.DecodeRuneInString(name[starNx:])
			starNx += w
			px, nx = starPx+1, starNx
			continue
		}
		return false
	}
	return true
}

// classMatch matches r against the class at the start of p; n is the
// class's length; valid is false for a malformed class.
func classMatch(p string, r rune) (n int, ok, valid bool) {
	end := classEnd(p, 0)
	if end < 0 {
		return 0, false, false
	}
	matched, _, valid := parseClass(p[:end+1], r)
	return end + 1, matched, valid
}

// parseClass parses the class c ("[...]") and reports whether r is in it.
func parseClass(c string, r rune) (matched, negated, valid bool) {
	body := c[1 : len(c)-1]
	if body != "" && (body[0] == '!' || body[0] == '^') {
		negated = true
		body = body[1:]
	}
	if body == "" {
		return false, negated, false
	}
	in := false
	next := func() (rune, bool) {
		if body == "" {
			return 0, false
		}
		if body[0] == '\\' {
			body = body[1:]
			if body == "" {
				return 0, false
			}
		}
		ch, w := utf8.DecodeRuneInString(body)
		body = body[w:]
		return ch, true
	}
	for body != "" {
		lo, ok := next()
		if !ok {
			return false, negated, false
		}
		hi := lo
		if len(body) >= 2 && body[0] == '-' {
			body = body[1:]
			if hi, ok = next(); !ok || hi < lo {
				return false, negated, false
			}
		}
		if lo <= r && r <= hi {
			in = true
		}
	}
	return in != negated, negated, true
}

// states is the set of positions in each alternative a walk can be at.
type states [][]bool

// start returns the states before any segment is consumed.
func (g *globPattern) start() states {
	s := make(states, len(g.alts))
	for i, segs := range g.alts {
		s[i] = make([]bool, len(segs)+1)
		s[i][0] = true
		closeStars(segs, s[i])
	}
	return s
}

// closeStars adds the position after every "**" that is reached, since
// "**" matches zero segments too.
func closeStars(segs []segment, set []bool) {
	for i, seg := range segs {
		if set[i] && seg.star2 {
			set[i+1] = true
		}
	}
}

// step returns the states after consuming one segment, name.
func (g *globPattern) step(cur states, name string) states {
	next := make(states, len(g.alts))
	for a, segs := range g.alts {
		set := make([]bool, len(segs)+1)
		for i, seg := range segs {
			if !cur[a][i] {
				continue
			}
			if seg.star2 {
				set[i] = true
			} else if matchSegment(seg.pat, name) {
				set[i+1] = true
			}
		}
		closeStars(segs, set)
		next[a] = set
	}
	return next
}

// accepts reports whether the states match the path consumed so far.
func (g *globPattern) accepts(s states) bool {
	for a, segs := range g.alts {
		if s[a][len(segs)] {
			return true
		}
	}
	return false
}

// alive reports whether a longer path could still match.
func (g *globPattern) alive(s states) bool {
	for a, segs := range g.alts {
		for i := range segs {
			if s[a][i] {
				return true
			}
		}
	}
	return false
}

// match reports whether the slash-separated relative path p matches.
func (g *globPattern) match(p string) bool {
	s := g.start()
	for _, name := range strings.Split(p, "/") {
		if name == "" {
			continue
		}
		s = g.step(s, name)
	}
	return g.accepts(s)
}

func (m *fsModule) glob(ctx context.Context, args []any) (any, error) {
	const op = "glob"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	pattern, err := stringArg(op, "pattern", args, 0)
	if err != nil {
		return nil, err
	}
	o, err := optionsArg(op, args, 1, "cwd", "limit")
	if err != nil {
		return nil, err
	}
	cwd, err := o.str("cwd", ".")
	if err != nil {
		return nil, err
	}
	limit, err := m.limitOption(o)
	if err != nil {
		return nil, err
	}
	g, err := compileGlob(pattern)
	if err != nil {
		return nil, invalid(op, "%v: %s", err, pattern)
	}
	base, err := m.ws.rel(op, "options.cwd", cwd)
	if err != nil {
		return nil, err
	}
	if err := cancelled(ctx, op, pattern); err != nil {
		return nil, err
	}
	root, err := m.ws.open()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	res, err := walkGlob(ctx, root, base, g, limit)
	if err != nil {
		if ctx.Err() != nil {
			return nil, canceledError(ctx, op, pattern)
		}
		return nil, fsError(ctx, op, cwd, err)
	}
	paths := make([]any, len(res.paths))
	for i, p := range res.paths {
		paths[i] = strings.ToValidUTF8(p, "\uFFFD")
	}
	return dsl.NewObject(
		dsl.Member{Key: "paths", Value: paths},
		dsl.Member{Key: "total", Value: float64(res.total)},
		dsl.Member{Key: "truncated", Value: res.truncated},
	), nil
}

type globResult struct {
	paths     []string
	total     int
	truncated bool
}

// walkGlob walks base (relative to root) for paths matching g, relative to
// base, without following symlinks. Directories no match can lie under are
// not read.
func walkGlob(ctx context.Context, root *os.Root, base string, g *globPattern, limit int) (*globResult, error) {
	type dir struct {
		rel string // relative to base; "" for base itself
		st  states
	}
	keep := newSmallest(limit, strings.Compare)
	visits := 0
	truncated := false
	st := g.start()
	if g.accepts(st) {
		keep.add(".")
	}
	if fi, err := root.Stat(base); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, syscall.ENOTDIR
	}
	stack := []dir{{rel: "", st: st}}
walk:
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !g.alive(d.st) {
			continue
		}
		f, err := openDir(root, path.Join(base, d.rel))
		if err != nil {
			if d.rel == "" {
				return nil, err
			}
			continue // vanished or unreadable since it was listed
		}
		for {
			if ctx.Err() != nil {
				f.Close()
				return nil, ctx.Err()
			}
			batch, err := f.ReadDir(globReadDirBatch)
			for _, e := range batch {
				visits++
				if visits > maxGlobVisits || keep.total >= maxGlobTotal {
					truncated = true
					f.Close()
					break walk
				}
				rel := e.Name()
				if d.rel != "" {
					rel = d.rel + "/" + e.Name()
				}
				next := g.step(d.st, e.Name())
				if g.accepts(next) && (!g.dirOnly || e.IsDir()) {
					keep.add(rel)
				}
				if e.IsDir() && g.alive(next) {
					stack = append(stack, dir{rel: rel, st: next})
				}
			}
			if err == io.EOF || (err == nil && len(batch) == 0) {
				break
			}
			if err != nil {
				break // a directory that fails midway keeps what it listed
			}
		}
		f.Close()
	}
	paths := keep.result()
	return &globResult{paths: paths, total: keep.total, truncated: truncated || keep.total > len(paths)}, nil
}
