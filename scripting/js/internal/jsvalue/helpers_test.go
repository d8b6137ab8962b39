package jsvalue

import (
	"errors"
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// env is a real goja runtime with its Realm, prepared before any script ran.
type env struct {
	t  testing.TB
	vm *goja.Runtime
	r  *Realm
}

func newEnv(t testing.TB) *env {
	t.Helper()
	vm := goja.New()
	r, err := Prepare(vm)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return &env{t: t, vm: vm, r: r}
}

// builtinOnly turns the fast path off (see fast.go): ToGo then reads every
// container through the captured built-ins.
func (e *env) builtinOnly() *env {
	e.r.fast = nil
	return e
}

// run evaluates a script and returns its completion value.
func (e *env) run(src string) goja.Value {
	e.t.Helper()
	v, err := e.vm.RunString(src)
	if err != nil {
		e.t.Fatalf("script %q: %v", src, err)
	}
	return v
}

// toGo evaluates src and converts its value with root "value".
func (e *env) toGo(src string) (any, error) {
	e.t.Helper()
	return e.r.ToGo(e.run(src), "value", Limits{})
}

// flag reads the global counter hostile scripts bump.
func (e *env) flag() int64 {
	e.t.Helper()
	return e.vm.Get("flag").ToInteger()
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
