package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Limits of what a card shows; the rest is counted ("… 12 more lines").
const (
	maxBodyLines = 12  // lines of output, content, file lines, matches
	maxDiffLines = 24  // lines of one file's diff
	maxInputLen  = 120 // characters of a generic card's raw input
	diffContext  = 2   // unchanged lines around a change
	// maxHeaderName bounds the tool name and the call id of a card's
	// header: 64 characters and "…" (a registered name has at most 64).
	maxHeaderName = 65
)

// style colours terminal output; the zero style writes plain text.
type style struct{ on bool }

func (s style) sgr(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string   { return s.sgr("1", t) }
func (s style) dim(t string) string    { return s.sgr("2", t) }
func (s style) red(t string) string    { return s.sgr("31", t) }
func (s style) green(t string) string  { return s.sgr("32", t) }
func (s style) yellow(t string) string { return s.sgr("33", t) }
func (s style) cyan(t string) string   { return s.sgr("36", t) }

// cardWriter renders cards as text.
type cardWriter struct {
	w  io.Writer
	st style
	b  strings.Builder
}

// writeCards writes each card followed by a blank line.
func writeCards(w io.Writer, st style, cards []card) {
	cw := &cardWriter{w: w, st: st}
	for _, c := range cards {
		cw.card(c)
		cw.b.WriteByte('\n')
		io.WriteString(w, cw.b.String())
		cw.b.Reset()
	}
}

func (cw *cardWriter) line(indent int, text string) {
	cw.b.WriteString(strings.Repeat(" ", indent))
	cw.b.WriteString(text)
	cw.b.WriteByte('\n')
}

// card writes one card: a header line — status, tool, call id, title and
// tags — then the body, indented.
func (cw *cardWriter) card(c card) {
	st := cw.st
	mark := st.yellow("…")
	switch {
	case c.hasResult && c.isError:
		mark = st.red("✗")
	case c.hasResult:
		mark = st.green("✓")
	}
	title := ""
	var tags []string
	if c.call != nil {
		title = c.call.Title
		if c.call.Card == engine.CardTerminal {
			title = "$ " + title
			if c.call.Cwd != "" {
				tags = append(tags, "in "+c.call.Cwd)
			}
		}
		if c.call.Card == engine.CardGeneric && c.call.Kind != "" {
			tags = append(tags, string(c.call.Kind))
		}
	}
	if c.result != nil && c.result.Title != "" {
		title = c.result.Title
	}
	// A model chooses the name and the call id of a call: each is shown
	// cut to 64 characters.
	h := mark + " " + st.bold(clean(truncate(c.name, maxHeaderName))) + " " + st.dim(clean(truncate(c.callID, maxHeaderName)))
	if title != "" && title != c.name {
		h += " — " + clean(title)
	}
	if len(tags) > 0 {
		h += " " + st.dim("("+clean(strings.Join(tags, ", "))+")")
	}
	if c.code != "" {
		h += " " + st.red("["+clean(c.code)+"]")
	}
	if !c.hasResult {
		h += " " + st.yellow("(no result)")
	}
	cw.line(0, h)

	if c.call != nil {
		// A result view replaces the pending call's presentation; only a
		// terminal's description stays.
		if c.result == nil {
			cw.callBody(c.call, c.hasResult && c.isError)
		} else if c.call.Card == engine.CardTerminal && c.call.Description != "" {
			cw.line(2, st.dim(clean(c.call.Description)))
		}
	}
	if !c.hasResult {
		return
	}
	shown := false
	if c.result != nil {
		shown = cw.resultBody(c.result, c.content)
	}
	if !shown || c.isError && !sameText(c.result, c.content) {
		text := contentText(c.content)
		if c.isError {
			cw.lines(2, text, maxBodyLines, st.red)
		} else {
			cw.lines(2, text, maxBodyLines, nil)
		}
	}
}

// sameText reports whether a generic result view shows exactly the
// result's content (so an error is not shown twice).
func sameText(v *engine.ResultView, content []engine.Block) bool {
	return v != nil && v.Card == engine.CardGeneric && v.Content != nil && contentText(v.Content) == contentText(content)
}

// callBody writes what a call view adds below the header. The diff of a
// call that failed (denied, invalid, or failing in its body) is what it
// would have changed: it is left out, so that the card does not read as
// if the change was made.
func (cw *cardWriter) callBody(v *engine.CallView, failed bool) {
	st := cw.st
	switch v.Card {
	case engine.CardGeneric:
		if v.RawInput != nil {
			text, err := dsl.Marshal(v.RawInput)
			if err == nil {
				cw.line(2, st.dim("input: "+truncate(clean(string(text)), maxInputLen)))
			}
		}
		if v.Content != nil {
			cw.lines(2, contentText(v.Content), maxBodyLines, st.dim)
		}
		cw.locations(v.Locations)
	case engine.CardTerminal:
		if v.Description != "" {
			cw.line(2, st.dim(clean(v.Description)))
		}
	case engine.CardDiff:
		cw.locations(v.Locations)
		if !failed {
			cw.diffs(v.Diffs)
		}
	}
}

func (cw *cardWriter) locations(locs []engine.FileLocation) {
	if len(locs) == 0 {
		return
	}
	parts := make([]string, len(locs))
	for i, l := range locs {
		parts[i] = l.Path
		if l.Line != nil {
			parts[i] += ":" + strconv.Itoa(*l.Line)
		}
	}
	cw.line(2, cw.st.dim("at "+clean(strings.Join(parts, ", "))))
}

// resultBody writes a result view's body; false means it showed nothing of
// the result, and the content is shown instead.
func (cw *cardWriter) resultBody(v *engine.ResultView, content []engine.Block) bool {
	st := cw.st
	switch v.Card {
	case engine.CardGeneric:
		if v.Content == nil {
			return false
		}
		cw.lines(2, contentText(v.Content), maxBodyLines, nil)
	case engine.CardTerminal:
		if v.Output != "" {
			cw.tail(2, v.Output, maxBodyLines)
		}
		switch {
		case v.Signal != "":
			cw.line(2, st.red("killed by "+clean(v.Signal)))
		case v.ExitCode != nil && *v.ExitCode == 0:
			cw.line(2, st.dim("exit 0"))
		case v.ExitCode != nil:
			cw.line(2, st.red("exit "+strconv.Itoa(*v.ExitCode)))
		}
	case engine.CardDiff:
		cw.diffs(v.Diffs)
	case engine.CardSearch:
		cw.search(v)
	case engine.CardRead:
		cw.read(v)
	case engine.CardWeb:
		cw.web(v)
	default:
		return false
	}
	return true
}

func (cw *cardWriter) search(v *engine.ResultView) {
	st := cw.st
	suffix := ""
	if v.Truncated {
		suffix = ", truncated"
	}
	if v.Shape == engine.ShapePaths {
		cw.line(2, st.dim(plural(v.Total, "path", "paths")+suffix))
		shown := 0
		for _, p := range v.Paths {
			if shown == maxBodyLines {
				break
			}
			cw.line(2, clean(p))
			shown++
		}
		if n := len(v.Paths) - shown; n > 0 {
			cw.line(2, st.dim(more(n, "path", "paths")))
		}
		return
	}
	cw.line(2, st.dim(plural(v.Total, "match", "matches")+" in "+plural(len(v.Files), "file", "files")+suffix))
	shown, hidden := 0, 0
	for _, f := range v.Files {
		if shown >= maxBodyLines {
			hidden += len(f.Matches)
			continue
		}
		cw.line(2, st.bold(clean(f.Path)))
		for _, m := range f.Matches {
			if shown >= maxBodyLines {
				hidden++
				continue
			}
			cw.line(4, st.cyan(strconv.Itoa(m.LineNumber)+":")+" "+clean(m.Line))
			shown++
		}
	}
	if hidden > 0 {
		cw.line(2, st.dim(more(hidden, "match", "matches")))
	}
}

func (cw *cardWriter) read(v *engine.ResultView) {
	st := cw.st
	head := clean(v.Path)
	if len(v.Lines) > 0 {
		first, last := v.Lines[0].Number, v.Lines[len(v.Lines)-1].Number
		head += fmt.Sprintf(" · lines %d–%d of %d", first, last, v.TotalLines)
	} else {
		head += fmt.Sprintf(" · %s", plural(v.TotalLines, "line", "lines"))
	}
	if v.Lang != "" {
		head += " · " + clean(v.Lang)
	}
	cw.line(2, st.dim(head))
	width := 1
	if len(v.Lines) > 0 {
		width = len(strconv.Itoa(v.Lines[len(v.Lines)-1].Number))
	}
	for i, l := range v.Lines {
		if i == maxBodyLines {
			cw.line(2, st.dim(more(len(v.Lines)-i, "line", "lines")))
			break
		}
		cw.line(2, st.dim(fmt.Sprintf("%*d │", width, l.Number))+" "+clean(l.Text))
	}
	if v.Content != nil {
		cw.lines(2, contentText(v.Content), maxBodyLines, nil)
	}
}

func (cw *cardWriter) web(v *engine.ResultView) {
	st := cw.st
	suffix := ""
	if v.Truncated {
		suffix = " (truncated)"
	}
	if v.Kind == engine.WebFetch {
		status := strconv.Itoa(v.StatusCode)
		if v.StatusCode >= 400 {
			status = st.red(status)
		}
		cw.line(2, clean(v.URL)+" → "+status+st.dim(suffix))
		return
	}
	if v.Answer != "" {
		cw.lines(2, v.Answer, maxBodyLines, nil)
	}
	for i, s := range v.Sources {
		if i == maxBodyLines {
			cw.line(2, st.dim(more(len(v.Sources)-i, "source", "sources")))
			break
		}
		title := s.Title
		if title == "" {
			title = s.URL
		}
		cw.line(2, "• "+clean(title)+" "+st.dim("<"+clean(s.URL)+">"))
		if s.Snippet != "" {
			cw.line(4, st.dim(truncate(clean(s.Snippet), maxInputLen)))
		}
	}
	if suffix != "" {
		cw.line(2, st.dim("truncated"))
	}
}

// lines writes text's lines, at most max of them, then how many were left.
func (cw *cardWriter) lines(indent int, text string, max int, paint func(string) string) {
	if text == "" {
		return
	}
	ls := splitLines(text)
	for i, l := range ls {
		if i == max {
			cw.line(indent, cw.st.dim(more(len(ls)-i, "line", "lines")))
			return
		}
		l = clean(l)
		if paint != nil {
			l = paint(l)
		}
		cw.line(indent, l)
	}
}

// tail writes the last max lines of text, after how many came before.
func (cw *cardWriter) tail(indent int, text string, max int) {
	ls := splitLines(text)
	if len(ls) > max {
		cw.line(indent, cw.st.dim(fmt.Sprintf("… %s before", plural(len(ls)-max, "line", "lines"))))
		ls = ls[len(ls)-max:]
	}
	for _, l := range ls {
		cw.line(indent, clean(l))
	}
}

// diffs writes each file's change as a unified diff.
func (cw *cardWriter) diffs(ds []engine.FileDiff) {
	st := cw.st
	for _, d := range ds {
		if d.OldText == nil {
			cw.line(2, st.bold(clean(d.Path))+st.dim(" (new file)"))
			cw.diffLines(diffLines(nil, splitLines(d.NewText)))
			continue
		}
		cw.line(2, st.bold(clean(d.Path)))
		cw.diffLines(diffLines(splitLines(*d.OldText), splitLines(d.NewText)))
	}
}

func (cw *cardWriter) diffLines(ops []diffOp) {
	st := cw.st
	shown := 0
	for i, op := range ops {
		if shown == maxDiffLines {
			cw.line(4, st.dim(more(len(ops)-i, "line", "lines")))
			return
		}
		switch op.kind {
		case '-':
			cw.line(4, st.red("- "+clean(op.text)))
		case '+':
			cw.line(4, st.green("+ "+clean(op.text)))
		case '@':
			cw.line(4, st.cyan(op.text))
		default:
			cw.line(4, st.dim("  "+clean(op.text)))
		}
		shown++
	}
}

// splitLines splits text into lines without their line endings; a final
// line ending does not start another line.
func splitLines(text string) []string {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// clean makes text safe to print on a terminal: control characters (but
// tabs) are shown in caret notation (^[ for ESC), C1 controls as \u00xx,
// and invalid UTF-8 as U+FFFD, so a tool's output cannot move the cursor,
// change colours or retitle the terminal.
func clean(text string) string {
	ok := true
	for _, r := range text {
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == utf8.RuneError {
			ok = false
			break
		}
	}
	if ok {
		return text
	}
	var b strings.Builder
	for _, r := range text {
		switch {
		case r == '\t':
			b.WriteRune(r)
		case r < 0x20:
			b.WriteByte('^')
			b.WriteByte(byte(r) + 64)
		case r == 0x7f:
			b.WriteString("^?")
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r) // invalid bytes range as U+FFFD
		}
	}
	return b.String()
}

// truncate shortens text to at most n characters, ending with "…".
func truncate(text string, n int) string {
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n-1]) + "…"
}

// plural writes "1 line" or "3 lines".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// more writes "… 1 more line" or "… 3 more lines".
func more(n int, one, many string) string {
	if n == 1 {
		return "… 1 more " + one
	}
	return "… " + strconv.Itoa(n) + " more " + many
}
