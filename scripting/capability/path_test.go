package capability_test

import (
	"testing"

	"github.com/dsh-go/dsh/scripting/capability"
)

func TestPathModule(t *testing.T) {
	f := newFixture(t, capability.Config{})
	if !f.mods["path"].Sync {
		t.Error("dsh/path is not synchronous")
	}
	for _, name := range []string{"fs", "process", "http"} {
		if f.mods[name].Sync {
			t.Errorf("dsh/%s is synchronous", name)
		}
	}
	tests := []struct {
		fn, args, want string
	}{
		{"join", `["a","b/../c","d/"]`, `"a/c/d/"`},
		{"join", `[]`, `"."`},
		{"join", `["/a","../../b"]`, `"/b"`},
		{"dirname", `["/a/b/c.txt"]`, `"/a/b"`},
		{"basename", `["/a/b/c.txt"]`, `"c.txt"`},
		{"basename", `["/a/b/c.txt",".txt"]`, `"c"`},
		{"basename", `["/a/b/c.txt",null]`, `"c.txt"`},
		{"ext", `["archive.tar.gz"]`, `".gz"`},
		{"ext", `[".bashrc"]`, `""`},
		{"relative", `["a/b","a/c/d"]`, `"../c/d"`},
		{"relative", `[` + quote(f.ws) + `,"x/y"]`, `"x/y"`},
		{"relative", `["a","a"]`, `""`},
		{"isAbsolute", `["/x"]`, `true`},
		{"isAbsolute", `["x"]`, `false`},
	}
	for _, tt := range tests {
		t.Run(tt.fn+"("+tt.args+") is "+tt.want, func(t *testing.T) {
			if got := f.ok(t, "path", tt.fn, tt.args); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	errs := []struct {
		fn, args, msg string
	}{
		{"join", `["a",1]`, "EINVAL: join: parts[1] must be a string"},
		{"dirname", `[]`, "EINVAL: dirname: path must be a string"},
		{"dirname", `["a","b"]`, "EINVAL: dirname: expected at most 1 argument, got 2"},
		{"basename", `["a",2]`, "EINVAL: basename: ext must be a string"},
		{"ext", `[null]`, "EINVAL: ext: path must be a string"},
		{"relative", `["a"]`, "EINVAL: relative: to must be a string"},
		{"isAbsolute", `[true]`, "EINVAL: isAbsolute: path must be a string"},
	}
	for _, tt := range errs {
		t.Run(tt.fn+"("+tt.args+") is refused", func(t *testing.T) {
			if e := f.fail(t, "path", tt.fn, tt.args); e.Code() != "EINVAL" || e.Message != tt.msg {
				t.Errorf("got %q, want %q", e.Message, tt.msg)
			}
		})
	}
}

func TestModulesConfig(t *testing.T) {
	t.Run("the modules are fs, process, http and path", func(t *testing.T) {
		mods, err := capability.Modules(capability.Config{Workspace: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range mods {
			names = append(names, m.Name)
		}
		if got := len(names); got != 4 || names[0] != "fs" || names[1] != "process" || names[2] != "http" || names[3] != "path" {
			t.Errorf("modules %v", names)
		}
	})
	t.Run("the default workspace is the current directory", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		write(t, dir+"/here.txt", "here")
		f := newFixture(t, capability.Config{Workspace: "."})
		if got := f.ok(t, "fs", "readFile", `["here.txt"]`); got == "" {
			t.Error("nothing read")
		}
		if _, err := capability.Modules(capability.Config{}); err != nil {
			t.Error(err)
		}
	})
	t.Run("a workspace reached through a symlink accepts both absolute forms", func(t *testing.T) {
		real := t.TempDir()
		alias := t.TempDir() + "/alias"
		symlink(t, real, alias)
		write(t, real+"/a.txt", "a")
		f := newFixture(t, capability.Config{Workspace: alias})
		for _, p := range []string{real + "/a.txt", alias + "/a.txt"} {
			if got := f.ok(t, "fs", "stat", `[`+quote(p)+`]`); got[:20] != `{"path":"a.txt","typ` {
				t.Errorf("stat(%s) = %s", p, got)
			}
		}
	})
	t.Run("a workspace that is not a directory is refused", func(t *testing.T) {
		file := t.TempDir() + "/f"
		write(t, file, "")
		if _, err := capability.Modules(capability.Config{Workspace: file}); err == nil || err.Error() != "capability: workspace: "+file+" is not a directory" {
			t.Errorf("got %v", err)
		}
		if _, err := capability.Modules(capability.Config{Workspace: file + "/nope"}); err == nil {
			t.Error("a missing workspace was accepted")
		}
	})
}
