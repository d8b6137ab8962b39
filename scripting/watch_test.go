package scripting

import (
	"bytes"
	"context"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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

// ruleHost is a host of a made-up language for the language-neutral file
// machinery: .x files, declaration files ending in .decl.x, imports written
// `use "name"` (name is the file lib/name.x), and `use(` of anything else
// as a dynamic import.
type ruleHost struct{}

func (ruleHost) Extensions() []string                        { return []string{".x"} }
func (ruleHost) Load(context.Context, *Plugin, Source) error { return nil }
func (ruleHost) IsDeclaration(path string) bool              { return strings.HasSuffix(path, ".decl.x") }
func (ruleHost) ModuleExtensions() []string                  { return []string{".x"} }
func (ruleHost) ImportCandidates(from, spec string) []string { return []string{"lib/" + spec + ".x"} }
func (ruleHost) Imports(rel string, src []byte) (specs []string, dynamic bool) {
	for _, m := range useLit.FindAllSubmatch(src, -1) {
		specs = append(specs, string(m[1]))
	}
	return specs, bytes.Count(src, []byte("use(")) > 0
}

var useLit = regexp.MustCompile(`use "([a-z/]+)"`)

func TestIsPluginPathFollowsTheFileRules(t *testing.T) {
	hosts := []Host{ruleHost{}}
	for rel, want := range map[string]bool{
		"a.x": true, "sub/b.x": true, "x/y/c.x": true, "library/a.x": true,
		"lib/x.x": false, "sub/lib/x.x": false, "_draft.x": false, "_dir/a.x": false,
		".hidden/a.x": false, ".a.x": false, "types.decl.x": false, "notes.txt": false, "a.js": false,
	} {
		if got := isPluginPath(hosts, t.TempDir(), rel); got != want {
			t.Errorf("isPluginPath(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestTheClosureFollowsModulesThroughOtherModules(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.x"), `use "one"`)
	write(t, filepath.Join(dir, "lib", "one.x"), `use "two" use "one"`)
	write(t, filepath.Join(dir, "lib", "two.x"), `use "three"`)
	write(t, filepath.Join(dir, "b.x"), `use "one" use(name)`)
	write(t, filepath.Join(dir, "c.txt"), `use "one"`)
	hosts := []Host{ruleHost{}}
	tests := []struct {
		name, rel string
		want      []string
		dynamic   bool
	}{
		{"through modules, existing or not, without cycles", "a.x", []string{"lib/one.x", "lib/three.x", "lib/two.x"}, false},
		{"with a dynamic import", "b.x", []string{"lib/one.x", "lib/three.x", "lib/two.x"}, true},
		{"of a file no host loads: nothing", "c.txt", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			imp := scanClosure(hosts, dir, tt.rel)
			got := slices.Sorted(maps.Keys(imp.files))
			if !slices.Equal(got, tt.want) || imp.dynamic != tt.dynamic {
				t.Errorf("scanClosure(%s) = %q, %v; want %q, %v", tt.rel, got, imp.dynamic, tt.want, tt.dynamic)
			}
		})
	}
}
