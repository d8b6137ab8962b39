package scripting

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PluginFiles lists the plugins of a scripts directory, relative to root and
// sorted: every file below root whose extension is one of exts, except
// declaration files (*.d.ts, and LuaLS meta files: .lua files whose first
// line starts with "---@meta", as the dsh.lua "dsh types" writes), names that
// start with "_" or ".", and anything under a directory named lib (modules
// for require and import). Hidden directories are skipped; symbolic links are
// not followed.
func PluginFiles(root string, exts []string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path == root {
			return nil
		}
		if d.IsDir() {
			if name == "lib" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".d.ts") {
			return nil
		}
		if !slices.Contains(exts, filepath.Ext(name)) {
			return nil
		}
		if filepath.Ext(name) == ".lua" && isLuaMeta(path) {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// isLuaMeta reports whether the Lua file at path is a LuaLS meta file
// (declarations for editors, not a plugin).
func isLuaMeta(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [8]byte
	n, _ := io.ReadFull(f, head[:])
	return string(head[:n]) == "---@meta"
}
