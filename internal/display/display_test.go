package display

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"a conforming name is shown as %q shows it", "read_file", `"read_file"`},
		{"an empty name is two quotes", "", `""`},
		{"an escape character is escaped", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"a newline is escaped", "a\nb", `"a\nb"`},
		{"a NUL is escaped", "a\x00b", `"a\x00b"`},
		{"an invalid byte is escaped", "a\xffb", `"a\xffb"`},
		{"printable unicode is kept", "héllo", `"héllo"`},
		{"a 64-byte name is whole", strings.Repeat("a", 64), `"` + strings.Repeat("a", 64) + `"`},
		{"a 65-byte name is cut to 64 with an ellipsis", strings.Repeat("a", 65), `"` + strings.Repeat("a", 64) + `…"`},
		{"a cut falls between characters", strings.Repeat("é", 40), `"` + strings.Repeat("é", 32) + `…"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.in); got != tt.want {
				t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
	t.Run("a conforming name is quoted exactly as fmt quotes it", func(t *testing.T) {
		for _, n := range []string{"a", "run_code", "my-tool", "__proto__", strings.Repeat("Z9", 32)} {
			if got, want := Quote(n), fmt.Sprintf("%q", n); got != want {
				t.Errorf("Quote(%q) = %s, want %s", n, got, want)
			}
		}
	})
	t.Run("a megabyte name gives a short quote", func(t *testing.T) {
		got := Quote(strings.Repeat("\x1b", 1<<20))
		if want := `"` + strings.Repeat(`\x1b`, 64) + `…"`; got != want {
			t.Errorf("got %d bytes %.80q…, want %s", len(got), got, want)
		}
	})
}

func TestLine(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"plain text is kept unquoted", "load failed: x.js", 100, "load failed: x.js"},
		{"a newline is escaped so the text stays on one line", "a\nb\r\n", 100, `a\nb\r\n`},
		{"an escape sequence is escaped", "\x1b[31mred", 100, `\x1b[31mred`},
		{"a tab, a NUL and DEL are escaped", "a\tb\x00c\x7f", 100, `a\tb\x00c\x7f`},
		{"a C1 control is escaped", "a\u009bb", 100, `a\u009bb`},
		{"a line separator is escaped", "a\u2028b", 100, `a\u2028b`},
		{"a bidirectional override is escaped", "a\u202eb", 100, `a\u202eb`},
		{"an invalid byte is escaped", "a\xfeb", 100, `a\xfeb`},
		{"unicode letters are kept", "ünïcödé ✓", 100, "ünïcödé ✓"},
		{"a long text is cut with an ellipsis", strings.Repeat("x", 20), 8, "xxxxxxxx…"},
		{"a cut falls between characters", "ééé", 5, "éé…"},
		{"a cut text is escaped too", "\n\n\n\n", 2, `\n\n…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Line(tt.in, tt.max); got != tt.want {
				t.Errorf("Line(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
	t.Run("no control character survives any byte", func(t *testing.T) {
		var all []byte
		for c := 0; c < 256; c++ {
			all = append(all, byte(c))
		}
		got := Line(string(all)+"\u0085\u2029\u200f", 1000)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == 0x2028 || r == 0x2029 || r == 0x200f {
				t.Fatalf("raw %U in %q", r, got)
			}
		}
	})
}
