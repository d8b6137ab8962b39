package jsregexp_test

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting/js/internal/jsregexp"
)

func TestCheckRefusesWhatGojaRunsWrong(t *testing.T) {
	tests := []struct {
		name, pattern, flags, want string
	}{
		{"a named capture group is refused", `(?<year>\d{4})`, "", `named capture groups are not supported: /(?<year>\d{4})/`},
		{"a named backreference is refused", `(a)\k<x>`, "g", `named capture groups are not supported: /(a)\k<x>/g`},
		{"a Unicode property escape is refused", `\p{L}+`, "u", `unicode property escapes are not supported: /\p{L}+/u`},
		{"a negated property escape in a class is refused", `[\P{Lu}]`, "u", `unicode property escapes are not supported: /[\P{Lu}]/u`},
		{"a property escape without the u flag is refused too", `\p{L}`, "", `unicode property escapes are not supported: /\p{L}/`},
		{"the flag d is refused", `a`, "gd", `the regular expression flag "d" is not supported: /a/gd`},
		{"the flag v is refused", `[a]`, "v", `the regular expression flag "v" is not supported: /[a]/v`},
		{"the escape \\a is refused", `x\a`, "", `the escape \a is not supported: /x\a/`},
		{"the escape \\e is refused in a class", `[\e]`, "", `the escape \e is not supported: /[\e]/`},
		{"the escape \\A is refused", `\Aabc`, "", `the escape \A is not supported: /\Aabc/`},
		{"the escape \\z is refused", `abc\z`, "m", `the escape \z is not supported: /abc\z/m`},
		{"a long pattern is shown cut", strings.Repeat("x", 150) + `(?<n>y)`, "", `named capture groups are not supported: /` + strings.Repeat("x", 100) + `.../`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := jsregexp.Check(tt.pattern, tt.flags)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Check(%q, %q) = %v, want %s", tt.pattern, tt.flags, err, tt.want)
			}
			if _, ok := err.(*jsregexp.UnsupportedError); !ok {
				t.Errorf("the error is a %T, want *jsregexp.UnsupportedError", err)
			}
		})
	}
}

func TestCheckAcceptsWhatGojaRunsRight(t *testing.T) {
	tests := []struct {
		name, pattern, flags string
	}{
		{"lookbehind", `(?<=\$)\d+`, ""},
		{"negative lookbehind", `(?<!a)b`, ""},
		{"lookahead and a non-capturing group", `(?:a(?=b))+`, ""},
		{"numbered backreferences", `(a)\1`, "gi"},
		{"the sequence (?< inside a class", `[(?<x>)]`, ""},
		{"\\k< inside a class", `[\k<]`, ""},
		{"\\A inside a class", `[\A\Z]`, ""},
		{"an escaped backslash before A", `\\A`, ""},
		{"\\p without a brace", `\p`, ""},
		{"every flag goja has", `.`, "gimsuy"},
		{"a trailing backslash", `a\`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := jsregexp.Check(tt.pattern, tt.flags); err != nil {
				t.Errorf("Check(%q, %q) = %v, want nil", tt.pattern, tt.flags, err)
			}
		})
	}
}

func TestShowCutsAtACharacterBoundary(t *testing.T) {
	got := jsregexp.Show("a"+strings.Repeat("é", 60), "g")
	want := "/a" + strings.Repeat("é", 49) + ".../g" // 1 + 49×2 = 99 bytes: the next é would pass 100
	if got != want {
		t.Errorf("Show = %q, want %q", got, want)
	}
}
