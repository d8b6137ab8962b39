package display

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dsh-go/dsh/internal/textcap"
)

// MaxName is the bound, in bytes of the input, of a name [Quote] shows:
// the longest tool name the registry accepts.
const MaxName = 64

// MaxText is the bound, in bytes of the input, of the free text (a
// message a script threw, a reason a server sent) one diagnostic line shows
// through [Line].
const MaxText = 2048

// Ellipsis marks where a text was cut.
const Ellipsis = "…"

// Quote is s Go-quoted for a message, cut to MaxName bytes (between
// characters) with "…" inside the quotes when it is longer. It escapes
// control characters, invalid UTF-8 and non-printing characters as %q
// does, so a name that fits is shown exactly as fmt's %q shows it.
func Quote(s string) string { return QuoteMax(s, MaxName) }

// QuoteMax is [Quote] with max bytes of s shown.
func QuoteMax(s string, max int) string {
	head, cut := prefix(s, max)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head + Ellipsis)
}

// Line is s on one line for a diagnostic: at most max bytes of s, cut
// between characters with "…" when longer, with every character that is not
// printable (a control character, a line or paragraph separator, a
// bidirectional formatting character, an invalid byte) written as its Go
// escape (\n, \x1b, \u2028, …). Printable text, non-ASCII letters
// included, is kept as it is and unquoted.
func Line(s string, max int) string {
	head, cut := prefix(s, max)
	if clean(head) {
		if cut {
			return head + Ellipsis
		}
		return head
	}
	var b strings.Builder
	for i := 0; i < len(head); {
		r, size := utf8.DecodeRuneInString(head[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[head[i]>>4])
			b.WriteByte(hex[head[i]&0xf])
		case printable(r):
			b.WriteString(head[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	if cut {
		b.WriteString(Ellipsis)
	}
	return b.String()
}

// prefix returns s cut to at most max bytes, between characters, and
// whether it was cut.
func prefix(s string, max int) (string, bool) {
	head := textcap.Prefix(s, max)
	return head, len(head) < len(s)
}

// clean reports whether s is valid UTF-8 made of printable characters only.
func clean(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !printable(r) {
			return false
		}
		i += size
	}
	return true
}

// printable reports whether r may be shown as it is: a graphic character
// or a plain space, and not a bidirectional formatting character (which
// reorders the text around it).
func printable(r rune) bool {
	if r == utf8.RuneError || unicode.Is(unicode.Bidi_Control, r) {
		return false
	}
	return r == ' ' || unicode.IsGraphic(r) && !unicode.IsSpace(r)
}
