package engine

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dsh-go/dsh/dsl"
)

// Card names a view's card.
type Card string

// The cards. Call views use generic, terminal and diff; result views all six.
const (
	CardGeneric  Card = "generic"
	CardTerminal Card = "terminal"
	CardDiff     Card = "diff"
	CardSearch   Card = "search"
	CardRead     Card = "read"
	CardWeb      Card = "web"
)

// ToolCallKind is a call's category, for a UI's icon or treatment; a generic
// call view without one is "other".
type ToolCallKind string

// The call kinds.
const (
	KindRead    ToolCallKind = "read"
	KindEdit    ToolCallKind = "edit"
	KindDelete  ToolCallKind = "delete"
	KindMove    ToolCallKind = "move"
	KindSearch  ToolCallKind = "search"
	KindExecute ToolCallKind = "execute"
	KindFetch   ToolCallKind = "fetch"
	KindOther   ToolCallKind = "other"
)

// SearchShape discriminates the two search result cards.
type SearchShape string

// The search shapes: grouped content matches (grep) or a flat path list (glob).
const (
	ShapeMatches SearchShape = "matches"
	ShapePaths   SearchShape = "paths"
)

// WebKind discriminates the two web result cards. Its values match the
// ToolCallKind of the calls they complete, but it is its own discriminant.
type WebKind string

// The web kinds.
const (
	WebSearch WebKind = "search"
	WebFetch  WebKind = "fetch"
)

// FileLocation is a file (and optional 1-based line) a call reads or
// modifies, for editor follow-along: {path, line?}.
type FileLocation struct {
	Path string
	Line *int // nil: no line
}

// FileDiff is a change to one file: {path, oldText, newText}. OldText is nil
// (JSON null) for a new file or an overwrite without a before-image.
type FileDiff struct {
	Path    string
	OldText *string
	NewText string
}

// ReadFileLine is one numbered line of a file: {number, text}. Number is the
// file's own 1-based line number.
type ReadFileLine struct {
	Number int
	Text   string
}

// SearchFileMatches is one file's matched lines in a matches search card:
// {path, matches}.
type SearchFileMatches struct {
	Path    string
	Matches []SearchLineMatch
}

// SearchLineMatch is one matched line: {lineNumber, line}, the line number
// 1-based within its file.
type SearchLineMatch struct {
	LineNumber int
	Line       string
}

// WebSource is one citeable source of a web search card:
// {url, title?, snippet?, publishedAt?}.
type WebSource struct {
	URL         string
	Title       string
	Snippet     string
	PublishedAt string // an ISO-8601 timestamp, when the provider gave one
}

// CallView is how a pending call is presented (a ToolCallView), from a
// definition's PresentCall; [ResultView] presents the completed call. The
// presentation vocabulary (§1.11) is pure data: the engine never calls
// presenters itself.
//
// Each view is one struct holding the union of its cards' fields, selected by
// Card: only the fields documented for that card are read, and its JSON form
// ([CallView.JSON]) carries only them, in the design's key names and order.
// Optional fields are absent when zero: an empty string, a nil pointer or
// slice, a nil RawInput. A nil *CallView or *ResultView is "no view"
// (undefined in the design). Script hosts read views with [CallViewFromJSON]
// and [ResultViewFromJSON]. By Card:
//
//   - generic  {card, title, kind?, rawInput?, content?, locations?}: the
//     default card. RawInput is the salient input to show (nil: none).
//   - terminal {card, title, description?, cwd?}: a shell command; Title is
//     the command, Cwd its working directory.
//   - diff     {card, title, diffs, locations?}: a call that changes files.
type CallView struct {
	Card  Card
	Title string // every card

	Kind      ToolCallKind   // generic
	RawInput  any            // generic: a JSON value; nil is absent
	Content   []Block        // generic: nil is absent
	Locations []FileLocation // generic, diff: nil is absent

	Description string // terminal
	Cwd         string // terminal

	Diffs []FileDiff // diff
}

