package scripting

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// batches collects what a watcher hands over.
type batches chan []string

// startWatcher watches dir with a short debounce.
func startWatcher(t *testing.T, dir string) batches {
	t.Helper()
	ch := make(batches, 1000)
	w, err := newWatcher([]string{dir}, 20*time.Millisecond, slog.New(slog.DiscardHandler), func(p []string) { ch <- p })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.close)
	return ch
}

// waitFor waits (generously) for a batch holding path, and returns every
// path seen until then.
func (b batches) waitFor(t *testing.T, path string) []string {
	t.Helper()
	var seen []string
	deadline := time.After(10 * time.Second)
	for {
		select {
		case paths := <-b:
			seen = append(seen, paths...)
			if slices.Contains(paths, path) {
				return seen
			}
		case <-deadline:
			t.Fatalf("no batch with %s; saw %v", path, seen)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTheWatcherSeesWritesAndAtomicRenameSaves(t *testing.T) {
	dir := t.TempDir()
	b := startWatcher(t, dir)
	p := filepath.Join(dir, "a.js")
	write(t, p, "1")
	b.waitFor(t, p)

	// vim's and VS Code's way: a temporary renamed over the file.
	tmp := filepath.Join(dir, ".a.js.swp")
	write(t, tmp, "2")
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	seen := b.waitFor(t, p)
	if slices.Contains(seen, tmp) {
		t.Errorf("the temporary was reported: %v", seen)
	}
}

func TestTheWatcherIgnoresEditorTemporaries(t *testing.T) {
	dir := t.TempDir()
	b := startWatcher(t, dir)
	for _, name := range []string{".a.js.swp", "a.js~", "4913", ".#a.js", "#a.js#", "a.js.tmp", "a.js___jb_tmp___", ".hidden.js"} {
		write(t, filepath.Join(dir, name), "x")
	}
	p := filepath.Join(dir, "real.js")
	write(t, p, "x")
	if seen := b.waitFor(t, p); len(seen) != 1 {
		t.Errorf("batches %v, want only %s", seen, p)
	}
}

func TestTheWatcherFollowsNewSubdirectories(t *testing.T) {
	dir := t.TempDir()
	b := startWatcher(t, dir)
	sub := filepath.Join(dir, "sub", "deeper")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, filepath.Join(dir, "sub"))
	// Once the directory is reported, writes inside it are seen.
	p := filepath.Join(sub, "p.js")
	write(t, p, "x")
	b.waitFor(t, p)

	// A directory moved away is reported, and forgotten.
	if err := os.Rename(filepath.Join(dir, "sub"), filepath.Join(t.TempDir(), "moved")); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, filepath.Join(dir, "sub"))
}

func TestTheWatcherCoalescesAStormIntoFewBatches(t *testing.T) {
	dir := t.TempDir()
	b := startWatcher(t, dir)
	p := filepath.Join(dir, "a.js")
	const writes = 1000
	for i := range writes {
		write(t, p, string(rune('a'+i%26)))
	}
	last := filepath.Join(dir, "last.js")
	write(t, last, "x")
	seen := b.waitFor(t, last)
	n := 0
	for _, s := range seen {
		if s == p {
			n++
		}
	}
	// A batch at least every two debounce periods: a few dozen at most
	// for a storm that takes well under a second even with -race.
	if n == 0 || n > writes/10 {
		t.Errorf("%d writes made %d batches naming the file", writes, n)
	}
}

func TestIgnoredNames(t *testing.T) {
	for name, want := range map[string]bool{
		".a.js.swp": true, "a.js.swp": true, "a.swo": true, "a.js~": true, "4913": true, "5036": true,
		".#a.js": true, "#a.js#": true, "a.tmp": true, "x___jb_old___": true, ".env": true,
		"a.js": false, "lib": false, "a.ts": false, "b.lua": false, "v2.js": false, "#": false, "sedAb12Cd": false,
	} {
		if got := ignoredName(name); got != want {
			t.Errorf("ignoredName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIsPluginPathFollowsTheFileRules(t *testing.T) {
	exts := []string{".js", ".ts", ".mjs", ".lua"}
	for rel, want := range map[string]bool{
		"a.js": true, "sub/b.ts": true, "x/y/c.lua": true, "m.mjs": true,
		"lib/x.js": false, "sub/lib/x.js": false, "_draft.js": false, "_dir/a.js": false,
		".hidden/a.js": false, ".a.js": false, "types.d.ts": false, "notes.txt": false, "library/a.js": true,
	} {
		if got := isPluginPath(rel, exts); got != want {
			t.Errorf("isPluginPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestTheImportScanFindsEveryLiteralImport(t *testing.T) {
	tests := []struct {
		name, file, code string
		want             []string
		dynamic          bool
	}{
		{"a CommonJS require", "a.js", `const x = require("./lib/x");`, []string{"./lib/x"}, false},
		{"ES imports of every form", "sub/a.ts", "import { a,\n b } from '../lib/a';\nimport '../lib/side';\nexport * from \"./re\";\nimport d from \"dsh\";", []string{"../lib/a", "../lib/side", "./re", "dsh"}, false},
		{"a dynamic import with a literal", "a.mjs", "const m = await import(`./lib/m`);", []string{"./lib/m"}, false},
		{"a require of a variable", "a.js", `const x = require(name);`, nil, true},
		{"Lua requires", "a.lua", "local x = require(\"lib.x\")\nlocal y = require 'lib.y'\nlocal z = require [[lib.z]]", []string{"lib.x", "lib.y", "lib.z"}, false},
		{"a Lua require of a variable", "a.lua", `local x = require(name)`, nil, true},
		{"another language", "a.txt", `require("./x")`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, dyn := scanImports(tt.file, []byte(tt.code))
			slices.Sort(specs)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(specs, want) || dyn != tt.dynamic {
				t.Errorf("scanImports = %q, %v; want %q, %v", specs, dyn, want, tt.dynamic)
			}
		})
	}
}

func TestImportCandidatesFollowTheHostsResolution(t *testing.T) {
	tests := []struct {
		from, spec string
		want       []string
	}{
		{"a.js", "./lib/x", []string{"lib/x", "lib/x.ts", "lib/x.js", "lib/x.mjs", "lib/x/index.ts", "lib/x/index.js", "lib/x/index.mjs"}},
		{"sub/a.ts", "../lib/x.js", []string{"lib/x.js", "lib/x.ts", "lib/x.js.ts", "lib/x.js.js", "lib/x.js.mjs", "lib/x.js/index.ts", "lib/x.js/index.js", "lib/x.js/index.mjs"}},
		{"a.js", "./lib/", []string{"lib/index.ts", "lib/index.js", "lib/index.mjs"}},
		{"a.js", "dsh", nil},
		{"a.js", "dsh/fs", nil},
		{"a.js", "lodash", nil},
		{"a.js", "../outside", nil},
		{"a.lua", "lib.util", []string{"lib/util.lua"}},
		{"sub/a.lua", "lib.deep.x", []string{"lib/deep/x.lua"}},
		{"a.lua", "dsh.fs", nil},
		{"a.lua", "bad..name", nil},
	}
	for _, tt := range tests {
		if got := candidates(tt.from, tt.spec); !slices.Equal(got, tt.want) {
			t.Errorf("candidates(%q, %q) = %q, want %q", tt.from, tt.spec, got, tt.want)
		}
	}
}

func TestTheClosureFollowsModulesThroughOtherModules(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.js"), `require("./lib/one")`)
	write(t, filepath.Join(dir, "lib", "one.js"), `module.exports = require("./two")`)
	write(t, filepath.Join(dir, "lib", "two.ts"), `export * from "./three"`)
	write(t, filepath.Join(dir, "b.lua"), `local m = require("lib.m")`)
	write(t, filepath.Join(dir, "lib", "m.lua"), `return require("lib.n")`)
	imp := scanClosure(dir, "a.js")
	for _, f := range []string{"lib/one.js", "lib/two.ts", "lib/three.ts", "lib/three.js"} {
		if !imp.files[f] {
			t.Errorf("a.js: %s missing from %v", f, imp.files)
		}
	}
	if imp.files["a.js"] || imp.dynamic {
		t.Errorf("a.js: %+v", imp)
	}
	imp = scanClosure(dir, "b.lua")
	if !imp.files["lib/m.lua"] || !imp.files["lib/n.lua"] {
		t.Errorf("b.lua: %v", imp.files)
	}
}
