package capability_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripting/capability"
)

func TestReadFile(t *testing.T) {
	f := newFixture(t, capability.Config{MaxReadBytes: 64})
	write(t, f.path("notes/a.txt"), "one\ntwo\nthree\n")
	write(t, f.path("tail.txt"), "x\ny")
	write(t, f.path("empty.txt"), "")
	write(t, f.path("big.txt"), strings.Repeat("0123456789\n", 10))
	write(t, f.path("bin.dat"), "\xff\xfe\x00")
	tests := []struct {
		name, args, want string
	}{
		{"a whole text file is read with its line counts", `["notes/a.txt"]`,
			`{"path":"notes/a.txt","encoding":"utf8","content":"one\ntwo\nthree\n","size":14,"truncated":false,"offset":0,"lineCount":3,"totalLines":3}`},
		{"offset and limit select lines and say more follow", `["notes/a.txt",{"offset":1,"limit":1}]`,
			`{"path":"notes/a.txt","encoding":"utf8","content":"two\n","size":14,"truncated":true,"offset":1,"lineCount":1,"totalLines":3}`},
		{"an offset alone reads to the end", `["notes/a.txt",{"offset":2}]`,
			`{"path":"notes/a.txt","encoding":"utf8","content":"three\n","size":14,"truncated":false,"offset":2,"lineCount":1,"totalLines":3}`},
		{"an offset past the end reads nothing", `["notes/a.txt",{"offset":7,"limit":2}]`,
			`{"path":"notes/a.txt","encoding":"utf8","content":"","size":14,"truncated":false,"offset":7,"lineCount":0,"totalLines":3}`},
		{"a limit of zero counts the lines only", `["notes/a.txt",{"limit":0}]`,
			`{"path":"notes/a.txt","encoding":"utf8","content":"","size":14,"truncated":true,"offset":0,"lineCount":0,"totalLines":3}`},
		{"a last line without a newline counts", `["tail.txt",{"offset":1}]`,
			`{"path":"tail.txt","encoding":"utf8","content":"y","size":3,"truncated":false,"offset":1,"lineCount":1,"totalLines":2}`},
		{"an empty file has no lines", `["empty.txt"]`,
			`{"path":"empty.txt","encoding":"utf8","content":"","size":0,"truncated":false,"offset":0,"lineCount":0,"totalLines":0}`},
		{"base64 reads bytes", `["bin.dat",{"encoding":"base64"}]`,
			`{"path":"bin.dat","encoding":"base64","content":"//4A","size":3,"truncated":false}`},
		{"a file over the cap can be read in lines", `["big.txt",{"offset":9,"limit":5}]`,
			`{"path":"big.txt","encoding":"utf8","content":"0123456789\n","size":110,"truncated":false,"offset":9,"lineCount":1,"totalLines":10}`},
		{"null options are no options", `["tail.txt",null]`,
			`{"path":"tail.txt","encoding":"utf8","content":"x\ny","size":3,"truncated":false,"offset":0,"lineCount":2,"totalLines":2}`},
		{"null option members are absent", `["tail.txt",{"limit":null,"encoding":null}]`,
			`{"path":"tail.txt","encoding":"utf8","content":"x\ny","size":3,"truncated":false,"offset":0,"lineCount":2,"totalLines":2}`},
		{"a path is cleaned", `["./notes/../tail.txt"]`,
			`{"path":"tail.txt","encoding":"utf8","content":"x\ny","size":3,"truncated":false,"offset":0,"lineCount":2,"totalLines":2}`},
		{"an absolute path inside the workspace is accepted", `[` + quote(f.path("tail.txt")) + `]`,
			`{"path":"tail.txt","encoding":"utf8","content":"x\ny","size":3,"truncated":false,"offset":0,"lineCount":2,"totalLines":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ok(t, "fs", "readFile", tt.args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("an ENOENT error wraps the file system's error", func(t *testing.T) {
		if e := f.fail(t, "fs", "readFile", `["nope"]`); !errors.Is(e, fs.ErrNotExist) {
			t.Errorf("%v does not wrap fs.ErrNotExist", e)
		}
	})
	errs := []struct {
		name, args, code, msg string
	}{
		{"a missing file is ENOENT", `["notes/b.txt"]`, "ENOENT", "ENOENT: no such file or directory: notes/b.txt"},
		{"a directory is EISDIR", `["notes"]`, "EISDIR", "EISDIR: is a directory: notes"},
		{"a file over the cap is ETOOBIG", `["big.txt"]`, "ETOOBIG",
			"ETOOBIG: readFile: file is 110 bytes, over the 64-byte limit (read fewer lines with options.offset and options.limit): big.txt"},
		{"base64 over the cap is ETOOBIG", `["big.txt",{"encoding":"base64"}]`, "ETOOBIG",
			"ETOOBIG: readFile: file is 110 bytes, over the 64-byte limit: big.txt"},
		{"selected lines over the cap are ETOOBIG", `["big.txt",{"limit":6}]`, "ETOOBIG",
			"ETOOBIG: readFile: the selected lines are over the 64-byte limit (read fewer with options.limit): big.txt"},
		{"bytes that are not UTF-8 are EBINARY", `["bin.dat"]`, "EBINARY",
			`EBINARY: readFile: not UTF-8 text (read it with encoding "base64"): bin.dat`},
		{"base64 with lines is EINVAL", `["bin.dat",{"encoding":"base64","limit":1}]`, "EINVAL",
			`EINVAL: readFile: options.offset and options.limit are in lines: they need encoding "utf8"`},
		{"a negative limit is EINVAL", `["a",{"limit":-1}]`, "EINVAL", "EINVAL: readFile: options.limit must be a non-negative integer"},
		{"a fractional offset is EINVAL", `["a",{"offset":1.5}]`, "EINVAL", "EINVAL: readFile: options.offset must be a non-negative integer"},
		{"a string limit is EINVAL", `["a",{"limit":"2"}]`, "EINVAL", "EINVAL: readFile: options.limit must be a non-negative integer"},
		{"an unknown encoding is EINVAL", `["a",{"encoding":"latin1"}]`, "EINVAL", `EINVAL: readFile: options.encoding must be "utf8" or "base64"`},
		{"an unknown option is EINVAL", `["a",{"limt":2}]`, "EINVAL", "EINVAL: readFile: unknown option options.limt"},
		{"a leftover signal is EINVAL", `["a",{"signal":{}}]`, "EINVAL", "EINVAL: readFile: options.signal must be an AbortSignal"},
		{"options that are not an object are EINVAL", `["a",2]`, "EINVAL", "EINVAL: readFile: options must be an object"},
		{"a path that is not a string is EINVAL", `[3]`, "EINVAL", "EINVAL: readFile: path must be a string"},
		{"a missing path is EINVAL", `[]`, "EINVAL", "EINVAL: readFile: path must be a string"},
		{"an empty path is EINVAL", `[""]`, "EINVAL", "EINVAL: readFile: path must not be empty"},
		{"a NUL in a path is EINVAL", `["a\u0000b"]`, "EINVAL", "EINVAL: readFile: path must not contain a NUL byte"},
		{"too many arguments are EINVAL", `["a",{},3]`, "EINVAL", "EINVAL: readFile: expected at most 2 arguments, got 3"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			e := f.fail(t, "fs", "readFile", tt.args)
			if e.Code() != tt.code || e.Message != tt.msg {
				t.Errorf("got %s %q\nwant %s %q", e.Code(), e.Message, tt.code, tt.msg)
			}
		})
	}
}

func TestReadFileRefusesFIFOs(t *testing.T) {
	f := newFixture(t, capability.Config{})
	if err := mkfifo(f.path("pipe")); err != nil {
		t.Skip("no mkfifo:", err)
	}
	e := f.fail(t, "fs", "readFile", `["pipe"]`)
	if want := "EINVAL: readFile: not a regular file: pipe"; e.Message != want {
		t.Errorf("got %q, want %q", e.Message, want)
	}
	e = f.fail(t, "fs", "writeFile", `["pipe","x"]`)
	if e.Code() != "EINVAL" && e.Code() != "EIO" {
		t.Errorf("writing a FIFO: %s", e.Message)
	}
}

func TestEscapesAreRefused(t *testing.T) {
	outside := t.TempDir()
	write(t, filepath.Join(outside, "secret.txt"), "secret")
	f := newFixture(t, capability.Config{})
	write(t, f.path("in/file.txt"), "inside")
	symlink(t, filepath.Join(outside, "secret.txt"), f.path("abs-out"))
	symlink(t, "../"+filepath.Base(outside)+"/secret.txt", f.path("in/rel-out")) // unused target name: may not exist
	relOut, err := filepath.Rel(f.path("in"), filepath.Join(outside, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(f.path("in/rel-out"))
	symlink(t, relOut, f.path("in/rel-out"))
	relDir, err := filepath.Rel(f.ws, outside)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, relDir, f.path("dir-out"))
	symlink(t, "in/file.txt", f.path("ok-link"))
	symlink(t, f.path("in/file.txt"), f.path("abs-in"))

	t.Run("a symlink to a file inside is followed", func(t *testing.T) {
		if got := f.ok(t, "fs", "readFile", `["ok-link"]`); !strings.Contains(got, `"content":"inside"`) {
			t.Errorf("got %s", got)
		}
	})
	cases := []struct {
		name, fn, args, path string
	}{
		{"readFile through ..", "readFile", `["../secret.txt"]`, "../secret.txt"},
		{"readFile through a climbing path", "readFile", `["in/../../x"]`, "in/../../x"},
		{"readFile of an absolute path outside", "readFile", `["/etc/passwd"]`, "/etc/passwd"},
		{"readFile through an absolute symlink out", "readFile", `["abs-out"]`, "abs-out"},
		{"readFile through a relative symlink out", "readFile", `["in/rel-out"]`, "in/rel-out"},
		{"readFile through a directory symlink out", "readFile", `["dir-out/secret.txt"]`, "dir-out/secret.txt"},
		{"readFile through an absolute symlink that points inside", "readFile", `["abs-in"]`, "abs-in"},
		{"writeFile through a symlink out", "writeFile", `["in/rel-out","x"]`, "in/rel-out"},
		{"writeFile into a directory symlink out", "writeFile", `["dir-out/new.txt","x"]`, "dir-out/new.txt"},
		{"writeFile with createDirs through a directory symlink out", "writeFile", `["dir-out/a/b.txt","x",{"createDirs":true}]`, "dir-out/a/b.txt"},
		{"stat through a directory symlink out", "stat", `["dir-out/secret.txt"]`, "dir-out/secret.txt"},
		{"readDir of a directory symlink out", "readDir", `["dir-out"]`, "dir-out"},
		{"readDir of ..", "readDir", `[".."]`, ".."},
		{"mkdir through a directory symlink out", "mkdir", `["dir-out/d"]`, "dir-out/d"},
		{"mkdir -p through a directory symlink out", "mkdir", `["dir-out/d/e",{"recursive":true}]`, "dir-out/d/e"},
		{"remove through a directory symlink out", "remove", `["dir-out/secret.txt"]`, "dir-out/secret.txt"},
		{"remove -r through ..", "remove", `["in/../..",{"recursive":true}]`, "in/../.."},
		{"glob with a cwd outside", "glob", `["*",{"cwd":"../"}]`, "../"},
		{"glob with a cwd through a symlink out", "glob", `["*",{"cwd":"dir-out"}]`, "dir-out"},
	}
	for _, c := range cases {
		t.Run(c.name+" is EOUTSIDE", func(t *testing.T) {
			e := f.fail(t, "fs", c.fn, c.args)
			if want := "EOUTSIDE: path resolves outside the workspace: " + c.path; e.Code() != "EOUTSIDE" || e.Message != want {
				t.Errorf("got %s %q, want %q", e.Code(), e.Message, want)
			}
		})
	}
	t.Run("nothing outside changed", func(t *testing.T) {
		if got := read(t, filepath.Join(outside, "secret.txt")); got != "secret" {
			t.Errorf("secret.txt is %q", got)
		}
		entries, err := os.ReadDir(outside)
		if err != nil || len(entries) != 1 {
			t.Errorf("outside holds %v (%v)", entries, err)
		}
	})
	t.Run("stat reports a symlink out as a symlink without following it", func(t *testing.T) {
		got := f.ok(t, "fs", "stat", `["dir-out"]`)
		if !strings.Contains(got, `"type":"symlink"`) {
			t.Errorf("got %s", got)
		}
	})
	t.Run("removing a symlink out removes the link only", func(t *testing.T) {
		if got := f.ok(t, "fs", "remove", `["dir-out",{"recursive":true}]`); got != `{"path":"dir-out","removed":true}` {
			t.Errorf("got %s", got)
		}
		if got := read(t, filepath.Join(outside, "secret.txt")); got != "secret" {
			t.Errorf("secret.txt is %q", got)
		}
	})
}

// TestSwappedSymlinkNeverReadsOutside swaps a symlink between a target
// inside and one outside while reads and writes go through it.
func TestSwappedSymlinkNeverReadsOutside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	write(t, secret, "SECRET")
	f := newFixture(t, capability.Config{})
	write(t, f.path("d/inside.txt"), "inside")
	if err := os.MkdirAll(f.path("in-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, f.path("in-dir/inside.txt"), "inside too")
	relSecret, _ := filepath.Rel(f.path("d"), secret)
	relOutDir, _ := filepath.Rel(f.path("d"), outside)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		targets := [][2]string{{"inside.txt", relSecret}, {"../in-dir", relOutDir}}
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			for k, name := range []string{"link", "dirlink"} {
				tmp := f.path(fmt.Sprintf("d/.tmp%d", k))
				os.Remove(tmp)
				if err := os.Symlink(targets[k][i%2], tmp); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(tmp, f.path("d/"+name)); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	reads, refused := 0, 0
	for range 2000 {
		for _, args := range []string{`["d/link"]`, `["d/dirlink/secret.txt"]`, `["d/dirlink/inside.txt"]`} {
			got, err := f.call(context.Background(), t, "fs", "readFile", args)
			switch {
			case err == nil:
				reads++
				if strings.Contains(got, "SECRET") {
					t.Fatalf("read the outside file through %s: %s", args, got)
				}
			case strings.HasPrefix(err.Error(), "EOUTSIDE: ") || strings.HasPrefix(err.Error(), "ENOENT: "):
				refused++
			default:
				t.Fatalf("readFile(%s): %v", args, err)
			}
		}
		if _, err := f.call(context.Background(), t, "fs", "writeFile", `["d/link","overwritten"]`); err != nil && !strings.HasPrefix(err.Error(), "EOUTSIDE: ") {
			t.Fatalf("writeFile: %v", err)
		}
	}
	close(stop)
	<-done
	if got := read(t, secret); got != "SECRET" {
		t.Fatalf("the outside file was written: %q", got)
	}
	t.Logf("%d reads, %d refused", reads, refused)
}

func TestWriteFile(t *testing.T) {
	f := newFixture(t, capability.Config{MaxWriteBytes: 8})
	tests := []struct {
		name, args, want, file, content string
	}{
		{"a new file is created", `["a.txt","hello"]`, `{"path":"a.txt","size":5,"created":true}`, "a.txt", "hello"},
		{"an existing file is replaced", `["a.txt","hi"]`, `{"path":"a.txt","size":2,"created":false}`, "a.txt", "hi"},
		{"append adds to the end", `["a.txt","!!",{"append":true}]`, `{"path":"a.txt","size":2,"created":false}`, "a.txt", "hi!!"},
		{"createDirs makes the parents", `["x/y/z.txt","z",{"createDirs":true}]`, `{"path":"x/y/z.txt","size":1,"created":true}`, "x/y/z.txt", "z"},
		{"base64 data is decoded", `["b.bin","AAH/",{"encoding":"base64"}]`, `{"path":"b.bin","size":3,"created":true}`, "b.bin", "\x00\x01\xff"},
		{"an empty write truncates", `["a.txt",""]`, `{"path":"a.txt","size":0,"created":false}`, "a.txt", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ok(t, "fs", "writeFile", tt.args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if got := read(t, f.path(tt.file)); got != tt.content {
				t.Errorf("file holds %q, want %q", got, tt.content)
			}
		})
	}
	errs := []struct {
		name, args, msg string
	}{
		{"a missing parent is ENOENT", `["no/such/dir.txt","x"]`, "ENOENT: no such file or directory: no/such/dir.txt"},
		{"data over the cap is ETOOBIG", `["c.txt","123456789"]`, "ETOOBIG: writeFile: data is 9 bytes, over the 8-byte limit: c.txt"},
		{"decoded data over the cap is ETOOBIG", `["c.txt","MTIzNDU2Nzg5",{"encoding":"base64"}]`, "ETOOBIG: writeFile: data is 9 bytes, over the 8-byte limit: c.txt"},
		{"bad base64 is EINVAL", `["c.txt","***",{"encoding":"base64"}]`, "EINVAL: writeFile: data is not valid base64: illegal base64 data at input byte 0"},
		{"the workspace root is EISDIR", `[".","x"]`, "EISDIR: is a directory: ."},
		{"a directory is EISDIR", `["x","data"]`, "EISDIR: is a directory: x"},
		{"data that is not a string is EINVAL", `["c.txt",1]`, "EINVAL: writeFile: data must be a string"},
		{"a non-boolean createDirs is EINVAL", `["c.txt","",{"createDirs":1}]`, "EINVAL: writeFile: options.createDirs must be a boolean"},
		{"a file as a parent is ENOTDIR", `["a.txt/b","x",{"createDirs":true}]`, "ENOTDIR: not a directory: a.txt/b"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			if e := f.fail(t, "fs", "writeFile", tt.args); e.Message != tt.msg {
				t.Errorf("got  %q\nwant %q", e.Message, tt.msg)
			}
		})
	}
	if _, err := os.Stat(f.path("c.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write left c.txt: %v", err)
	}
}

func TestStatReadDirMkdirRemove(t *testing.T) {
	f := newFixture(t, capability.Config{MaxGlob: 3})
	write(t, f.path("d/b.txt"), "bb")
	write(t, f.path("d/a.txt"), "a")
	if err := os.Mkdir(f.path("d/c"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, "a.txt", f.path("d/link"))
	write(t, f.path("s/f"), "fff")
	symlink(t, "f", f.path("s/l"))
	for _, p := range []string{"d/a.txt", "d/b.txt"} {
		if err := os.Chmod(f.path(p), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(f.path("d/a.txt"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, fn, args, want string
	}{
		{"stat describes a file", "stat", `["d/a.txt"]`,
			fmt.Sprintf(`{"path":"d/a.txt","type":"file","size":1,"mode":416,"mtimeMs":%d}`, fi.ModTime().UnixMilli())},
		{"stat does not follow a symlink", "stat", `["d/link",{}]`, ""},
		{"readDir lists sorted entries with their types", "readDir", `["s"]`,
			`{"path":"s","entries":[{"name":"f","type":"file","size":3},{"name":"l","type":"symlink","size":0}],"total":2,"truncated":false}`},
		{"readDir clamps a limit to MaxGlob", "readDir", `["d",{"limit":10}]`,
			`{"path":"d","entries":[{"name":"a.txt","type":"file","size":1},{"name":"b.txt","type":"file","size":2},{"name":"c","type":"dir","size":0}],"total":4,"truncated":true}`},
		{"readDir with the default limit caps at MaxGlob", "readDir", `["d"]`,
			`{"path":"d","entries":[{"name":"a.txt","type":"file","size":1},{"name":"b.txt","type":"file","size":2},{"name":"c","type":"dir","size":0}],"total":4,"truncated":true}`},
		{"readDir with a limit keeps the first names", "readDir", `["d",{"limit":1}]`,
			`{"path":"d","entries":[{"name":"a.txt","type":"file","size":1}],"total":4,"truncated":true}`},
		{"readDir with a zero limit counts", "readDir", `["d",{"limit":0}]`, `{"path":"d","entries":[],"total":4,"truncated":true}`},
		{"mkdir creates a directory", "mkdir", `["new"]`, `{"path":"new","created":true}`},
		{"mkdir -p creates the parents", "mkdir", `["p/q/r",{"recursive":true}]`, `{"path":"p/q/r","created":true}`},
		{"mkdir -p of an existing directory creates nothing", "mkdir", `["p/q",{"recursive":true}]`, `{"path":"p/q","created":false}`},
		{"remove removes a file", "remove", `["d/b.txt"]`, `{"path":"d/b.txt","removed":true}`},
		{"remove of a missing path removes nothing", "remove", `["d/b.txt"]`, `{"path":"d/b.txt","removed":false}`},
		{"remove removes an empty directory", "remove", `["new"]`, `{"path":"new","removed":true}`},
		{"remove -r removes a tree", "remove", `["p",{"recursive":true}]`, `{"path":"p","removed":true}`},
		{"remove removes a symlink, not its target", "remove", `["d/link"]`, `{"path":"d/link","removed":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := f.ok(t, "fs", tt.fn, tt.args)
			switch tt.name {
			case "stat does not follow a symlink":
				if !strings.HasPrefix(got, `{"path":"d/link","type":"symlink","size":5,`) {
					t.Errorf("got %s", got)
				}
			default:
				if got != tt.want {
					t.Errorf("got  %s\nwant %s", got, tt.want)
				}
			}
		})
	}
	if _, err := os.Stat(f.path("d/a.txt")); err != nil {
		t.Errorf("the symlink's target went with it: %v", err)
	}
	if _, err := os.Stat(f.path("p")); !os.IsNotExist(err) {
		t.Errorf("p is still there: %v", err)
	}
	write(t, f.path("full/x"), "x")
	errs := []struct {
		name, fn, args, msg string
	}{
		{"stat of a missing path is ENOENT", "stat", `["nope"]`, "ENOENT: no such file or directory: nope"},
		{"stat through a file is ENOTDIR", "stat", `["d/a.txt/x"]`, "ENOTDIR: not a directory: d/a.txt/x"},
		{"readDir of a file is ENOTDIR", "readDir", `["d/a.txt"]`, "ENOTDIR: not a directory: d/a.txt"},
		{"readDir of a missing directory is ENOENT", "readDir", `["nope"]`, "ENOENT: no such file or directory: nope"},
		{"mkdir of an existing directory is EEXIST", "mkdir", `["d"]`, "EEXIST: file already exists: d"},
		{"mkdir -p over a file is EEXIST", "mkdir", `["d/a.txt",{"recursive":true}]`, "EEXIST: file already exists: d/a.txt"},
		{"mkdir without its parent is ENOENT", "mkdir", `["no/such"]`, "ENOENT: no such file or directory: no/such"},
		{"remove of a full directory is ENOTEMPTY", "remove", `["full"]`, "ENOTEMPTY: directory not empty: full"},
		{"remove of the workspace is EINVAL", "remove", `[".",{"recursive":true}]`, "EINVAL: remove: cannot remove the workspace root: ."},
		{"remove of the workspace by its absolute path is EINVAL", "remove", `[` + quote(f.ws+"/") + `]`, "EINVAL: remove: cannot remove the workspace root: " + f.ws + "/"},
		{"a non-boolean recursive is EINVAL", "remove", `["full",{"recursive":"yes"}]`, "EINVAL: remove: options.recursive must be a boolean"},
		{"stat with a second argument that is not options is EINVAL", "stat", `["a","b"]`, "EINVAL: stat: options must be an object"},
		{"stat with an option is EINVAL", "stat", `["a",{"follow":true}]`, "EINVAL: stat: unknown option options.follow"},
		{"stat with three arguments is EINVAL", "stat", `["a",{},{}]`, "EINVAL: stat: expected at most 2 arguments, got 3"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			if e := f.fail(t, "fs", tt.fn, tt.args); e.Message != tt.msg {
				t.Errorf("got  %q\nwant %q", e.Message, tt.msg)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	f := newFixture(t, capability.Config{})
	for _, p := range []string{"a.go", "b.txt", ".hidden.go", "src/x.go", "src/y.ts", "src/deep/z.go", "src/deep/er/w.go", "src-a/k.go", "docs/README.md", "[x].txt"} {
		write(t, f.path(p), p)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "o.go"), "outside")
	rel, _ := filepath.Rel(f.path("src"), outside)
	symlink(t, rel, f.path("src/out"))
	symlink(t, "deep", f.path("src/deeplink"))
	tests := []struct {
		pattern, opts, want string
	}{
		{"*.go", "", `{"paths":[".hidden.go","a.go"],"total":2,"truncated":false}`},
		{"**/*.go", "", `{"paths":[".hidden.go","a.go","src-a/k.go","src/deep/er/w.go","src/deep/z.go","src/x.go"],"total":6,"truncated":false}`},
		{"src/**", "", `{"paths":["src","src/deep","src/deep/er","src/deep/er/w.go","src/deep/z.go","src/deeplink","src/out","src/x.go","src/y.ts"],"total":9,"truncated":false}`},
		{"src/**/*.go", "", `{"paths":["src/deep/er/w.go","src/deep/z.go","src/x.go"],"total":3,"truncated":false}`},
		{"src/*.{go,ts}", "", `{"paths":["src/x.go","src/y.ts"],"total":2,"truncated":false}`},
		{"{src,docs}/*", "", `{"paths":["docs/README.md","src/deep","src/deeplink","src/out","src/x.go","src/y.ts"],"total":6,"truncated":false}`},
		{"src?a/*", "", `{"paths":["src-a/k.go"],"total":1,"truncated":false}`},
		{"[ab].*", "", `{"paths":["a.go","b.txt"],"total":2,"truncated":false}`},
		{"[!a-b]*.go", "", `{"paths":[".hidden.go"],"total":1,"truncated":false}`},
		{`\[x\].txt`, "", `{"paths":["[x].txt"],"total":1,"truncated":false}`},
		{"*/", "", `{"paths":["docs","src","src-a"],"total":3,"truncated":false}`},
		{"**/*.go", `{"limit":2}`, `{"paths":[".hidden.go","a.go"],"total":6,"truncated":true}`},
		{"**/*.go", `{"cwd":"src"}`, `{"paths":["deep/er/w.go","deep/z.go","x.go"],"total":3,"truncated":false}`},
		{"*", `{"cwd":"src/deeplink"}`, `{"paths":["er","z.go"],"total":2,"truncated":false}`},
		{"nothing*", "", `{"paths":[],"total":0,"truncated":false}`},
		{"src/out/*", "", `{"paths":[],"total":0,"truncated":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.opts+" matches", func(t *testing.T) {
			args := `[` + quote(tt.pattern) + `]`
			if tt.opts != "" {
				args = `[` + quote(tt.pattern) + `,` + tt.opts + `]`
			}
			if got := f.ok(t, "fs", "glob", args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	errs := []struct {
		args, msg string
	}{
		{`["a/../b"]`, `EINVAL: glob: pattern must not contain ".." segments: a/../b`},
		{`["/etc/*"]`, `EINVAL: glob: pattern must be relative (use options.cwd for a directory): /etc/*`},
		{`["{a,b"]`, `EINVAL: glob: unclosed { in pattern: {a,b`},
		{`["a}"]`, `EINVAL: glob: unmatched } in pattern: a}`},
		{`["[ab"]`, `EINVAL: glob: unclosed [ in pattern: [ab`},
		{`["[z-a]"]`, `EINVAL: glob: bad character class in pattern: [z-a]`},
		{`["a\\"]`, `EINVAL: glob: pattern ends with a lone "\": a\`},
		{`[""]`, `EINVAL: glob: pattern must not be empty: `},
		{`["*",{"cwd":"b.txt"}]`, `ENOTDIR: not a directory: b.txt`},
		{`["*",{"cwd":"nope"}]`, `ENOENT: no such file or directory: nope`},
		{`["{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"]`, `EINVAL: glob: pattern has more than 1024 alternatives: {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}`},
	}
	for _, tt := range errs {
		t.Run(tt.args+" is refused", func(t *testing.T) {
			if e := f.fail(t, "fs", "glob", tt.args); e.Message != tt.msg {
				t.Errorf("got  %q\nwant %q", e.Message, tt.msg)
			}
		})
	}
}

func TestFSCancellation(t *testing.T) {
	f := newFixture(t, capability.Config{MaxReadBytes: 64 << 20, MaxWriteBytes: 64 << 20})
	big := strings.Repeat("line of text\n", 200_000) // ~2.6 MB: several chunks
	write(t, f.path("big.txt"), big)
	for i := range 50 {
		for j := range 40 {
			write(t, f.path(fmt.Sprintf("tree/d%02d/f%02d.txt", i, j)), "x")
		}
	}
	data := base64.StdEncoding.EncodeToString(make([]byte, 3<<20))
	t.Run("every operation refuses to start when cancelled", func(t *testing.T) {
		for _, c := range []struct{ fn, args, subject string }{
			{"readFile", `["big.txt"]`, "big.txt"},
			{"writeFile", `["w.txt","x"]`, "w.txt"},
			{"stat", `["big.txt"]`, "big.txt"},
			{"readDir", `["tree"]`, "tree"},
			{"glob", `["**"]`, "**"},
			{"mkdir", `["m"]`, "m"},
			{"remove", `["tree",{"recursive":true}]`, "tree"},
		} {
			e := f.failCtx(cancelledCtx(), t, "fs", c.fn, c.args)
			if want := "ECANCELED: " + c.fn + " was cancelled: " + c.subject; e.Message != want {
				t.Errorf("got %q, want %q", e.Message, want)
			}
		}
	})
	for _, c := range []struct{ name, fn, args, subject string }{
		{"readFile stops midway through a big file", "readFile", `["big.txt"]`, "big.txt"},
		{"readFile stops midway while counting lines", "readFile", `["big.txt",{"limit":1}]`, "big.txt"},
		{"readFile stops midway through base64", "readFile", `["big.txt",{"encoding":"base64"}]`, "big.txt"},
		{"writeFile stops midway through big data", "writeFile", `["w.bin",` + quote(data) + `,{"encoding":"base64"}]`, "w.bin"},
		{"glob stops midway through a big tree", "glob", `["**/*.txt"]`, "**/*.txt"},
		{"remove stops midway through a big tree", "remove", `["tree",{"recursive":true}]`, "tree"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := cancelAfter(4)
			e := f.failCtx(ctx, t, "fs", c.fn, c.args)
			if want := "ECANCELED: " + c.fn + " was cancelled: " + c.subject; e.Message != want {
				t.Errorf("got %q, want %q", e.Message, want)
			}
		})
	}
	t.Run("the cancelled remove left part of the tree", func(t *testing.T) {
		entries, err := os.ReadDir(f.path("tree"))
		if err != nil || len(entries) == 0 {
			t.Errorf("tree: %d entries, %v", len(entries), err)
		}
	})
}
