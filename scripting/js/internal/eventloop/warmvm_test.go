package eventloop

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// TestGojaEntries pins the two facts of goja (at the version in go.mod) that
// rule out keeping its VM warm by staying inside one entry (a driver that
// takes jobs from Go as nested calls, see BENCHMARKS.md, "Lever 2: a warm
// VM"), and that the loop's trampoline relies on: promise jobs run only when
// the outermost call returns (which also drops the VM stack), and a driver
// that lives in that drain as a promise job cannot tell when the queue is
// empty, so it would run the next job before the last one's microtasks.
func TestGojaEntries(t *testing.T) {
	tests := []struct {
		name string
		// run runs the case on vm, whose global log, like logf, appends
		// to the log.
		run  func(t *testing.T, vm *goja.Runtime, logf func(string))
		want string
	}{{
		name: "a job run inside a driver's entry resumes its await only after the driver leaves",
		run: func(t *testing.T, vm *goja.Runtime, logf func(string)) {
			job := mustFunc(t, vm, `(async function () { log("job starts"); await null; log("job resumed") })`)
			mustSet(t, vm, "next", func(goja.FunctionCall) goja.Value {
				if _, err := job(goja.Undefined()); err != nil {
					t.Fatal(err)
				}
				logf("job returned to the driver")
				return goja.Undefined()
			})
			driver := mustFunc(t, vm, `(function () { next(); log("driver leaves") })`)
			if _, err := driver(goja.Undefined()); err != nil {
				t.Fatal(err)
			}
		},
		want: "job starts; job returned to the driver; driver leaves; job resumed",
	}, {
		name: "a driver requeued at the tail of the drain runs the next job before the last one's await chain ends",
		run: func(t *testing.T, vm *goja.Runtime, logf func(string)) {
			pending := []string{"job1", "job2"}
			mustSet(t, vm, "nextJob", func(goja.FunctionCall) goja.Value {
				if len(pending) == 0 {
					return goja.Null()
				}
				j := pending[0]
				pending = pending[1:]
				return vm.ToValue(j)
			})
			if _, err := vm.RunString(`
				const jobs = {
					job1: async function () { log("job1 starts"); await null; await null; log("job1 ends") },
					job2: function () { log("job2 runs") },
				};
				function driver() {
					const j = nextJob();
					if (j === null) return;
					jobs[j]();
					Promise.resolve().then(driver);
				}
				Promise.resolve().then(driver);
			`); err != nil {
				t.Fatal(err)
			}
		},
		want: "job1 starts; job2 runs; job1 ends",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vm := goja.New()
			var log []string
			logf := func(s string) { log = append(log, s) }
			mustSet(t, vm, "log", func(call goja.FunctionCall) goja.Value {
				logf(call.Argument(0).String())
				return goja.Undefined()
			})
			tt.run(t, vm, logf)
			if got := strings.Join(log, "; "); got != tt.want {
				t.Errorf("order:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func mustFunc(t testing.TB, vm *goja.Runtime, src string) goja.Callable {
	t.Helper()
	v, err := vm.RunString(src)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		t.Fatalf("%s is not a function", src)
	}
	return f
}

func mustSet(t testing.TB, vm *goja.Runtime, name string, v any) {
	t.Helper()
	if err := vm.Set(name, v); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkGojaEntry is what leaving the runtime costs a call: "fresh" is a
// call from Go that is the outermost entry (goja drops its VM stack and job
// queue when it returns, and the next call grows them again); "nested" is the
// same call made from inside one long-lived entry, the stack kept, as a warm
// driver would make it; "handed_off" is that driver parked in its entry on
// its own goroutine, as it would have to be between calls, each call handed
// to it and its result back (the caller of a Run does not hold the entry).
func BenchmarkGojaEntry(b *testing.B) {
	const src = `(function (x) { function g(a, b, c) { return a + b + c } return g(x, 1, 2) + g(x, 3, 4) })`
	b.Run("fresh", func(b *testing.B) {
		vm := goja.New()
		f := mustFunc(b, vm, src)
		arg := vm.ToValue(1)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f(goja.Undefined(), arg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nested", func(b *testing.B) {
		vm := goja.New()
		f := mustFunc(b, vm, src)
		arg := vm.ToValue(1)
		mustSet(b, vm, "serve", func(goja.FunctionCall) goja.Value {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f(goja.Undefined(), arg); err != nil {
					b.Fatal(err)
				}
			}
			return goja.Undefined()
		})
		if _, err := vm.RunString(`serve()`); err != nil {
			b.Fatal(err)
		}
	})
	b.Run("handed_off", func(b *testing.B) {
		vm := goja.New()
		f := mustFunc(b, vm, src)
		arg := vm.ToValue(1)
		jobs, results := make(chan struct{}), make(chan error)
		mustSet(b, vm, "serve", func(goja.FunctionCall) goja.Value {
			for range jobs {
				_, err := f(goja.Undefined(), arg)
				results <- err
			}
			return goja.Undefined()
		})
		driver := make(chan error, 1)
		go func() {
			_, err := vm.RunString(`serve()`)
			driver <- err
		}()
		b.ReportAllocs()
		for b.Loop() {
			jobs <- struct{}{}
			if err := <-results; err != nil {
				b.Fatal(err)
			}
		}
		close(jobs)
		if err := <-driver; err != nil {
			b.Fatal(err)
		}
	})
}
