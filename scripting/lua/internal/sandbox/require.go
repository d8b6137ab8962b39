package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	lua "github.com/yuin/gopher-lua"
)

// notFound is require's message for a module it cannot find.
func notFound(name string) string {
	return fmt.Sprintf(`module '%s' not found: only "dsh", "dsh.*" and modules inside the scripts directory can be required`, name)
}

// require loads a module once per state: "dsh" and "dsh.*" from
// Options.Modules, any other dotted name from the scripts directory
// (a.b.c is Root/a/b/c.lua). It caches the module's value (true when the
// chunk returns nothing). An error while loading is not cached: the next
// require runs the module again.
func (b *box) require(L *lua.LState) int {
	name := L.CheckString(1)
	if v, ok := b.loaded[name]; ok {
		if v == nil {
			L.RaiseError("loop requiring module '%s' (it is still loading)", name)
		}
		L.Push(v)
		return 1
	}
	if name == "dsh" || strings.HasPrefix(name, "dsh.") {
		if b.opts.Modules != nil {
			if v, ok := b.opts.Modules(L, name); ok && v != nil {
				if v == lua.LNil {
					v = lua.LTrue
				}
				b.loaded[name] = v
				L.Push(v)
				return 1
			}
		}
		L.RaiseError("module '%s' not found: there is no such host module", name)
	}
	path, ok := modulePath(name)
	if !ok {
		L.RaiseError(`invalid module name '%s': use dotted names of letters, digits, "_" and "-", such as "lib.util"`, name)
	}
	if b.opts.Root == "" {
		L.RaiseError("%s", notFound(name))
	}
	src, err := b.readModule(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		L.RaiseError("%s", notFound(name))
	case err != nil:
		L.RaiseError("cannot load module '%s': %v", name, err)
	}
	fn, err := Load(L, src, path, b.opts.MaxChunkBytes)
	if err != nil {
		if ae, ok := err.(*lua.ApiError); ok {
			L.RaiseError("cannot load module '%s': %s", name, lua.LVAsString(ae.Object))
		}
		L.RaiseError("cannot load module '%s': %v", name, err)
	}

	b.loaded[name] = nil // loading
	done := false
	defer func() {
		if !done {
			delete(b.loaded, name) // the chunk raised an error
		}
	}()
	L.Push(fn)
	L.Push(lua.LString(name))
	L.Call(1, 1)
	v := L.Get(-1)
	L.Pop(1)
	if v == lua.LNil {
		v = lua.LTrue
	}
	b.loaded[name] = v
	done = true
	L.Push(v)
	return 1
}

// modulePath turns a dotted module name into a slash-separated path ending
// in .lua, if every part is a non-empty run of letters, digits, "_" and "-".
func modulePath(name string) (string, bool) {
	if name == "" || len(name) > 512 {
		return "", false
	}
	for part := range strings.SplitSeq(name, ".") {
		if part == "" {
			return "", false
		}
		for i := 0; i < len(part); i++ {
			c := part[i]
			if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return "", false
			}
		}
	}
	return strings.ReplaceAll(name, ".", "/") + ".lua", true
}

// readModule reads path inside the scripts directory through os.Root, which
// refuses to leave it by ".." or a symbolic link, and caps the size. It
// opens without blocking (a FIFO would block open(2) until a writer came,
// holding the thread) and reads regular files only: a directory is not
// found, a FIFO, socket or device is refused.
func (b *box) readModule(path string) (string, error) {
	root, err := os.OpenRoot(b.opts.Root)
	if err != nil {
		return "", err
	}
	defer root.Close()
	f, err := root.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	switch {
	case fi.IsDir():
		return "", fs.ErrNotExist
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, int64(b.opts.MaxChunkBytes)+1))
	if err != nil {
		return "", err
	}
	if len(data) > b.opts.MaxChunkBytes {
		return "", fmt.Errorf("%s is over the limit of %d bytes", path, b.opts.MaxChunkBytes)
	}
	return string(data), nil
}