// ResultView is how a completed call is presented (a ToolResultView). By Card
// (Title, in every card, replaces the pending title; empty keeps it):
//
//   - generic  {card, title?, content?}
//   - terminal {card, title?, output?, exitCode?, signal?}
//   - diff     {card, title?, diffs}
//   - search   {card, shape: "matches", title?, files, truncated, total} or
//     {card, shape: "paths", title?, paths, truncated, total}; Total counts
//     what the search found before capping.
//   - read     {card, title?, path, offset, lines, totalLines, lang?, content?}
//   - web      {card, kind: "search", title?, sources, answer?, truncated} or
//     {card, kind: "fetch", title?, url, statusCode, truncated}
type ResultView struct {
	Card  Card
	Title string // every card

	Content []Block // generic, read: nil is absent

	Output   string // terminal
	ExitCode *int   // terminal: nil is absent
	Signal   string // terminal, e.g. SIGTERM

	Diffs []FileDiff // diff

	Shape     SearchShape         // search
	Files     []SearchFileMatches // search matches
	Paths     []string            // search paths
	Truncated bool                // search, web
	Total     int                 // search

	Path       string         // read
	Offset     int            // read: the first line the window asked for
	Lines      []ReadFileLine // read
	TotalLines int            // read
	Lang       string         // read: a syntax-highlighting hint

	Kind       WebKind     // web
	Sources    []WebSource // web search
	Answer     string      // web search
	URL        string      // web fetch: the final URL
	StatusCode int         // web fetch: the HTTP status
}

// JSON returns the view as a JSON object in the design's key order, with only
// its card's keys and optional keys absent when unset. A nil view is nil; a
// view with an unknown card gives {card, title?}.
func (v *CallView) JSON() any {
	if v == nil {
		return nil
	}
	o := dsl.NewObject(dsl.Member{Key: "card", Value: string(v.Card)})
	switch v.Card {
	case CardGeneric:
		o.Set("title", v.Title)
		if v.Kind != "" {
			o.Set("kind", string(v.Kind))
		}
		if v.RawInput != nil {
			o.Set("rawInput", v.RawInput)
		}
		if v.Content != nil {
			o.Set("content", ContentJSON(v.Content))
		}
		if v.Locations != nil {
			o.Set("locations", locationsJSON(v.Locations))
		}
	case CardTerminal:
		o.Set("title", v.Title)
		setString(o, "description", v.Description)
		setString(o, "cwd", v.Cwd)
	case CardDiff:
		o.Set("title", v.Title)
		o.Set("diffs", diffsJSON(v.Diffs))
		if v.Locations != nil {
			o.Set("locations", locationsJSON(v.Locations))
		}
	default:
		setString(o, "title", v.Title)
	}
	return o
}

// MarshalJSON writes the view's JSON form as canonical JSON.
func (v *CallView) MarshalJSON() ([]byte, error) { return dsl.Marshal(v.JSON()) }

// Validate reports a view that has no JSON form the design allows: an
// unknown card or call kind, or a value that is not lossless JSON.
func (v *CallView) Validate() error {
	if v == nil {
		return nil
	}
	switch v.Card {
	case CardGeneric, CardTerminal, CardDiff:
	default:
		return fmt.Errorf("call view: unknown card %q", v.Card)
	}
	if v.Card == CardGeneric && v.Kind != "" && !knownKind(v.Kind) {
		return fmt.Errorf("generic call view: unknown kind %q", v.Kind)
	}
	if err := dsl.CheckLossless(v.JSON()); err != nil {
		return fmt.Errorf("%s call view: %w", v.Card, err)
	}
	return nil
}

