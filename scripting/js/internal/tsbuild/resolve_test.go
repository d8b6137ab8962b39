package tsbuild

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree makes files (content = their name) and symbolic links (name ->
// target, relative to the link's directory unless absolute) under dir.
func tree(t *testing.T, dir string, files []string, links map[string]string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range links {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
			t.Skipf("symbolic links unavailable: %v", err)
		}
	}
}

func TestResolveFollowsTheModuleRules(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "scripts")
	outside := filepath.Join(base, "outside")
	tree(t, base, []string{"outside/secret.ts", "outside/x.ts"}, nil)
	tree(t, root, []string{
		"a.ts", "plugins/a.ts", "plugins/helper.js",
		"lib/x.ts", "lib/y.js", "lib/z.mjs", "lib/dir/index.ts", "lib/dir/sub.ts", "lib/jsdir/index.js",
		"lib/both.ts", "lib/both.js", "lib/tsbyjs.ts", "lib/data.json", "lib/noext", "lib/emptydir/",
		"node_modules/lodash/index.js",
	}, map[string]string{
		"link-in.ts":   "lib/x.ts",
		"link-out.ts":  "../outside/secret.ts",
		"linkdir":      "../outside",
		"lib/indir":    "dir",
		"abs-out.ts":   filepath.Join(outside, "x.ts"),
		"plugins/up":   "..",
		"dangling.ts":  "nowhere.ts",
		"lib/loop.ts":  "loop.ts",
		"lib/txt.ts":   "data.json",
		"plugins/l.ts": "../lib/y.js",
	})
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	file := func(name string) Resolution {
		return Resolution{Rel: name, Path: filepath.Join(realRoot, filepath.FromSlash(name))}
	}
	cases := []struct {
		from, spec string
		want       Resolution
		err        string
		sentinel   error
	}{
		// Host modules.
		{"a.ts", "dsh", Resolution{Host: "dsh"}, "", nil},
		{"a.ts", "dsh/fs", Resolution{Host: "dsh/fs"}, "", nil},
		{"a.ts", "dsh/x/y", Resolution{Host: "dsh/x/y"}, "", nil},
		{"a.ts", "dsh/", Resolution{}, `cannot resolve "dsh/": not a valid host module name`, ErrBareSpecifier},
		{"a.ts", "dsh/../lib/x", Resolution{}, `cannot resolve "dsh/../lib/x": not a valid host module name`, ErrBareSpecifier},
		{"a.ts", "dsh//fs", Resolution{}, `cannot resolve "dsh//fs": not a valid host module name`, ErrBareSpecifier},
		// Bare specifiers.
		{"a.ts", "lodash", Resolution{}, `cannot resolve "lodash": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		{"a.ts", "dshx", Resolution{}, `cannot resolve "dshx": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		{"a.ts", "node:fs", Resolution{}, `cannot resolve "node:fs": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		{"a.ts", "lib/x", Resolution{}, `cannot resolve "lib/x": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		{"a.ts", ".lib/x", Resolution{}, `cannot resolve ".lib/x": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		{"a.ts", "", Resolution{}, `cannot resolve "": only "dsh", "dsh/…" and relative paths inside the scripts directory can be imported`, ErrBareSpecifier},
		// Absolute paths.
		{"a.ts", "/etc/passwd", Resolution{}, `cannot import "/etc/passwd" from "a.ts": absolute paths cannot be imported, only relative paths inside the scripts directory`, ErrAbsolutePath},
		{"a.ts", filepath.Join(realRoot, "lib", "x.ts"), Resolution{}, `cannot import "` + filepath.Join(realRoot, "lib", "x.ts") + `" from "a.ts": absolute paths cannot be imported, only relative paths inside the scripts directory`, ErrAbsolutePath},
		// Leaving root.
		{"plugins/a.ts", "../../etc/passwd", Resolution{}, `cannot import "../../etc/passwd" from "plugins/a.ts": it resolves outside the scripts directory`, ErrOutsideRoot},
		{"a.ts", "../outside/x", Resolution{}, `cannot import "../outside/x" from "a.ts": it resolves outside the scripts directory`, ErrOutsideRoot},
		{"a.ts", "..", Resolution{}, `cannot import ".." from "a.ts": it resolves outside the scripts directory`, ErrOutsideRoot},
		{"a.ts", "./link-out", Resolution{}, `cannot import "./link-out" from "a.ts": it resolves outside the scripts directory through a symbolic link`, ErrOutsideRoot},
		{"a.ts", "./link-out.ts", Resolution{}, `cannot import "./link-out.ts" from "a.ts": it resolves outside the scripts directory through a symbolic link`, ErrOutsideRoot},
		{"a.ts", "./abs-out", Resolution{}, `cannot import "./abs-out" from "a.ts": it resolves outside the scripts directory through a symbolic link`, ErrOutsideRoot},
		{"a.ts", "./linkdir/secret", Resolution{}, `cannot import "./linkdir/secret" from "a.ts": it resolves outside the scripts directory through a symbolic link`, ErrOutsideRoot},
		// Found.
		{"a.ts", "./lib/x", file("lib/x.ts"), "", nil},
		{"a.ts", "./lib/x.ts", file("lib/x.ts"), "", nil},
		{"plugins/a.ts", "../lib/x", file("lib/x.ts"), "", nil},
		{"plugins/a.ts", "./helper", file("plugins/helper.js"), "", nil},
		{"a.ts", "./lib/y", file("lib/y.js"), "", nil},
		{"a.ts", "./lib/z", file("lib/z.mjs"), "", nil},
		{"a.ts", "./lib/dir", file("lib/dir/index.ts"), "", nil},
		{"a.ts", "./lib/dir/", file("lib/dir/index.ts"), "", nil},
		{"a.ts", "./lib/jsdir", file("lib/jsdir/index.js"), "", nil},
		{"a.ts", "./lib/both", file("lib/both.ts"), "", nil},
		{"a.ts", "./lib/both.js", file("lib/both.js"), "", nil},
		{"a.ts", "./lib/tsbyjs.js", file("lib/tsbyjs.ts"), "", nil},
		{"lib/dir/sub.ts", ".", file("lib/dir/index.ts"), "", nil},
		{"lib/dir/sub.ts", "../x", file("lib/x.ts"), "", nil},
		{"a.ts", "./link-in", file("lib/x.ts"), "", nil},
		{"a.ts", "./lib/indir/sub", file("lib/dir/sub.ts"), "", nil},
		{"a.ts", "./plugins/up/lib/x", file("lib/x.ts"), "", nil},
		{"plugins/l.ts", "./x", file("lib/x.ts"), "", nil}, // relative to the importer's real directory
		{"a.ts", "./node_modules/lodash", file("node_modules/lodash/index.js"), "", nil},
		{"a.ts", "./lib/../lib/x", file("lib/x.ts"), "", nil},
		{filepath.Join(root, "plugins", "a.ts"), "../lib/x", file("lib/x.ts"), "", nil},
		// Not found.
		{"a.ts", "./missing", Resolution{}, `cannot resolve "./missing" from "a.ts": no such module (tried ./missing, ./missing.ts, ./missing.js, ./missing.mjs, ./missing/index.ts, ./missing/index.js, ./missing/index.mjs)`, ErrNoModule},
		{"plugins/a.ts", "../lib/gone.js", Resolution{}, `cannot resolve "../lib/gone.js" from "plugins/a.ts": no such module (tried ../lib/gone.js, ../lib/gone.ts, ../lib/gone.js.ts, ../lib/gone.js.js, ../lib/gone.js.mjs, ../lib/gone.js/index.ts, ../lib/gone.js/index.js, ../lib/gone.js/index.mjs)`, ErrNoModule},
		{"a.ts", "./lib/emptydir/", Resolution{}, `cannot resolve "./lib/emptydir/" from "a.ts": no such module (tried ./lib/emptydir/index.ts, ./lib/emptydir/index.js, ./lib/emptydir/index.mjs)`, ErrNoModule},
		{"lib/x.ts", ".", Resolution{}, `cannot resolve "." from "lib/x.ts": no such module (tried ./index.ts, ./index.js, ./index.mjs)`, ErrNoModule},
		{"a.ts", "./a.ts/index", Resolution{}, `cannot resolve "./a.ts/index" from "a.ts": no such module (tried ./a.ts/index, ./a.ts/index.ts, ./a.ts/index.js, ./a.ts/index.mjs, ./a.ts/index/index.ts, ./a.ts/index/index.js, ./a.ts/index/index.mjs)`, ErrNoModule},
		{"a.ts", "./dangling", Resolution{}, `cannot resolve "./dangling" from "a.ts": no such module (tried ./dangling, ./dangling.ts, ./dangling.js, ./dangling.mjs, ./dangling/index.ts, ./dangling/index.js, ./dangling/index.mjs)`, ErrNoModule},
		// Not a module file.
		{"a.ts", "./lib/data.json", Resolution{}, `cannot import "./lib/data.json" from "a.ts": only .ts, .js and .mjs files can be imported`, ErrNotModuleFile},
		{"a.ts", "./lib/noext", Resolution{}, `cannot import "./lib/noext" from "a.ts": only .ts, .js and .mjs files can be imported`, ErrNotModuleFile},
		{"a.ts", "./lib/txt", Resolution{}, `cannot import "./lib/txt" from "a.ts": only .ts, .js and .mjs files can be imported`, ErrNotModuleFile},
		// I/O errors other than a missing file.
		{"a.ts", "./lib/loop", Resolution{}, `cannot import "./lib/loop" from "a.ts": too many levels of symbolic links`, nil},
		// The importer outside root.
		{"../outside/x.ts", "./secret", Resolution{}, `cannot import "./secret" from "../outside/x.ts": the importing file is outside the scripts directory`, ErrOutsideRoot},
		{filepath.Join(outside, "x.ts"), "./secret", Resolution{}, `cannot import "./secret" from "` + filepath.Join(outside, "x.ts") + `": the importing file is outside the scripts directory`, ErrOutsideRoot},
		{"link-out.ts", "./x", Resolution{}, `cannot import "./x" from "link-out.ts": the importing file is outside the scripts directory`, ErrOutsideRoot},
	}
	for _, c := range cases {
		got, err := Resolve(root, c.from, c.spec)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v", c.from, c.spec, got, err, c.want)
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("Resolve(%q, %q) error = %v\n want %s", c.from, c.spec, err, c.err)
			continue
		}
		var re *ResolveError
		if !errors.As(err, &re) || re.Spec != c.spec || (c.sentinel != nil && !errors.Is(err, c.sentinel)) {
			t.Errorf("Resolve(%q, %q) error = %#v, want a *ResolveError for %v", c.from, c.spec, err, c.sentinel)
		}
		if got != (Resolution{}) {
			t.Errorf("Resolve(%q, %q) returned %+v with its error", c.from, c.spec, got)
		}
	}
}

func TestResolveWorksThroughASymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	tree(t, base, []string{"real/lib/x.ts", "real/a.ts"}, map[string]string{"root": "real"})
	got, err := Resolve(filepath.Join(base, "root"), "a.ts", "./lib/x")
	if err != nil {
		t.Fatal(err)
	}
	if got.Rel != "lib/x.ts" || !strings.HasSuffix(got.Path, filepath.Join("real", "lib", "x.ts")) {
		t.Errorf("Resolve = %+v", got)
	}
	got, err = Resolve(filepath.Join(base, "root"), filepath.Join(base, "root", "a.ts"), "./lib/x")
	if err != nil || got.Rel != "lib/x.ts" {
		t.Errorf("Resolve from an absolute importer under the symlinked root = %+v, %v", got, err)
	}
}

func TestResolveRefusesAMissingRoot(t *testing.T) {
	_, err := Resolve(filepath.Join(t.TempDir(), "nope"), "a.ts", "./x")
	if err == nil || !strings.HasPrefix(err.Error(), `cannot resolve "./x": scripts directory: `) {
		t.Errorf("error = %v", err)
	}
	if _, err := Resolve(filepath.Join(t.TempDir(), "nope"), "a.ts", "dsh"); err != nil {
		t.Errorf("a host module needs no scripts directory, got %v", err)
	}
}

// joined splits an errors.Join result into its messages.
func joined(err error) []string {
	if err == nil {
		return nil
	}
	var msgs []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			msgs = append(msgs, e.Error())
		}
		return msgs
	}
	return []string{err.Error()}
}

func TestPluginFilesFollowsTheFileRules(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, ".dsh", "_scripts") // root's own name is no exclusion
	tree(t, base, []string{"outside/o.ts", "outside/dir/p.ts"}, nil)
	tree(t, root, []string{
		"a.ts", "b.js", "c.mjs", "d.lua", "e.d.ts", "_private.ts", ".hidden.js", "notes.txt", "f.tsx",
		"lib/x.ts", "sub/lib/y.ts", "sub/f.ts", "sub/deep/k.ts", "_dir/g.ts", ".git/h.js",
		"_shared/s.ts", "_shared/lib/t.ts", "libs/ok.ts", "sub/g.d.ts",
	}, map[string]string{
		"link-file.ts":  "sub/f.ts",           // duplicate of sub/f.ts: dropped
		"link-lib.ts":   "lib/x.ts",           // a module made a plugin: listed
		"linkdir":       "sub",                // walked already: skipped
		"shared":        "_shared",            // walked through the link
		"sub/deep/up":   "../..",              // root: walked already
		"out.ts":        "../../outside/o.ts", // refused
		"outdir":        "../../outside/dir",  // refused
		"broken.ts":     "nowhere.ts",         // refused
		"broken-other":  "nowhere",            // not a plugin name: ignored
		"_link.ts":      "../../outside/o.ts", // excluded by name
		"notes-link.md": "notes.txt",          // not a plugin extension
	})

	got, err := PluginFiles(root, []string{".js", ".mjs", ".ts", ".lua"})
	want := []string{"a.ts", "b.js", "c.mjs", "d.lua", "libs/ok.ts", "link-lib.ts", "shared/s.ts", "sub/deep/k.ts", "sub/f.ts"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PluginFiles = %q\nwant          %q", got, want)
	}
	wantErrs := []string{
		"broken.ts: broken symbolic link",
		"out.ts: symbolic link leads outside the scripts directory",
		"outdir: symbolic link leads outside the scripts directory",
	}
	if got := joined(err); !reflect.DeepEqual(got, wantErrs) {
		t.Errorf("errors = %q\nwant     %q", got, wantErrs)
	}
	var d *Diagnostic
	if !errors.As(err, &d) {
		t.Errorf("the errors are not *Diagnostic: %T", err)
	}

	got, _ = PluginFiles(root, []string{".ts"})
	want = []string{"a.ts", "libs/ok.ts", "link-lib.ts", "shared/s.ts", "sub/deep/k.ts", "sub/f.ts"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PluginFiles(.ts) = %q\nwant               %q", got, want)
	}
}

func TestPluginFilesOfAMissingRootIsAnError(t *testing.T) {
	got, err := PluginFiles(filepath.Join(t.TempDir(), "nope"), []string{".ts"})
	if err == nil || got != nil {
		t.Errorf("PluginFiles = %q, %v; want an error", got, err)
	}
}

func TestPluginFilesOfAnEmptyRootIsEmpty(t *testing.T) {
	got, err := PluginFiles(t.TempDir(), []string{".ts"})
	if err != nil || len(got) != 0 {
		t.Errorf("PluginFiles = %q, %v", got, err)
	}
}

func TestPluginFilesReportsAnUnreadableDirectoryAndListsTheRest(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	root := t.TempDir()
	tree(t, root, []string{"a.ts", "locked/b.ts"}, nil)
	locked := filepath.Join(root, "locked")
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	got, err := PluginFiles(root, []string{".ts"})
	if !reflect.DeepEqual(got, []string{"a.ts"}) {
		t.Errorf("PluginFiles = %q", got)
	}
	if msgs := joined(err); len(msgs) != 1 || !strings.HasPrefix(msgs[0], "locked: cannot read directory: ") {
		t.Errorf("errors = %q", msgs)
	}
}
