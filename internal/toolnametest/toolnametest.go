// Package toolnametest is the table of tool names outside the rule
// (^[a-zA-Z0-9_-]{1,64}$) that every registration path is tested with: the
// Go API, JavaScript and Lua plugins, and tools imported from MCP servers.
// Each row has the exact error registration refuses the name with.
package toolnametest

import "strings"

// Case is one bad name and how registration reports it.
type Case struct {
	// Label reads as the rest of a sentence: "a name with an escape".
	Label string
	Name  string
	// Quoted is the name as the error shows it: Go-quoted, cut to 64
	// bytes with "…", then the name's length when it was cut.
	Quoted string
}

// Message is the error registering name fails with, for a Case whose
// final name (an imported tool's is prefixed) shows as quoted.
func Message(quoted string) string {
	return "tool name " + quoted + " is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'"
}

// Want is the error registering c.Name fails with.
func (c Case) Want() string { return Message(c.Quoted) }

// Cases returns the table: control characters, the empty name, a name one
// byte too long, a megabyte name, non-ASCII letters, a dot and a space.
func Cases() []Case {
	long := strings.Repeat("a", 65)
	huge := strings.Repeat("x", 1<<20)
	return []Case{
		{"a name with an escape character", "a\x1b[2Jb", `"a\x1b[2Jb"`},
		{"a name with a newline", "a\nb", `"a\nb"`},
		{"a name with a NUL", "a\x00b", `"a\x00b"`},
		{"an empty name", "", `""`},
		{"a 65-character name", long, `"` + long[:64] + `…" (65 bytes)`},
		{"a one-megabyte name", huge, `"` + huge[:64] + `…" (1048576 bytes)`},
		{"a name with non-ASCII letters", "héllo", `"héllo"`},
		{"a name with a dot", "a.b", `"a.b"`},
		{"a name with a space", "a b", `"a b"`},
	}
}
