package lua

import (
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// metaPrefix starts a LuaLS meta file, such as the dsh.lua "dsh types"
// writes.
const metaPrefix = "---@meta"

// IsDeclaration reports whether the Lua file at path is a LuaLS meta file
// (its first line starts with "---@meta"): declarations for editors, not a
// plugin.
func (h *Host) IsDeclaration(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [len(metaPrefix)]byte
	n, _ := io.ReadFull(f, head[:])
	return string(head[:n]) == metaPrefix
}

// ModuleExtensions returns .lua.
func (h *Host) ModuleExtensions() []string { return []string{".lua"} }

// The require forms Imports finds: require("lib.x"), require "lib.x",
// require [[lib.x]]. Any other mention of require is a dynamic import.
var (
	luaLit  = regexp.MustCompile(`\brequire\s*(?:\(\s*)?(?:"([^"\\\n]*)"|'([^'\\\n]*)'|\[\[([^\]\n]*)\]\])`)
	luaCall = regexp.MustCompile(`\brequire\b`)
)

// Imports lists the module names src requires literally (host modules
// included), and reports whether it mentions require otherwise (a require
// of a variable, say). It scans the text (comments and strings alike), so
// it may find more requires than run, never fewer literal ones.
func (h *Host) Imports(rel string, src []byte) (specs []string, dynamic bool) {
	lits := luaLit.FindAllSubmatch(src, -1)
	for _, m := range lits {
		for _, g := range m[1:] {
			if g != nil {
				specs = append(specs, string(g))
				break
			}
		}
	}
	return specs, len(luaCall.FindAllIndex(src, -1)) > len(lits)
}

// ImportCandidates lists the file a require of the dotted name spec loads,
// as the sandbox's require resolves it: "lib.x" is lib/x.lua below the
// scripts directory, wherever from is. Host modules ("dsh", "dsh.fs") and
// names require refuses give none.
func (h *Host) ImportCandidates(from, spec string) []string {
	if spec == "dsh" || strings.HasPrefix(spec, "dsh.") {
		return nil
	}
	p, ok := sandbox.ModulePath(spec)
	if !ok {
		return nil
	}
	return []string{p}
}
