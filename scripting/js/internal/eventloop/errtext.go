package eventloop

import (
	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/internal/textcap"
)

// DefaultMaxErrorText is the bound, in bytes, of each text a script error
// carries out of the loop when Options.MaxErrorText is not set: the name,
// the message and a thrown object's own stack text.
const DefaultMaxErrorText = 16 << 10

// maxErrorText is the loop's bound on each text of a JSError.
func (l *Loop) maxErrorText() int {
	if l.opts.MaxErrorText > 0 {
		return l.opts.MaxErrorText
	}
	return DefaultMaxErrorText
}

// errorText is the text of v, a string a script error holds, cut to the
// loop's bound (textcap's marker ends a cut text). A string longer than the
// bound is measured first (in UTF-16 code units, each at least one byte of
// UTF-8) and only its prefix is converted: a 100-million-character message
// costs the bound, not a copy of itself.
func (l *Loop) errorText(v goja.Value) string {
	return CutText(v, l.maxErrorText())
}

// CutText is v's text (String(v) for a primitive), cut to at most limit
// bytes and marked with textcap's marker when longer. A goja string is
// converted only up to its first limit code units.
func CutText(v goja.Value, limit int) string {
	if s, ok := v.(goja.String); ok && s.Length() > limit {
		// Over limit code units is over limit bytes: the text is cut.
		return textcap.Prefix(s.Substring(0, limit).String(), limit) + textcap.Marker
	}
	return textcap.String(v.String(), limit)
}
