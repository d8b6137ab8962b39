package ptc

import (
	"errors"
	"testing"
)

// ns is a namespace without bindings for validation tests.
func ns(global, class, member string) Namespace {
	return Namespace{Global: global, ErrorClass: class, ErrorMember: member}
}

func TestValidateBindings(t *testing.T) {
	tests := []struct {
		name string
		lang Language
		ns   []Namespace
		want string // "" for valid
	}{
		// §6 116: namespace globals.
		{"a global with a space and a bang is not an identifier", TypeScript, []Namespace{ns("not valid!", "", "")},
			`goja: binding global "not valid!" is not a usable identifier`},
		{"await is a reserved word", TypeScript, []Namespace{ns("await", "", "")},
			`goja: binding global "await" is not a usable identifier`},
		{"a dollar sign first is outside the portable subset", TypeScript, []Namespace{ns("$tools", "", "")},
			`goja: binding global "$tools" is not a usable identifier`},
		{"a dollar sign later is outside the portable subset", TypeScript, []Namespace{ns("a$b", "", "")},
			`goja: binding global "a$b" is not a usable identifier`},
		{"lambda is a reserved word of the portable set", TypeScript, []Namespace{ns("lambda", "", "")},
			`goja: binding global "lambda" is not a usable identifier`},
		{"an empty global is not an identifier", TypeScript, []Namespace{ns("", "", "")},
			`goja: binding global "" is not a usable identifier`},
		{"a leading digit is not an identifier", TypeScript, []Namespace{ns("1tools", "", "")},
			`goja: binding global "1tools" is not a usable identifier`},
		{"a non-ASCII letter is outside the portable subset", TypeScript, []Namespace{ns("outils_é", "", "")},
			`goja: binding global "outils_é" is not a usable identifier`},
		{"a name with a quote and a newline is quoted as JSON", TypeScript, []Namespace{ns("a\"b\nc\u2028", "", "")},
			"goja: binding global \"a\\\"b\\nc\u2028\" is not a usable identifier"},
		{"invalid UTF-8 in a name is written as U+FFFD", TypeScript, []Namespace{ns("a\xffb", "", "")},
			"goja: binding global \"a\uFFFDb\" is not a usable identifier"},
		{"the underscore alone is reserved", TypeScript, []Namespace{ns("_", "", "")},
			`goja: binding global "_" is not a usable identifier`},
		{"arguments is a strict-mode word", TypeScript, []Namespace{ns("arguments", "", "")},
			`goja: binding global "arguments" is not a usable identifier`},
		{"console is a reserved binding global", TypeScript, []Namespace{ns("console", "", "")},
			`goja: reserved binding global "console"`},
		{"__dsh_main__ is a reserved binding global", TypeScript, []Namespace{ns("__dsh_main__", "", "")},
			`goja: reserved binding global "__dsh_main__"`},
		{"__builtins__ is a reserved binding global", TypeScript, []Namespace{ns("__builtins__", "", "")},
			`goja: reserved binding global "__builtins__"`},
		{"__name__ is a reserved binding global", TypeScript, []Namespace{ns("__name__", "", "")},
			`goja: reserved binding global "__name__"`},
		{"__debug__ is a reserved binding global", TypeScript, []Namespace{ns("__debug__", "", "")},
			`goja: reserved binding global "__debug__"`},
		{"a second tools is a duplicate binding global", TypeScript, []Namespace{ns("tools", "", ""), ns("tools", "", "")},
			`goja: duplicate binding global "tools"`},
		{"a namespace may be named ToolCallError when no class claims it", TypeScript, []Namespace{ns("ToolCallError", "", "")}, ""},
		{"the run_code namespace is valid", TypeScript, []Namespace{ns("tools", "ToolCallError", "toolName")}, ""},
		{"no namespaces are valid", TypeScript, nil, ""},
		{"a member without a class is ignored", TypeScript, []Namespace{ns("tools", "", "message")}, ""},

		// §3.5 and §6 116: the Lua keywords are refused on every backend.
		{"end is a Lua keyword", TypeScript, []Namespace{ns("end", "", "")}, `goja: binding global "end" is not a usable identifier`},
		{"local is a Lua keyword", TypeScript, []Namespace{ns("local", "", "")}, `goja: binding global "local" is not a usable identifier`},
		{"nil is a Lua keyword", TypeScript, []Namespace{ns("nil", "", "")}, `goja: binding global "nil" is not a usable identifier`},
		{"then is a Lua keyword", TypeScript, []Namespace{ns("then", "", "")}, `goja: binding global "then" is not a usable identifier`},
		{"elseif is a Lua keyword", TypeScript, []Namespace{ns("elseif", "", "")}, `goja: binding global "elseif" is not a usable identifier`},
		{"repeat is a Lua keyword", TypeScript, []Namespace{ns("repeat", "", "")}, `goja: binding global "repeat" is not a usable identifier`},
		{"until is a Lua keyword", TypeScript, []Namespace{ns("until", "", "")}, `goja: binding global "until" is not a usable identifier`},
		{"goto is a Lua keyword", TypeScript, []Namespace{ns("goto", "", "")}, `goja: binding global "goto" is not a usable identifier`},
		{"print is free for a TypeScript runtime", TypeScript, []Namespace{ns("print", "", "")}, ""},
		{"print is the Lua runtime's capture slot", Lua, []Namespace{ns("print", "", "")}, `goja: reserved binding global "print"`},
		{"print as a Lua error class is reserved", Lua, []Namespace{ns("tools", "print", "toolName")}, `goja: reserved binding global "print"`},

		// §6 117: error classes.
		{"an error class with a space is not an identifier", TypeScript, []Namespace{ns("tools", "not valid!", "memberName")},
			`goja: binding error class "not valid!" is not a usable identifier`},
		{"an error class named await is a reserved word", TypeScript, []Namespace{ns("tools", "await", "memberName")},
			`goja: binding error class "await" is not a usable identifier`},
		{"an error class named console is a reserved binding global", TypeScript, []Namespace{ns("tools", "console", "memberName")},
			`goja: reserved binding global "console"`},
		{"an error class named as its namespace is a duplicate injected global", TypeScript, []Namespace{ns("tools", "tools", "memberName")},
			`goja: duplicate injected global "tools"`},
		{"an error class named as a later namespace is a duplicate injected global", TypeScript,
			[]Namespace{ns("tools", "helpers", "memberName"), ns("helpers", "", "")},
			`goja: duplicate injected global "helpers"`},
		{"two namespaces declaring one class is a duplicate injected global", TypeScript,
			[]Namespace{ns("tools", "CallError", "memberName"), ns("helpers", "CallError", "memberName")},
			`goja: duplicate injected global "CallError"`},
		{"an empty member property is not usable", TypeScript, []Namespace{ns("tools", "CallError", "")},
			`goja: binding error member property "" is not usable`},
		{"message is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "message")},
			`goja: binding error member property "message" is not usable`},
		{"name is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "name")},
			`goja: binding error member property "name" is not usable`},
		{"stack is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "stack")},
			`goja: binding error member property "stack" is not usable`},
		{"args is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "args")},
			`goja: binding error member property "args" is not usable`},
		{"with_traceback is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "with_traceback")},
			`goja: binding error member property "with_traceback" is not usable`},
		{"add_note is not a usable member property", TypeScript, []Namespace{ns("tools", "CallError", "add_note")},
			`goja: binding error member property "add_note" is not usable`},
		{"a dunder member property is not usable", TypeScript, []Namespace{ns("tools", "CallError", "__dict__")},
			`goja: binding error member property "__dict__" is not usable`},
		{"five underscores are a dunder", TypeScript, []Namespace{ns("tools", "CallError", "_____")},
			`goja: binding error member property "_____" is not usable`},
		{"four underscores have no middle and are usable", TypeScript, []Namespace{ns("tools", "CallError", "____")}, ""},
		{"a dunder broken by a newline is usable as in JavaScript", TypeScript, []Namespace{ns("tools", "CallError", "__a\nb__")}, ""},
		{"any other member name is usable, identifier or not", TypeScript, []Namespace{ns("tools", "CallError", "tool name!")}, ""},
		{"globals are all checked before any error class", TypeScript,
			[]Namespace{ns("tools", "await", "m"), ns("console", "", "")},
			`goja: reserved binding global "console"`},
		{"the member is checked after the class's collisions", TypeScript, []Namespace{ns("tools", "tools", "")},
			`goja: duplicate injected global "tools"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateBindingsFor(tt.lang, "goja", tt.ns)
			got := ""
			if err != nil {
				got = err.Error()
				var be *BindingError
				if !errors.As(err, &be) || be.Backend != "goja" {
					t.Fatalf("error %T %v is not a *BindingError of goja", err, err)
				}
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
			if tt.lang == TypeScript {
				// ValidateBindings is the portable rule set.
				if err2 := ValidateBindings("goja", tt.ns); (err2 == nil) != (err == nil) || (err2 != nil && err2.Error() != got) {
					t.Fatalf("ValidateBindings = %v, ValidateBindingsFor(TypeScript) = %v", err2, err)
				}
			}
		})
	}
}

func TestEveryPortableReservedWordIsRefused(t *testing.T) {
	words := []string{
		"await", "break", "case", "catch", "class", "const", "continue", "debugger", "default", "delete", "do",
		"else", "enum", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
		"instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try", "typeof",
		"var", "void", "while", "with", "yield", "let", "static", "implements", "interface", "package",
		"private", "protected", "public", "arguments", "eval",
		"False", "None", "True", "and", "as", "assert", "async", "def", "del", "elif", "except", "from",
		"global", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "match", "type", "_",
		"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in", "local", "nil",
		"not", "or", "repeat", "return", "then", "true", "until", "while",
	}
	for _, w := range words {
		if IsUsableGlobal(w) {
			t.Errorf("IsUsableGlobal(%q) = true", w)
		}
		want := `gopher-lua: binding error class "` + w + `" is not a usable identifier`
		if err := ValidateBindingsFor(Lua, "gopher-lua", []Namespace{ns("tools", w, "toolName")}); err == nil || err.Error() != want {
			t.Errorf("error class %q: %v", w, err)
		}
	}
	for _, ok := range []string{"tools", "ToolCallError", "_x", "A9_", "self", "undefined", "print", "Class", "END"} {
		if !IsUsableGlobal(ok) {
			t.Errorf("IsUsableGlobal(%q) = false", ok)
		}
	}
}

func TestIsLuaKeyword(t *testing.T) {
	for _, k := range []string{"and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if",
		"in", "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while"} {
		if !IsLuaKeyword(k) {
			t.Errorf("IsLuaKeyword(%q) = false", k)
		}
	}
	for _, k := range []string{"print", "await", "class", "End", "", "self"} {
		if IsLuaKeyword(k) {
			t.Errorf("IsLuaKeyword(%q) = true", k)
		}
	}
}

func TestBindingErrorWithoutBackendIsTheBareMessage(t *testing.T) {
	err := ValidateBindings("", []Namespace{ns("console", "", "")})
	if err == nil || err.Error() != `reserved binding global "console"` {
		t.Fatalf("got %v", err)
	}
}