// JSON returns the view as a JSON object in the design's key order, with only
// its card's (and shape's or kind's) keys and optional keys absent when
// unset. A nil view is nil; a view with an unknown card gives {card, title?}.
func (v *ResultView) JSON() any {
	if v == nil {
		return nil
	}
	o := dsl.NewObject(dsl.Member{Key: "card", Value: string(v.Card)})
	switch v.Card {
	case CardGeneric:
		setString(o, "title", v.Title)
		if v.Content != nil {
			o.Set("content", ContentJSON(v.Content))
		}
	case CardTerminal:
		setString(o, "title", v.Title)
		setString(o, "output", v.Output)
		if v.ExitCode != nil {
			o.Set("exitCode", float64(*v.ExitCode))
		}
		setString(o, "signal", v.Signal)
	case CardDiff:
		setString(o, "title", v.Title)
		o.Set("diffs", diffsJSON(v.Diffs))
	case CardSearch:
		o.Set("shape", string(v.Shape))
		setString(o, "title", v.Title)
		switch v.Shape {
		case ShapeMatches:
			files := make([]any, len(v.Files))
			for i, f := range v.Files {
				ms := make([]any, len(f.Matches))
				for j, m := range f.Matches {
					ms[j] = dsl.NewObject(dsl.Member{Key: "lineNumber", Value: float64(m.LineNumber)},
						dsl.Member{Key: "line", Value: m.Line})
				}
				files[i] = dsl.NewObject(dsl.Member{Key: "path", Value: f.Path}, dsl.Member{Key: "matches", Value: ms})
			}
			o.Set("files", files)
		case ShapePaths:
			paths := make([]any, len(v.Paths))
			for i, p := range v.Paths {
				paths[i] = p
			}
			o.Set("paths", paths)
		}
		o.Set("truncated", v.Truncated)
		o.Set("total", float64(v.Total))
	case CardRead:
		setString(o, "title", v.Title)
		o.Set("path", v.Path)
		o.Set("offset", float64(v.Offset))
		lines := make([]any, len(v.Lines))
		for i, l := range v.Lines {
			lines[i] = dsl.NewObject(dsl.Member{Key: "number", Value: float64(l.Number)}, dsl.Member{Key: "text", Value: l.Text})
		}
		o.Set("lines", lines)
		o.Set("totalLines", float64(v.TotalLines))
		setString(o, "lang", v.Lang)
		if v.Content != nil {
			o.Set("content", ContentJSON(v.Content))
		}
	case CardWeb:
		o.Set("kind", string(v.Kind))
		setString(o, "title", v.Title)
		switch v.Kind {
		case WebSearch:
			sources := make([]any, len(v.Sources))
			for i, s := range v.Sources {
				so := dsl.NewObject(dsl.Member{Key: "url", Value: s.URL})
				setString(so, "title", s.Title)
				setString(so, "snippet", s.Snippet)
				setString(so, "publishedAt", s.PublishedAt)
				sources[i] = so
			}
			o.Set("sources", sources)
			setString(o, "answer", v.Answer)
		case WebFetch:
			o.Set("url", v.URL)
			o.Set("statusCode", float64(v.StatusCode))
		}
		o.Set("truncated", v.Truncated)
	default:
		setString(o, "title", v.Title)
	}
	return o
}

// MarshalJSON writes the view's JSON form as canonical JSON.
func (v *ResultView) MarshalJSON() ([]byte, error) { return dsl.Marshal(v.JSON()) }

// Validate reports a view that has no JSON form the design allows: an
// unknown card, search shape or web kind, or a value that is not lossless JSON.
func (v *ResultView) Validate() error {
	if v == nil {
		return nil
	}
	switch v.Card {
	case CardGeneric, CardTerminal, CardDiff, CardRead:
	case CardSearch:
		if v.Shape != ShapeMatches && v.Shape != ShapePaths {
			return fmt.Errorf("search result view: unknown shape %q", v.Shape)
		}
	case CardWeb:
		if v.Kind != WebSearch && v.Kind != WebFetch {
			return fmt.Errorf("web result view: unknown kind %q", v.Kind)
		}
	default:
		return fmt.Errorf("result view: unknown card %q", v.Card)
	}
	if err := dsl.CheckLossless(v.JSON()); err != nil {
		return fmt.Errorf("%s result view: %w", v.Card, err)
	}
	return nil
}

