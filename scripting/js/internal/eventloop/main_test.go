package eventloop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/dop251/goja"
	"go.uber.org/goleak"
)

// childEnv selects a child-process mode of the test binary (see
// TestRecursionThroughNativeCallbacksStaysWellWithinTheGoStack).
const childEnv = "EVENTLOOP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "stack" {
		os.Exit(stackChild())
	}
	// regexp2's match-timeout clock (see jsguard) outlives a match by
	// about a second; it is not a leak.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// runawayPatterns recurse without bound, some through native functions that
// call back into JavaScript (each such level recurses on the Go stack).
var runawayPatterns = []string{
	"function f(){ return f() } f()",
	"function f(){ return [0].map(f) } f()",
	"function f(){ return f.call(null) } f()",
	"function f(){ return Reflect.apply(f, null, []) } f()",
	"var o = {}; Object.defineProperty(o, 'x', {get(){ return o.x }}); o.x",
	"var o = { toString(){ return String(o) } }; String(o)",
	"function f(){ return [1,2].sort(function(){ f(); return 0 }) } f()",
	"function f(){ return JSON.stringify({toJSON(){ return f() }}) } f()",
	"var p = new Proxy({}, {get(t,k){ return p[k] }}); p.x",
	"function f(){ return new Promise(function(){ f() }) } f()",
	"function f(){ return Array.from([1], f) } f()",
	"function f(){ return 'a'.replace(/a/, f) } f()",
	"class A { constructor(){ new A() } } new A()",
	"(async function g(){ return g() })()",
}

// stackChild runs every runaway pattern at the default call depth under a Go
// stack limit of 64 MiB (Go's default is 1 GiB). A Go stack overflow is a
// fatal error, so the parent sees a non-zero exit.
func stackChild() int {
	limit := 8 << 20
	if s := os.Getenv("EVENTLOOP_TEST_MAXSTACK"); s != "" {
		fmt.Sscan(s, &limit)
	}
	debug.SetMaxStack(limit)
	l, err := New(Options{})
	if err != nil {
		fmt.Println(err)
		return 1
	}
	defer l.Close()
	for _, src := range runawayPatterns {
		_, err := runJS(l, context.Background(), src)
		var je *JSError
		if !errors.As(err, &je) || je.Name != "RangeError" {
			fmt.Printf("%s: got %v, want a RangeError\n", src, err)
			return 1
		}
	}
	if v, err := runJS(l, context.Background(), "1+1"); err != nil || v != int64(2) {
		fmt.Printf("loop unusable after the overflows: %v %v\n", v, err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

// runJS runs src as a script; an async result is awaited. done exports the
// value.
func runJS(l *Loop, ctx context.Context, src string) (any, error) {
	return l.Run(ctx, func(vm *goja.Runtime) (goja.Value, error) {
		return vm.RunString(src)
	}, nil, func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
		if err != nil {
			return nil, err
		}
		return v.Export(), nil
	})
}

// withDeadline calls run with a ctx whose deadline is d away. A Run whose
// deadline passed before its job started returns ctx's error itself: on a
// loaded machine the caller may wait that long for a CPU, and the test is
// not about that, so run is called again with twice the deadline.
func withDeadline(t testing.TB, d time.Duration, run func(ctx context.Context) error) error {
	t.Helper()
	for ; ; d *= 2 {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		err := run(ctx)
		cancel()
		if err != context.DeadlineExceeded || d >= 10*time.Second {
			return err
		}
		t.Logf("the job did not start within its %v deadline; again with twice that", d)
	}
}

// runJSWithin is runJS with a deadline d away (see withDeadline).
func runJSWithin(t testing.TB, l *Loop, d time.Duration, src string) (any, error) {
	t.Helper()
	var v any
	err := withDeadline(t, d, func(ctx context.Context) error {
		var err error
		v, err = runJS(l, ctx, src)
		return err
	})
	return v, err
}

func newLoop(t testing.TB, opts Options) *Loop {
	t.Helper()
	l, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func mustRun(t testing.TB, l *Loop, src string) any {
	t.Helper()
	v, err := runJS(l, context.Background(), src)
	if err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return v
}

// errSink collects OnError reports.
type errSink struct {
	mu   sync.Mutex
	errs []error
	ch   chan error
}

func newErrSink() *errSink { return &errSink{ch: make(chan error, 100)} }

func (s *errSink) onError(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	select {
	case s.ch <- err:
	default:
	}
}

func (s *errSink) next(t testing.TB) error {
	t.Helper()
	select {
	case err := <-s.ch:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("no error reported")
		return nil
	}
}

func (s *errSink) all() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

func waitClosed(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: not closed after 5s", what)
	}
}

// setupHelpers installs log (an array) and sleep(ms) for tests.
func setupHelpers(vm *goja.Runtime) error {
	_, err := vm.RunString(`
		globalThis.log = [];
		globalThis.sleep = ms => new Promise(r => setTimeout(r, ms));
	`)
	return err
}
