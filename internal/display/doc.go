// Package display makes text from outside dsh safe to show in a diagnostic:
// a tool name a script registered or a model called, a path, a message a
// script threw or an imported server sent. Such text may hold control
// characters (an escape sequence that rewrites a terminal, a newline that
// forges a log line) and may be of any length (a megabyte name echoed in
// every error about it).
//
// Every function here is bounded: it reads at most its bound of the input
// (plus one character), whatever the input's length, and its result holds
// no control character, no invalid UTF-8 and no line break.
//
//   - [Quote] is a name for a message: Go-quoted (strconv.Quote: control
//     characters, invalid bytes and non-printing characters escaped), cut
//     to [MaxName] bytes between characters with "…" marking the cut. A
//     conforming tool name (at most 64 ASCII letters, digits, '_' or '-')
//     is shown whole, exactly as %q shows it.
//   - [QuoteMax] is Quote with another bound.
//   - [Line] is free text on one line, unquoted: printable characters as
//     they are, every other character (C0 and C1 controls, DEL, line and
//     paragraph separators, bidirectional overrides, invalid bytes) as its
//     Go escape, cut to a bound with "…".
package display
