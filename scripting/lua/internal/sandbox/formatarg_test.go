package sandbox

import (
	"regexp"
	"testing"
)

// goForm matches Go's own forms in text: fmt's error verbs, a struct or
// pointer dump, a Go type name, a heap address.
var goForm = regexp.MustCompile(`%!|&\{|\*lua\.|lua\.L[A-Z]|0x[0-9a-f]{6,}|map\[`)

func TestStringFormatPrintsNoGoForm(t *testing.T) {
	L := newState(t, Options{})
	for _, tc := range []struct{ name, expr, want string }{
		{"a numeric string is a number under %d", `string.format("%d|%5.1f", "42", " 2.25 ")`, "42|  2.2"},
		{"a hexadecimal string is a number", `string.format("%d", "0x10")`, "16"},
		{"%s takes any value", `string.format("%s %s", true, nil)`, "true nil"},
		{"%c takes a number", `string.format("%c", 65)`, "A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
	for _, tc := range []struct{ name, src, want string }{
		{"a table under %d is refused", `string.format("%d", {})`, "test:1: bad argument #2 to format (number expected, got table)"},
		{"a function under %x is refused", `string.format("%x", function() end)`, "test:1: bad argument #2 to format (number expected, got function)"},
		{"a word under %f is refused", `string.format("%f", "abc")`, "test:1: bad argument #2 to format (number expected, got string)"},
		{"a missing argument is refused", `string.format("%s %d", "a")`, "test:1: bad argument #3 to format (no value)"},
		{"Go's %T is not a Lua option", `string.format("%T", {})`, "test:1: invalid option '%T' to 'format'"},
		{"Go's %v is not a Lua option", `string.format("%v", {})`, "test:1: invalid option '%v' to 'format'"},
		{"%u prints nothing Lua-like through Go's fmt", `string.format("%u", 1)`, "test:1: invalid option '%u' to 'format'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := luaError(t, L, tc.src)
			if got != tc.want {
				t.Errorf("error = %q, want %q", got, tc.want)
			}
			if goForm.MatchString(got) {
				t.Errorf("error %q holds a Go form", got)
			}
		})
	}
}
