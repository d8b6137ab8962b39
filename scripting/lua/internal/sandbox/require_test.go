package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// scriptsDir makes a scripts directory with modules, and files outside it.
func scriptsDir(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "scripts")
	outside = filepath.Join(base, "outside")
	writeFile(t, root, "lib/util.lua", `loads = (loads or 0) + 1 return {name = ..., twice = function(x) return 2 * x end}`)
	writeFile(t, root, "lib/nothing.lua", `local x = 1`)
	writeFile(t, root, "lib/broken.lua", `attempts = (attempts or 0) + 1 error("broken on purpose")`)
	writeFile(t, root, "lib/syntax.lua", `return {`)
	writeFile(t, root, "lib/binary.lua", "\x1bLuaQ\x00\x01\x04")
	writeFile(t, root, "lib/a.lua", `return require("lib.b")`)
	writeFile(t, root, "lib/b.lua", `return require("lib.a")`)
	writeFile(t, root, "lib/uses_dsh.lua", `local dsh = require("dsh") return dsh.version`)
	writeFile(t, root, "top.lua", `return "top"`)
	writeFile(t, root, "dsh.lua", `return "a file must not shadow the host module"`)
	writeFile(t, outside, "secret.lua", `return "secret"`)
	writeFile(t, outside, "dir/x.lua", `return "outside dir"`)
	if err := os.Mkdir(filepath.Join(root, "dir.lua"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(target, name string) {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			t.Skipf("symlinks: %v", err)
		}
	}
	link(filepath.Join(outside, "secret.lua"), "lib/evil.lua")
	link(filepath.Join(outside, "dir"), "escape")
	link("../../outside/secret.lua", "lib/relative.lua")
	link("util.lua", "lib/alias.lua")
	return root, outside
}

// hostModules serves "dsh" and "dsh.fs", counting the calls.
func hostModules(calls *int) func(L *lua.LState, name string) (lua.LValue, bool) {
	return func(L *lua.LState, name string) (lua.LValue, bool) {
		*calls++
		switch name {
		case "dsh":
			t := L.NewTable()
			t.RawSetString("version", lua.LString("test"))
			return t, true
		case "dsh.fs":
			return lua.LString("fs module"), true
		}
		return nil, false
	}
}

func TestRequireLoadsModulesInsideTheScriptsDirectory(t *testing.T) {
	root, _ := scriptsDir(t)
	calls := 0
	L := newState(t, Options{Root: root, Modules: hostModules(&calls)})
	for _, tc := range []struct{ name, expr, want string }{
		{"a dotted name is a file", `require("lib.util").twice(21)`, "42"},
		{"the module gets its name", `require("lib.util").name`, "lib.util"},
		{"a module runs once per state", `(function() require("lib.util") require("lib.util") return loads end)()`, "1"},
		{"the same table comes back", `tostring(require("lib.util") == require("lib.util"))`, "true"},
		{"a module returning nothing is true", `tostring(require("lib.nothing"))`, "true"},
		{"a top-level module", `require("top")`, "top"},
		{"a symbolic link inside the directory", `require("lib.alias").name`, "lib.alias"},
		{"dsh comes from the host", `require("dsh").version`, "test"},
		{"dsh.* comes from the host", `require("dsh.fs")`, "fs module"},
		{"a module can require dsh", `require("lib.uses_dsh")`, "test"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, L, tc.expr); got != tc.want {
				t.Fatalf("%s = %q, want %q", tc.expr, got, tc.want)
			}
		})
	}
	t.Run("host modules are asked once per name", func(t *testing.T) {
		before := calls
		eval(t, L, `require("dsh").version .. require("dsh.fs")`)
		if calls != before {
			t.Fatalf("Modules called %d more times for cached modules", calls-before)
		}
	})
}

func TestRequireRefusesEverythingElse(t *testing.T) {
	root, outside := scriptsDir(t)
	calls := 0
	L := newState(t, Options{Root: root, Modules: hostModules(&calls)})
	notFound := func(name string) string {
		return `test:1: module '` + name + `' not found: only "dsh", "dsh.*" and modules inside the scripts directory can be required`
	}
	invalid := func(name string) string {
		return `test:1: invalid module name '` + name + `': use dotted names of letters, digits, "_" and "-", such as "lib.util"`
	}
	for _, tc := range []struct{ name, module, want string }{
		{"the os library", "os", notFound("os")},
		{"the io library", "io", notFound("io")},
		{"the debug library", "debug", notFound("debug")},
		{"a missing module", "lib.missing", notFound("lib.missing")},
		{"a directory", "dir", notFound("dir")},
		{"an unknown host module", "dsh.nope", "test:1: module 'dsh.nope' not found: there is no such host module"},
		{"a parent directory", "../outside/secret", invalid("../outside/secret")},
		{"dots for a parent", "..outside.secret", invalid("..outside.secret")},
		{"a slash", "lib/util", invalid("lib/util")},
		{"an absolute path", filepath.Join(outside, "secret"), invalid(filepath.Join(outside, "secret"))},
		{"an empty name", "", invalid("")},
		{"a symbolic link to a file outside", "lib.evil", "test:1: cannot load module 'lib.evil': openat lib/evil.lua: path escapes from parent"},
		{"a relative symbolic link outside", "lib.relative", "test:1: cannot load module 'lib.relative': openat lib/relative.lua: path escapes from parent"},
		{"a symbolic link to a directory outside", "escape.x", "test:1: cannot load module 'escape.x': openat escape/x.lua: path escapes from parent"},
		{"a binary chunk", "lib.binary", "test:1: cannot load module 'lib.binary': lib/binary.lua: attempt to load a binary chunk (only text chunks can be loaded)"},
		{"a syntax error", "lib.syntax", "test:1: cannot load module 'lib.syntax': lib/syntax.lua at EOF:   syntax error"},
		{"a require loop", "lib.a", "lib/b.lua:1: loop requiring module 'lib.a' (it is still loading)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := luaError(t, L, `require("`+strings.ReplaceAll(tc.module, `\`, `\\`)+`")`); got != tc.want {
				t.Fatalf("error =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	t.Run("dsh is never read from the scripts directory", func(t *testing.T) {
		L := newState(t, Options{Root: root})
		if got := luaError(t, L, `require("dsh")`); got != "test:1: module 'dsh' not found: there is no such host module" {
			t.Fatalf("error = %q", got)
		}
	})
	t.Run("without a scripts directory only host modules exist", func(t *testing.T) {
		L := newState(t, Options{})
		if got := luaError(t, L, `require("lib.util")`); got != notFound("lib.util") {
			t.Fatalf("error = %q", got)
		}
	})
	t.Run("a module that fails is not cached", func(t *testing.T) {
		for range 2 {
			if got := luaError(t, L, `require("lib.broken")`); got != "lib/broken.lua:1: broken on purpose" {
				t.Fatalf("error = %q", got)
			}
		}
		if got := eval(t, L, "attempts"); got != "2" {
			t.Fatalf("attempts = %s", got)
		}
	})
	t.Run("a module over the size limit", func(t *testing.T) {
		writeFile(t, root, "lib/big.lua", "return '"+strings.Repeat("x", 200)+"'")
		L := newState(t, Options{Root: root, MaxChunkBytes: 100})
		if got := luaError(t, L, `require("lib.big")`); got != "test:1: cannot load module 'lib.big': lib/big.lua is over the limit of 100 bytes" {
			t.Fatalf("error = %q", got)
		}
	})
}
