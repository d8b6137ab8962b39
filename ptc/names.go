package ptc

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// reservedWords are refused as namespace globals and error-class names on
// every backend (§3.5): the ECMAScript reserved and strict-mode words,
// upstream's Python keywords (its portable set, so `lambda` is refused), and
// the Lua keywords. A name valid on one backend is valid on all.
var reservedWords = setOf(
	// ECMAScript reserved words and reserved-in-strict-mode names.
	"await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
	"else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
	"instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof",
	"var", "void", "while", "with", "yield", "let", "static", "implements", "interface", "package",
	"private", "protected", "public", "arguments", "eval",
	// Python keywords and soft keywords (upstream's portable set).
	"False", "None", "True", "and", "as", "assert", "async", "def", "del", "elif", "except", "from",
	"global", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "match", "type", "_",
	// Lua keywords not above.
	"elseif", "end", "goto", "local", "nil", "repeat", "then", "until",
)

// luaKeywords are the reserved words of Lua 5.1 plus goto (5.2+).
var luaKeywords = setOf(
	"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
	"local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
)

// reservedGlobals are slots some backend owns in the program's scope, refused
// as namespace globals and error-class names everywhere (§3.5).
var reservedGlobals = setOf("console", "__dsh_main__", "__builtins__", "__name__", "__debug__")

// luaReservedGlobals are the Lua runtime's own slots, refused in addition
// when the language is Lua (§6 116): print is its log capture.
var luaReservedGlobals = setOf("print")

// reservedMembers are refused as an error class's member property, besides
// the empty name and every dunder (§3.5).
var reservedMembers = setOf("name", "message", "stack", "args", "with_traceback", "add_note")

func setOf(words ...string) map[string]struct{} {
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}

// IsLuaKeyword reports whether s is a Lua keyword, a name Lua code must
// reach as tools["s"] rather than tools.s.
func IsLuaKeyword(s string) bool {
	_, ok := luaKeywords[s]
	return ok
}

// IsUsableGlobal reports whether s may name a namespace global or an error
// class on every backend: it matches ^[A-Za-z_][A-Za-z0-9_]*$ (no $) and is
// not a reserved word of §3.5. (The reserved globals such as console are
// refused separately by [ValidateBindings].)
func IsUsableGlobal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	_, reserved := reservedWords[s]
	return !reserved
}

// BindingError is a request's invalid binding declaration (§3.5), a misuse
// of the seam that Run returns as its error. Error() is
// "<Backend>: <Message>".
type BindingError struct {
	Backend string // the runtime's name, e.g. "goja"
	Message string // e.g. `binding global "x" is not a usable identifier`
}

func (e *BindingError) Error() string {
	if e.Backend == "" {
		return e.Message
	}
	return e.Backend + ": " + e.Message
}

// ValidateBindings checks a request's namespaces by the portable rules of
// §3.5, in upstream's order: every namespace global first (usable
// identifier, not reserved, not a duplicate), then every declared error
// class (usable identifier, not reserved, distinct from every namespace and
// from the other classes, and a usable member property). The first problem is
// a *[BindingError] under backend's name. A namespace with ErrorClass ""
// declares no class and its ErrorMember is ignored; a namespace may be named
// ToolCallError when no class claims that name.
func ValidateBindings(backend string, ns []Namespace) error {
	return validateBindings(backend, ns, nil)
}

// ValidateBindingsFor is [ValidateBindings] for a runtime of language lang:
// a Lua runtime also refuses its own capture slot print as a reserved
// binding global.
func ValidateBindingsFor(lang Language, backend string, ns []Namespace) error {
	if lang == Lua {
		return validateBindings(backend, ns, luaReservedGlobals)
	}
	return validateBindings(backend, ns, nil)
}

func validateBindings(backend string, ns []Namespace, extra map[string]struct{}) error {
	fail := func(format, name string) error {
		return &BindingError{Backend: backend, Message: fmt.Sprintf(format, quoteJS(name))}
	}
	reserved := func(s string) bool {
		if _, ok := reservedGlobals[s]; ok {
			return true
		}
		_, ok := extra[s]
		return ok
	}
	globals := make(map[string]struct{}, len(ns))
	for _, n := range ns {
		switch {
		case !IsUsableGlobal(n.Global):
			return fail("binding global %s is not a usable identifier", n.Global)
		case reserved(n.Global):
			return fail("reserved binding global %s", n.Global)
		}
		if _, dup := globals[n.Global]; dup {
			return fail("duplicate binding global %s", n.Global)
		}
		globals[n.Global] = struct{}{}
	}
	classes := make(map[string]struct{})
	for _, n := range ns {
		if n.ErrorClass == "" {
			continue
		}
		c := n.ErrorClass
		switch {
		case !IsUsableGlobal(c):
			return fail("binding error class %s is not a usable identifier", c)
		case reserved(c):
			return fail("reserved binding global %s", c)
		}
		_, isGlobal := globals[c]
		_, isClass := classes[c]
		if isGlobal || isClass {
			return fail("duplicate injected global %s", c)
		}
		if !usableMember(n.ErrorMember) {
			return fail("binding error member property %s is not usable", n.ErrorMember)
		}
		classes[c] = struct{}{}
	}
	return nil
}

// usableMember reports whether m may name the error member property:
// non-empty, not a reserved member, not a dunder (^__.+__$).
func usableMember(m string) bool {
	if m == "" {
		return false
	}
	if _, ok := reservedMembers[m]; ok {
		return false
	}
	// JavaScript's . matches no line terminator.
	dunder := len(m) > 4 && strings.HasPrefix(m, "__") && strings.HasSuffix(m, "__") &&
		!strings.ContainsAny(m[2:len(m)-2], "\n\r\u2028\u2029")
	return !dunder
}

// quoteJS quotes s as JSON.stringify does; bytes that are not UTF-8 are
// written as U+FFFD.
func quoteJS(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b, err := dsl.Marshal(s)
	if err != nil { // unreachable: s is valid UTF-8
		return `""`
	}
	return string(b)
}
