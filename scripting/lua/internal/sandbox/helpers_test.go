package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// newState returns a sandboxed state closed at the end of the test.
func newState(t testing.TB, opts Options) *lua.LState {
	t.Helper()
	L, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(L.Close)
	return L
}

// run runs the chunk src (compiled with Load) and returns its error.
func run(t testing.TB, L *lua.LState, src string) error {
	t.Helper()
	fn, err := Load(L, src, "test", 0)
	if err != nil {
		return err
	}
	L.Push(fn)
	return L.PCall(0, 0, nil)
}

// mustRun runs src and fails the test on an error.
func mustRun(t testing.TB, L *lua.LState, src string) {
	t.Helper()
	if err := run(t, L, src); err != nil {
		t.Fatalf("script %q: %v", src, err)
	}
}

// eval evaluates the expression src and returns its value as a string.
func eval(t testing.TB, L *lua.LState, src string) string {
	t.Helper()
	fn, err := Load(L, "return "+src, "test", 0)
	if err != nil {
		t.Fatalf("compile %q: %v", src, err)
	}
	L.Push(fn)
	if err := L.PCall(0, 1, nil); err != nil {
		t.Fatalf("eval %q: %v", src, err)
	}
	v := L.Get(-1)
	L.Pop(1)
	return v.String()
}

// luaError runs src, which must fail, and returns the error message (the
// Lua error value, without traceback).
func luaError(t testing.TB, L *lua.LState, src string) string {
	t.Helper()
	err := run(t, L, src)
	if err == nil {
		t.Fatalf("script %q succeeded, want an error", src)
	}
	if ae, ok := err.(*lua.ApiError); ok {
		return lua.LVAsString(ae.Object)
	}
	return err.Error()
}

// writeFile writes a file under dir, making its directories.
func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
