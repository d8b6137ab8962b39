package jsregexp

import (
	"strings"
	"unicode/utf8"
)

// MaxShown bounds how many bytes of a pattern an error message shows.
const MaxShown = 100

// UnsupportedError is a pattern that uses syntax goja accepts but runs
// wrong. Its message reads "named capture groups are not supported:
// /(?<year>\d{4})/".
type UnsupportedError struct {
	// What names the feature: "named capture groups are not supported".
	What string
	// Pattern and Flags are the regular expression's.
	Pattern, Flags string
}

func (e *UnsupportedError) Error() string {
	return e.What + ": " + Show(e.Pattern, e.Flags)
}

// Show writes a regular expression as a literal, /pattern/flags, its
// pattern cut to MaxShown bytes (at a character boundary, marked "...").
func Show(pattern, flags string) string {
	if len(pattern) > MaxShown {
		cut := MaxShown
		for cut > 0 && !utf8.RuneStart(pattern[cut]) {
			cut--
		}
		pattern = pattern[:cut] + "..."
	}
	return "/" + pattern + "/" + flags
}

// Check returns an *UnsupportedError for a pattern or flags that goja
// accepts but runs wrong (see the package documentation), and nil for
// everything else, including invalid patterns, which goja reports itself.
// It scans the text once, skipping character classes where a feature
// cannot occur there; it does not validate the pattern.
func Check(pattern, flags string) error {
	fail := func(what string) error {
		return &UnsupportedError{What: what, Pattern: pattern, Flags: flags}
	}
	for _, f := range flags {
		if f == 'd' || f == 'v' {
			return fail(`the regular expression flag "` + string(f) + `" is not supported`)
		}
	}
	inClass := false
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			if i+1 >= len(pattern) {
				return nil
			}
			i++
			switch e := pattern[i]; e {
			case 'p', 'P':
				if i+1 < len(pattern) && pattern[i+1] == '{' {
					return fail("unicode property escapes are not supported")
				}
			case 'k':
				if !inClass && i+1 < len(pattern) && pattern[i+1] == '<' {
					return fail("named capture groups are not supported")
				}
			case 'a', 'e':
				return fail(`the escape \` + string(e) + " is not supported")
			case 'A', 'G', 'Z', 'z':
				if !inClass {
					return fail(`the escape \` + string(e) + " is not supported")
				}
			}
		case c == '[' && !inClass:
			inClass = true
		case c == ']' && inClass:
			inClass = false
		case c == '(' && !inClass:
			rest := pattern[i+1:]
			if strings.HasPrefix(rest, "?<") && !strings.HasPrefix(rest, "?<=") && !strings.HasPrefix(rest, "?<!") {
				return fail("named capture groups are not supported")
			}
		}
	}
	return nil
}
