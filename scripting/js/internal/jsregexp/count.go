package jsregexp

// CountRE2 counts the matches goja's search for every match (split, and
// match and replace with the g flag) finds in an ASCII string, which goja
// runs on RE2, up to limit (limit+1 means more than limit), in linear
// time; ok is false when the pattern has no RE2 form (goja then runs it on
// regexp2).
func (m *Matcher) CountRE2(ascii string, limit int) (n int, ok bool) {
	if m.re2 == nil {
		return 0, false
	}
	return len(m.re2.FindAllStringIndex(ascii, limit+1)), true
}
