package luavalue

import (
	"errors"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	lua "github.com/yuin/gopher-lua"
)

// env is a real gopher-lua state with a converter, and the globals null,
// array{...} and object{...} standing for dsh.null, dsh.array and dsh.object.
type env struct {
	t testing.TB
	L *lua.LState
	c *Converter
}

func newEnv(t testing.TB, lim Limits) *env {
	t.Helper()
	L := lua.NewState()
	t.Cleanup(L.Close)
	c := New(L, lim)
	L.SetGlobal("null", c.Null())
	mark := func(m func(*lua.LTable)) *lua.LFunction {
		return L.NewFunction(func(L *lua.LState) int {
			tb := L.OptTable(1, L.NewTable())
			m(tb)
			L.Push(tb)
			return 1
		})
	}
	L.SetGlobal("array", mark(c.MarkArray))
	L.SetGlobal("object", mark(c.MarkObject))
	return &env{t: t, L: L, c: c}
}

// eval evaluates the Lua expression src.
func (e *env) eval(src string) lua.LValue {
	e.t.Helper()
	return e.run("return " + src)
}

// run runs the chunk src and returns its first result.
func (e *env) run(src string) lua.LValue {
	e.t.Helper()
	if err := e.L.DoString(src); err != nil {
		e.t.Fatalf("script %q: %v", src, err)
	}
	v := e.L.Get(-1)
	e.L.SetTop(0)
	return v
}

// toGo evaluates src and converts its value with root "value".
func (e *env) toGo(src string, schema any) (any, error) {
	e.t.Helper()
	return e.c.ToGo(e.eval(src), "value", schema)
}

// mustJSON renders a Go-form value as canonical JSON.
func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return string(b)
}

// mustParse parses JSON text into the Go form.
func mustParse(t testing.TB, s string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(s))
	if err != nil {
		t.Fatalf("Unmarshal(%s): %v", s, err)
	}
	return v
}

// wantSnapshotError checks err is a *dsl.SnapshotError with path and reason.
func wantSnapshotError(t testing.TB, err error, path, reason string) {
	t.Helper()
	var se *dsl.SnapshotError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v (%T), want *dsl.SnapshotError %s: %s", err, err, path, reason)
	}
	if se.Path != path || se.Reason != reason {
		t.Fatalf("error = %q\n want %q", se.Error(), path+": "+reason)
	}
}
