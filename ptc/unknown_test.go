package ptc

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestUnknownBindingMessage(t *testing.T) {
	bound := []string{"note", "nop2", "read_file", "write_file", "bash", "Grep", "glob", "my-mcp.tool"}
	tests := []struct {
		name  string
		call  string
		bound []string
		want  string
	}{
		{"a name far from every tool names none", "deploy", bound, `unknown tool "deploy"`},
		{"no tools bound names none", "nope", nil, `unknown tool "nope"`},
		{"names one edit away are offered, the nearest first", "nope", bound, `unknown tool "nope"; did you mean "nop2" or "note"?`},
		{"case is ignored", "grep", bound, `unknown tool "grep"; did you mean "Grep"?`},
		{"a prefix of a tool's name finds it", "read", bound, `unknown tool "read"; did you mean "read_file"?`},
		{"a tool's name that is a prefix of the call finds it", "bash_run", bound, `unknown tool "bash_run"; did you mean "bash"?`},
		{"a prefix needs three characters", "wr", bound, `unknown tool "wr"`},
		{"a short name allows one edit", "gob", bound, `unknown tool "gob"; did you mean "glob"?`},
		{"a longer name allows more edits", "read_fiel", bound, `unknown tool "read_fiel"; did you mean "read_file"?`},
		{"at most three names are offered", "tool", []string{"toola", "toolb", "toolc", "toold"},
			`unknown tool "tool"; did you mean "toola", "toolb" or "toolc"?`},
		{"edits come before prefixes", "writ_file", []string{"writ_file_now", "write_file"},
			`unknown tool "writ_file"; did you mean "write_file" or "writ_file_now"?`},
		{"names are quoted as the pipeline quotes them", "a\"b\n", []string{"a\"b"},
			`unknown tool "a\"b\n"; did you mean "a\"b"?`},
		{"characters count as one edit each", "nöte", []string{"note"}, `unknown tool "nöte"; did you mean "note"?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UnknownBindingMessage(tt.call, tt.bound); got != tt.want {
				t.Errorf("UnknownBindingMessage(%q) =\n  %s\nwant\n  %s", tt.call, got, tt.want)
			}
		})
	}
}

func TestUnknownBindingMessageIsBounded(t *testing.T) {
	t.Run("a huge name is quoted cut to 64 bytes between characters", func(t *testing.T) {
		got := UnknownBindingMessage(strings.Repeat("é", 1_000_000), []string{"ééé"})
		want := `unknown tool "` + strings.Repeat("é", 32) + `…"; did you mean "ééé"?`
		if got != want {
			t.Errorf("got %q\nwant %q", got, want)
		}
	})
	t.Run("a huge bound name is quoted cut too", func(t *testing.T) {
		long := strings.Repeat("x", 500)
		got := UnknownBindingMessage("xxx", []string{long})
		if want := `unknown tool "xxx"; did you mean "` + strings.Repeat("x", 64) + `…"?`; got != want {
			t.Errorf("got %q", got)
		}
	})
	t.Run("control characters in a huge name are escaped, and the quote is bounded", func(t *testing.T) {
		got := UnknownBindingMessage("\x1b[2J\n"+strings.Repeat("\x00", 1<<20), nil)
		if want := `unknown tool "\x1b[2J\n` + strings.Repeat(`\x00`, 59) + `…"`; got != want {
			t.Errorf("got %q", got)
		}
	})
	t.Run("many bound names still give three", func(t *testing.T) {
		bound := make([]string, 10_000)
		for i := range bound {
			bound[i] = "tool" + strings.Repeat("x", i%7)
		}
		got := UnknownBindingMessage("tool", bound)
		if n := strings.Count(got, `"toolx`); n != 3 || !utf8.ValidString(got) {
			t.Errorf("got %q, want three suggestions", got)
		}
	})
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b  string
		limit int
		want  int
	}{
		{"", "", 3, 0}, {"abc", "abc", 3, 0}, {"abc", "abd", 3, 1}, {"abc", "ab", 3, 1}, {"ab", "abc", 3, 1},
		{"kitten", "sitting", 3, 3}, {"kitten", "sitting", 2, -1}, {"abcdef", "a", 3, -1}, {"ünï", "uni", 3, 2},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
			t.Errorf("editDistance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.limit, got, tt.want)
		}
	}
}
