package scripting

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// FileRules are what a host knows about its language's files: which files of
// its extensions hold no plugin, and what a file imports. The scripts
// directory's rules that hold for every language are [PluginFiles]'s; hot
// reload ([Reloader]) follows imports with these.
type FileRules interface {
	// IsDeclaration reports whether the file at path, which has one of the
	// host's extensions, holds declarations for editors rather than a
	// plugin (a TypeScript .d.ts file, a LuaLS meta file). It may read the
	// file; one it cannot read is no declaration file.
	IsDeclaration(path string) bool
	// ModuleExtensions are the extensions of the files the host's imports
	// load, such as ".ts": the files whose own imports are followed.
	ModuleExtensions() []string
	// Imports lists the module specifiers that src, the source of the file
	// rel (relative to the scripts directory, with forward slashes, with one
	// of ModuleExtensions), names literally, and reports whether it has an
	// import whose specifier is not a literal (require(name)). It reads
	// source text only, never runs it, and must stay fast on any input.
	Imports(rel string, src []byte) (specs []string, dynamic bool)
	// ImportCandidates lists the files, relative to the scripts directory
	// with forward slashes, that an import of spec by the file from may
	// load, as the host resolves it: none for a host module or a path
	// outside the directory.
	ImportCandidates(from, spec string) []string
}

// PluginFiles lists the plugins of a scripts directory, relative to root
// with forward slashes, sorted: every regular file below root with one of
// the hosts' extensions, except the hosts' declaration files
// ([FileRules.IsDeclaration]), names that start with "_" or ".", and
// anything under a directory named lib (modules for require and import).
// Hidden directories are skipped; symbolic links are not followed.
func PluginFiles(root string, hosts []Host) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		if d.IsDir() {
			if !pluginDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !pluginName(d.Name()) {
			return nil
		}
		h := hostOf(hosts, d.Name())
		if h == nil || h.IsDeclaration(p) {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// pluginDir reports whether the files of a directory below a scripts
// directory may be plugins: not lib, not hidden, not starting with "_".
func pluginDir(name string) bool {
	return name != "lib" && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// pluginName reports whether a file name may be a plugin's.
func pluginName(name string) bool {
	return name != "" && !strings.HasPrefix(name, ".") && !strings.HasPrefix(name, "_")
}

// hostOf returns the host that loads the file name (by its extension), or nil.
func hostOf(hosts []Host, name string) Host {
	ext := path.Ext(name)
	for _, h := range hosts {
		if slices.Contains(h.Extensions(), ext) {
			return h
		}
	}
	return nil
}

// moduleHostOf returns the host whose imports load the file name (by its
// extension), or nil.
func moduleHostOf(hosts []Host, name string) Host {
	ext := path.Ext(name)
	for _, h := range hosts {
		if slices.Contains(h.ModuleExtensions(), ext) {
			return h
		}
	}
	return nil
}

// isPluginPath reports whether a path relative to the scripts directory dir
// names a plugin by the rules of PluginFiles (whether it is a regular file
// aside).
func isPluginPath(hosts []Host, dir, rel string) bool {
	parts := strings.Split(rel, "/")
	for _, d := range parts[:len(parts)-1] {
		if !pluginDir(d) {
			return false
		}
	}
	name := parts[len(parts)-1]
	if !pluginName(name) {
		return false
	}
	h := hostOf(hosts, name)
	return h != nil && !h.IsDeclaration(filepath.Join(dir, filepath.FromSlash(rel)))
}
