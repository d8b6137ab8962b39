package ptc

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/internal/display"
)

// Bounds of UnknownBindingMessage.
const (
	// maxSuggestions is how many close names the message offers.
	maxSuggestions = 3
	// maxMeasuredName is the longest name, in characters, that is compared
	// with the bound names by edit distance; a longer one is only compared
	// by prefix, so that a huge name costs time linear in its length.
	maxMeasuredName = 64
)

// UnknownBindingMessage is what a program's call of a name its namespace
// does not bind fails with (tools.nope({})): `unknown tool "nope"`, the
// message a sub-call of a tool unknown to the pipeline carries (§2.8), then
// the closest of the bound names, if any are close:
// `unknown tool "nope"; did you mean "note" or "nop2"?`.
//
// A bound name is close when its edit distance to name (Levenshtein, over
// characters, ignoring case) is at most a third of name's length (at least
// 1, at most 3), or when one of the two starts with the other, ignoring
// case, and the shorter has at least 3 characters (read and read_file).
// The closest come first: by distance, then by name. At most 3 are named,
// and every quoted name is cut to 64 bytes (the longest tool name), so the
// message stays short
// whatever the program called and however many names are bound.
func UnknownBindingMessage(name string, bound []string) string {
	var b strings.Builder
	b.WriteString("unknown tool ")
	b.WriteString(quoteName(name))
	near := closeNames(name, bound)
	for i, c := range near {
		switch {
		case i == 0:
			b.WriteString("; did you mean ")
		case i == len(near)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString(quoteName(c))
	}
	if len(near) > 0 {
		b.WriteString("?")
	}
	return b.String()
}

// quoteName is name quoted as the pipeline quotes an unknown tool's name:
// Go-quoted, cut to 64 bytes with "…" (display.Quote).
func quoteName(name string) string { return display.Quote(name) }

// closeNames returns the bound names close to name, closest first, at most
// maxSuggestions of them.
func closeNames(name string, bound []string) []string {
	type candidate struct {
		name string
		dist int
	}
	lname := strings.ToLower(name)
	n := utf8.RuneCountInString(lname)
	limit := min(max(n/3, 1), 3)
	measured := n <= maxMeasuredName
	var found []candidate
	for _, c := range bound {
		if c == name {
			continue
		}
		lc := strings.ToLower(c)
		d := -1
		if measured {
			d = editDistance(lname, lc, limit)
		}
		switch {
		case d >= 0 && d <= limit:
		case prefixOfOther(lname, lc):
			d = limit + 1 + abs(n-utf8.RuneCountInString(lc)) // after every near miss
		default:
			continue
		}
		found = append(found, candidate{c, d})
	}
	slices.SortFunc(found, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.dist, b.dist), strings.Compare(a.name, b.name))
	})
	out := make([]string, 0, min(len(found), maxSuggestions))
	for _, c := range found[:min(len(found), maxSuggestions)] {
		out = append(out, c.name)
	}
	return out
}

// prefixOfOther reports whether one of a and b starts with the other, the
// shorter having at least 3 characters.
func prefixOfOther(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return utf8.RuneCountInString(a) >= 3 && strings.HasPrefix(b, a)
}

// editDistance is the Levenshtein distance between a and b, over
// characters, or -1 when it is over limit (found as soon as a whole row of
// the table is over it).
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if abs(len(ra)-len(rb)) > limit {
		return -1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return -1
		}
		prev, cur = cur, prev
	}
	if d := prev[len(rb)]; d <= limit {
		return d
	}
	return -1
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
