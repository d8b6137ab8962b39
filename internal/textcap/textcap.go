package textcap

import "unicode/utf8"

// Marker ends a text that [Cut] shortened.
const Marker = "… (truncated)"

// Cut returns s when it has at most n bytes. Otherwise it returns the
// longest prefix of s of at most n bytes that ends between UTF-8 characters,
// followed by [Marker], and true.
func Cut(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	return Prefix(s, n) + Marker, true
}

// Prefix returns the longest prefix of s of at most n bytes that ends
// between UTF-8 characters, without a marker.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n, 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// String is [Cut] without its report.
func String(s string, n int) string {
	s, _ = Cut(s, n)
	return s
}
