package ptc

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// The lane runs the dispatch of a call that is alone and that no call may
// join (an exclusive call, or any call under a cap of one) itself, instead
// of on a worker. These tests pin that such a call behaves as one on a
// worker does, and that a call others may join still runs beside them.

// laneModes are the ways a call may run: alone on the lane, or on a worker
// that later calls may run beside (overlap).
var laneModes = []struct {
	name     string
	parallel bool // the tools' classification
	max      int  // MaxParallel
	overlap  bool // a later call of the same tool starts while one runs
}{
	{name: "an exclusive call", parallel: false, max: 10},
	{name: "a parallel call under a cap of one", parallel: true, max: 1},
	{name: "a parallel call under a cap of ten", parallel: true, max: 10, overlap: true},
}

// holdEnv registers hold, whose body records "start:<id>", reports on
// entered that it runs, and returns its id once release is closed or
// returns its context's error once that ends (recording "saw-end:<id>").
func holdEnv(t *testing.T, parallel bool) (h *schedEnv, entered chan string, release chan struct{}) {
	h = newSchedEnv(t)
	entered, release = make(chan string, 16), make(chan struct{})
	h.tool("hold", parallel, func(ctx context.Context, args *dsl.Object) (any, error) {
		id := str(args, "id")
		h.rec.add("start:" + id)
		entered <- id
		select {
		case <-release:
			h.rec.add("end:" + id)
			return id, nil
		case <-ctx.Done():
			h.rec.add("saw-end:" + id)
			return nil, ctx.Err()
		}
	})
	h.onPost()
	return h, entered, release
}

// awaitID receives from ch, bounded; it runs in a program, off the test's
// goroutine, so it reports a timeout with Error.
func awaitID(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case id := <-ch:
		return id
	case <-time.After(schedWait):
		t.Error("no body started")
		return ""
	}
}

// sortedSummary is l's summary sorted: settle events are appended off the
// program's path, in any order relative to later starts.
func sortedSummary(l *memLog) []string {
	s := l.summary()
	slices.Sort(s)
	return s
}

func TestAProgramStopsWaitingAtItsContextsEndWhileTheCallRuns(t *testing.T) {
	for _, m := range laneModes {
		t.Run(m.name, func(t *testing.T) {
			h, entered, release := holdEnv(t, m.parallel)
			var got error
			err := h.run(context.Background(), schedulerOptions{MaxParallel: m.max, Log: h.log}, false, func(s *scheduler) {
				f := s.Enqueue(call("hold", "id", "a"))
				awaitID(t, entered)
				ctx, cancel := context.WithCancelCause(context.Background())
				cancel(errors.New("program interrupted"))
				_, got = f(ctx)
				close(release)
				if v, err := wait(f); err != nil || v != "a" {
					t.Errorf("the call settled with %v, %v; want a", v, err)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Error() != "program interrupted" {
				t.Errorf("the interrupted wait returned %v, want the context's cause", got)
			}
			if s := h.log.summary(); !slices.Equal(s, []string{"start 1", "settle 1"}) {
				t.Errorf("events %q", s)
			}
		})
	}
}

func TestACallSubmittedWhileAnotherRunsStartsAsTheRulesSay(t *testing.T) {
	for _, m := range laneModes {
		want := "starts after the running call commits"
		if m.overlap {
			want = "starts beside the running call"
		}
		t.Run(m.name+" "+want, func(t *testing.T) {
			h, entered, release := holdEnv(t, m.parallel)
			err := h.run(context.Background(), schedulerOptions{MaxParallel: m.max, Log: h.log}, false, func(s *scheduler) {
				fa := s.Enqueue(call("hold", "id", "a"))
				awaitID(t, entered)
				fb := s.Enqueue(call("hold", "id", "b"))
				if m.overlap {
					if id := awaitID(t, entered); id != "b" {
						t.Errorf("%s started, want b", id)
					}
				} else {
					breather()
				}
				close(release)
				for _, f := range []func(context.Context) (any, error){fa, fb} {
					if _, err := wait(f); err != nil {
						t.Error(err)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			r := h.rec
			if started, committed := r.index(t, "start:b"), r.index(t, "post:a"); m.overlap != (started < committed) {
				t.Errorf("b started at %d, a committed at %d: %q", started, committed, r.all())
			}
			if got := r.with("post:"); !slices.Equal(got, []string{"post:a", "post:b"}) {
				t.Errorf("commits %q, want a then b", got)
			}
			if s := sortedSummary(h.log); !slices.Equal(s, []string{"settle 1", "settle 2", "start 1", "start 2"}) {
				t.Errorf("events %q, want a start and a settle each", s)
			}
		})
	}
}

func TestARunEndingDuringALoneCallAbandonsTheQueueAndDiscardsTheCall(t *testing.T) {
	for _, m := range laneModes {
		if m.overlap {
			continue // the second call is not queued but running
		}
		t.Run(m.name, func(t *testing.T) {
			h, entered, _ := holdEnv(t, m.parallel)
			var got1, got2 error
			err := h.run(context.Background(), schedulerOptions{MaxParallel: m.max, Log: h.log}, false, func(s *scheduler) {
				f1 := s.Enqueue(call("hold", "id", "a"))
				f2 := s.Enqueue(call("hold", "id", "b"))
				awaitID(t, entered)
				if err := s.Close("run_code settled"); err != nil {
					t.Error(err)
				}
				_, got1 = wait(f1)
				_, got2 = wait(f2)
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := "run_code run is over (run_code settled); hold result discarded"; got1 == nil || got1.Error() != want {
				t.Errorf("in flight: %v, want %q", got1, want)
			}
			if want := "run_code run is over (run_code settled); hold tool call abandoned"; got2 == nil || got2.Error() != want {
				t.Errorf("queued: %v, want %q", got2, want)
			}
			if s := h.log.summary(); !slices.Equal(s, []string{"start 1", "settle 1"}) {
				t.Errorf("events %q, want the running call's start and settle only", s)
			}
			if got := h.rec.with("saw-end:"); !slices.Equal(got, []string{"saw-end:a"}) {
				t.Errorf("%q, want the running call to see the run end", got)
			}
		})
	}
}

func TestAPanickingBodyFailsItsCallAndLaterCallsStillRun(t *testing.T) {
	for _, m := range laneModes {
		t.Run(m.name, func(t *testing.T) {
			h := newSchedEnv(t)
			h.tool("boom", m.parallel, func(context.Context, *dsl.Object) (any, error) { panic("kaboom") })
			h.tool("echo", m.parallel, func(_ context.Context, args *dsl.Object) (any, error) {
				return "echo:" + str(args, "value"), nil
			})
			var boomErr, echoErr error
			var echoed any
			err := h.run(context.Background(), schedulerOptions{MaxParallel: m.max, Log: h.log}, false, func(s *scheduler) {
				_, boomErr = s.Submit(context.Background(), call("boom"))
				echoed, echoErr = s.Submit(context.Background(), call("echo", "value", "x"))
			})
			if err != nil {
				t.Fatal(err)
			}
			if boomErr == nil || !strings.Contains(boomErr.Error(), "kaboom") {
				t.Errorf("the panicking call settled with %q, want the panic", boomErr)
			}
			if echoErr != nil || echoed != "echo:x" {
				t.Errorf("the next call settled with %v, %v; want echo:x", echoed, echoErr)
			}
			if s := sortedSummary(h.log); !slices.Equal(s, []string{"settle 1", "settle 2", "start 1", "start 2"}) {
				t.Errorf("events %q, want a start and a settle each", s)
			}
		})
	}
}