// CallViewFromJSON reads a call view from the JSON value a script presenter
// returned. nil (null) and dsl.Undefined{} are "no view": (nil, nil). An
// object must have a known card, its card's required keys, and no key its
// card does not take; values must have the design's types.
func CallViewFromJSON(v any) (*CallView, error) {
	r, err := viewReader("call view", v)
	if r == nil || err != nil {
		return nil, err
	}
	card := Card(r.str("card", true))
	if err := r.failed(); err != nil {
		return nil, err
	}
	out := &CallView{Card: card}
	r.view.where = string(card) + " call view"
	switch card {
	case CardGeneric:
		out.Title = r.str("title", true)
		out.Kind = ToolCallKind(r.str("kind", false))
		if out.Kind != "" && !knownKind(out.Kind) {
			r.fail("unknown kind %q", out.Kind)
		}
		out.RawInput, _ = r.take("rawInput")
		out.Content = r.content("content")
		out.Locations = r.locations("locations")
	case CardTerminal:
		out.Title = r.str("title", true)
		out.Description = r.str("description", false)
		out.Cwd = r.str("cwd", false)
	case CardDiff:
		out.Title = r.str("title", true)
		out.Diffs = r.diffs("diffs")
		out.Locations = r.locations("locations")
	default:
		return nil, fmt.Errorf("call view: unknown card %q", card)
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return out, nil
}

// ResultViewFromJSON reads a result view from the JSON value a script
// presenter returned, as [CallViewFromJSON] reads a call view.
func ResultViewFromJSON(v any) (*ResultView, error) {
	r, err := viewReader("result view", v)
	if r == nil || err != nil {
		return nil, err
	}
	card := Card(r.str("card", true))
	if err := r.failed(); err != nil {
		return nil, err
	}
	out := &ResultView{Card: card}
	r.view.where = string(card) + " result view"
	switch card {
	case CardGeneric:
		out.Title = r.str("title", false)
		out.Content = r.content("content")
	case CardTerminal:
		out.Title = r.str("title", false)
		out.Output = r.str("output", false)
		if n, ok := r.int("exitCode", false); ok {
			out.ExitCode = &n
		}
		out.Signal = r.str("signal", false)
	case CardDiff:
		out.Title = r.str("title", false)
		out.Diffs = r.diffs("diffs")
	case CardSearch:
		out.Shape = SearchShape(r.str("shape", true))
		out.Title = r.str("title", false)
		switch out.Shape {
		case ShapeMatches:
			out.Files = r.files("files")
		case ShapePaths:
			out.Paths = r.strings("paths")
		default:
			r.fail("unknown shape %q", out.Shape)
		}
		out.Truncated = r.bool("truncated")
		out.Total, _ = r.int("total", true)
	case CardRead:
		out.Title = r.str("title", false)
		out.Path = r.str("path", true)
		out.Offset, _ = r.int("offset", true)
		out.Lines = r.lines("lines")
		out.TotalLines, _ = r.int("totalLines", true)
		out.Lang = r.str("lang", false)
		out.Content = r.content("content")
	case CardWeb:
		out.Kind = WebKind(r.str("kind", true))
		out.Title = r.str("title", false)
		switch out.Kind {
		case WebSearch:
			out.Sources = r.sources("sources")
			out.Answer = r.str("answer", false)
		case WebFetch:
			out.URL = r.str("url", true)
			out.StatusCode, _ = r.int("statusCode", true)
		default:
			r.fail("unknown kind %q", out.Kind)
		}
		out.Truncated = r.bool("truncated")
	default:
		return nil, fmt.Errorf("result view: unknown card %q", card)
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return out, nil
}

func knownKind(k ToolCallKind) bool {
	switch k {
	case KindRead, KindEdit, KindDelete, KindMove, KindSearch, KindExecute, KindFetch, KindOther:
		return true
	}
	return false
}

func setString(o *dsl.Object, key, s string) {
	if s != "" {
		o.Set(key, s)
	}
}

func locationsJSON(ls []FileLocation) []any {
	out := make([]any, len(ls))
	for i, l := range ls {
		o := dsl.NewObject(dsl.Member{Key: "path", Value: l.Path})
		if l.Line != nil {
			o.Set("line", float64(*l.Line))
		}
		out[i] = o
	}
	return out
}

func diffsJSON(ds []FileDiff) []any {
	out := make([]any, len(ds))
	for i, d := range ds {
		var old any
		if d.OldText != nil {
			old = *d.OldText
		}
		out[i] = dsl.NewObject(dsl.Member{Key: "path", Value: d.Path}, dsl.Member{Key: "oldText", Value: old},
			dsl.Member{Key: "newText", Value: d.NewText})
	}
	return out
}

// objReader reads the members of one object of a view, recording the first
// error in the view's shared state, and checks at the end that no member was
// left unread. Keys in messages are paths from the view: "diffs[0].path".
type objReader struct {
	view   *viewState
	prefix string // the object's path from the view, with a trailing dot
	o      *dsl.Object
	read   map[string]bool
}

type viewState struct {
	where string // e.g. "generic call view"
	err   error
}

// viewReader snapshots v and returns a reader for it, or nil for no view.
func viewReader(where string, v any) (*objReader, error) {
	if _, undef := v.(dsl.Undefined); undef || v == nil {
		return nil, nil
	}
	snap, err := dsl.Snapshot(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	o, ok := snap.(*dsl.Object)
	if !ok {
		return nil, fmt.Errorf("%s must be an object, not %s", where, jsonKind(snap))
	}
	return &objReader{view: &viewState{where: where}, o: o, read: map[string]bool{}}, nil
}

// failed returns the first error recorded, or nil.
func (r *objReader) failed() error { return r.view.err }

func (r *objReader) fail(format string, args ...any) {
	if r.view.err == nil {
		r.view.err = fmt.Errorf("%s: %s", r.view.where, fmt.Sprintf(format, args...))
	}
}

// path quotes a member's path from the view.
func (r *objReader) path(key string) string { return strconv.Quote(r.prefix + key) }

func (r *objReader) take(key string) (any, bool) {
	r.read[key] = true
	return r.o.Get(key)
}

// member returns a present member, failing when a required one is absent.
func (r *objReader) member(key string, required bool) (any, bool) {
	x, ok := r.take(key)
	if !ok && required {
		r.fail("missing %s", r.path(key))
	}
	return x, ok
}

func (r *objReader) str(key string, required bool) string {
	x, ok := r.member(key, required)
	if !ok {
		return ""
	}
	s, isStr := x.(string)
	if !isStr {
		r.fail("%s must be a string, not %s", r.path(key), jsonKind(x))
	}
	return s
}

func (r *objReader) bool(key string) bool {
	x, ok := r.member(key, true)
	if !ok {
		return false
	}
	b, isBool := x.(bool)
	if !isBool {
		r.fail("%s must be a boolean, not %s", r.path(key), jsonKind(x))
	}
	return b
}

func (r *objReader) int(key string, required bool) (int, bool) {
	x, ok := r.member(key, required)
	if !ok {
		return 0, false
	}
	f, isNum := x.(float64)
	if !isNum || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		r.fail("%s must be an integer, not %s", r.path(key), jsonKind(x))
		return 0, false
	}
	return int(f), true
}

func (r *objReader) content(key string) []Block {
	x, ok := r.member(key, false)
	if !ok {
		return nil
	}
	if _, isList := x.([]any); !isList {
		r.fail("%s must be an array of content blocks, not %s", r.path(key), jsonKind(x))
		return nil
	}
	blocks, err := ContentFromJSON(x)
	if err != nil {
		r.fail("%s: %v", r.path(key), err)
	}
	return blocks
}

// list reads an array member, each element with elem (given a reader for
// object elements when objects is set, else the element itself), and reports
// whether it is present.
func (r *objReader) list(key string, required, objects bool, elem func(e *objReader, x any)) bool {
	x, ok := r.member(key, required)
	if !ok {
		return false
	}
	l, isList := x.([]any)
	if !isList {
		r.fail("%s must be an array, not %s", r.path(key), jsonKind(x))
		return false
	}
	for i, x := range l {
		if r.failed() != nil {
			break
		}
		at := r.prefix + key + "[" + strconv.Itoa(i) + "]"
		if !objects {
			elem(&objReader{view: r.view, prefix: at}, x)
			continue
		}
		o, isObj := x.(*dsl.Object)
		if !isObj {
			r.fail("%s must be an object, not %s", strconv.Quote(at), jsonKind(x))
			break
		}
		e := &objReader{view: r.view, prefix: at + ".", o: o, read: map[string]bool{}}
		elem(e, x)
		e.done()
	}
	return true
}

func (r *objReader) locations(key string) []FileLocation {
	out := []FileLocation{}
	if !r.list(key, false, true, func(e *objReader, _ any) {
		l := FileLocation{Path: e.str("path", true)}
		if n, ok := e.int("line", false); ok {
			l.Line = &n
		}
		out = append(out, l)
	}) {
		return nil
	}
	return out
}

func (r *objReader) diffs(key string) []FileDiff {
	out := []FileDiff{}
	r.list(key, true, true, func(e *objReader, _ any) {
		d := FileDiff{Path: e.str("path", true)}
		if old, ok := e.member("oldText", true); ok && old != nil {
			if s, isStr := old.(string); isStr {
				d.OldText = &s
			} else {
				e.fail("%s must be a string or null, not %s", e.path("oldText"), jsonKind(old))
			}
		}
		d.NewText = e.str("newText", true)
		out = append(out, d)
	})
	return out
}

func (r *objReader) lines(key string) []ReadFileLine {
	out := []ReadFileLine{}
	r.list(key, true, true, func(e *objReader, _ any) {
		n, _ := e.int("number", true)
		out = append(out, ReadFileLine{Number: n, Text: e.str("text", true)})
	})
	return out
}

func (r *objReader) strings(key string) []string {
	out := []string{}
	r.list(key, true, false, func(e *objReader, x any) {
		s, ok := x.(string)
		if !ok {
			e.fail("%s must be a string, not %s", strconv.Quote(e.prefix), jsonKind(x))
		}
		out = append(out, s)
	})
	return out
}

func (r *objReader) files(key string) []SearchFileMatches {
	out := []SearchFileMatches{}
	r.list(key, true, true, func(e *objReader, _ any) {
		f := SearchFileMatches{Path: e.str("path", true), Matches: []SearchLineMatch{}}
		e.list("matches", true, true, func(m *objReader, _ any) {
			n, _ := m.int("lineNumber", true)
			f.Matches = append(f.Matches, SearchLineMatch{LineNumber: n, Line: m.str("line", true)})
		})
		out = append(out, f)
	})
	return out
}

func (r *objReader) sources(key string) []WebSource {
	out := []WebSource{}
	r.list(key, true, true, func(e *objReader, _ any) {
		out = append(out, WebSource{URL: e.str("url", true), Title: e.str("title", false),
			Snippet: e.str("snippet", false), PublishedAt: e.str("publishedAt", false)})
	})
	return out
}

// done records a member nothing read as an unknown key and returns the
// view's first error.
func (r *objReader) done() error {
	if r.view.err == nil {
		for _, k := range r.o.Keys() {
			if !r.read[k] {
				r.fail("unknown key %s", r.path(k))
				break
			}
		}
	}
	return r.view.err
}
