package capability_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A capability error is an engine coded error.
var _ engine.CodedError = (*capability.Error)(nil)

// fixture is a workspace with the capability modules on it.
type fixture struct {
	ws   string
	mods map[string]scripting.Module
}

func newFixture(t testing.TB, cfg capability.Config) *fixture {
	t.Helper()
	if cfg.Workspace == "" {
		cfg.Workspace = t.TempDir()
	}
	list, err := capability.Modules(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{ws: cfg.Workspace, mods: map[string]scripting.Module{}}
	for _, m := range list {
		f.mods[m.Name] = m
	}
	return f
}

// call calls module.fn with the arguments of the JSON array argsJSON and
// returns the result as canonical JSON.
func (f *fixture) call(ctx context.Context, t testing.TB, module, fn, argsJSON string) (string, error) {
	t.Helper()
	m, ok := f.mods[module]
	if !ok {
		t.Fatalf("no module %q", module)
	}
	fun, ok := m.Funcs[fn]
	if !ok {
		t.Fatalf("no function %s.%s", module, fn)
	}
	v, err := dsl.Unmarshal([]byte(argsJSON))
	if err != nil {
		t.Fatalf("bad test arguments %s: %v", argsJSON, err)
	}
	args, ok := v.([]any)
	if !ok {
		t.Fatalf("test arguments %s are not an array", argsJSON)
	}
	res, err := fun(ctx, args)
	if err != nil {
		return "", err
	}
	b, err := dsl.Marshal(res)
	if err != nil {
		t.Fatalf("%s.%s returned a value that is not lossless JSON: %v", module, fn, err)
	}
	return string(b), nil
}

// ok calls and fails the test on an error.
func (f *fixture) ok(t testing.TB, module, fn, argsJSON string) string {
	t.Helper()
	got, err := f.call(context.Background(), t, module, fn, argsJSON)
	if err != nil {
		t.Fatalf("%s.%s(%s): %v", module, fn, argsJSON, err)
	}
	return got
}

// fail calls with ctx and returns the capability error, failing the test on
// a success or another kind of error.
func (f *fixture) failCtx(ctx context.Context, t testing.TB, module, fn, argsJSON string) *capability.Error {
	t.Helper()
	got, err := f.call(ctx, t, module, fn, argsJSON)
	if err == nil {
		t.Fatalf("%s.%s(%s) = %s, want an error", module, fn, argsJSON, got)
	}
	var e *capability.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s.%s(%s): %T %v is not a *capability.Error", module, fn, argsJSON, err, err)
	}
	if e.Name() != "Error" || e.Error() != e.Message {
		t.Errorf("name %q, Error() %q, Message %q", e.Name(), e.Error(), e.Message)
	}
	return e
}

func (f *fixture) fail(t testing.TB, module, fn, argsJSON string) *capability.Error {
	t.Helper()
	return f.failCtx(context.Background(), t, module, fn, argsJSON)
}

// path returns the absolute path of rel in the workspace.
func (f *fixture) path(rel string) string { return filepath.Join(f.ws, filepath.FromSlash(rel)) }

// write creates a file (and its directories) with text.
func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// quote returns s as a JSON string.
func quote(s string) string {
	b, err := dsl.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// countdown is a context that becomes cancelled after its Err has been
// asked n times: a deterministic way to cancel an operation midway.
type countdown struct {
	context.Context
	left atomic.Int64
	done chan struct{}
	once sync.Once
}

func cancelAfter(n int64) *countdown {
	c := &countdown{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.left.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *countdown) Done() <-chan struct{} { return c.done }

// cancelledCtx returns a context that is already cancelled.
func cancelledCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
