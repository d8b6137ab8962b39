package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/ptc"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "hostile-child" {
		os.Exit(runHostileChild(os.Args[2]))
	}
	goleak.VerifyTestMain(m)
}

// newHostile returns a runtime whose children are this test binary playing
// scenario.
func newHostile(t *testing.T, scenario string, b ptc.Budgets) *Runtime {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if b == (ptc.Budgets{}) {
		b = ptc.DefaultBudgets()
	}
	rt, err := NewRuntime(Options{Language: ptc.TypeScript, Budgets: b, Path: exe, Args: []string{"child", "hostile-child", scenario}, Pool: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return rt
}

// echoNamespace binds echo, which returns its argument, counting its calls.
func echoNamespace(calls *atomic.Int32) ptc.Namespace {
	return ptc.Namespace{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: []ptc.Binding{{
		Name: "echo",
		Call: func(_ context.Context, args any) (any, error) {
			calls.Add(1)
			if args == "fail" {
				return nil, errors.New("echo failed")
			}
			if args == "lossy" {
				return func() {}, nil
			}
			return args, nil
		},
	}}}
}

func TestAChildThatBreaksTheProtocol(t *testing.T) {
	cases := []struct {
		scenario string
		kind     ptc.Kind
		message  string // a regexp
		calls    int32  // how often echo ran
	}{
		{"garbage", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: not JSON`, 0},
		{"not-an-object", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: not a JSON object$`, 0},
		{"unknown-type", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: unexpected message type "result"$`, 0},
		{"extra-member", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: log message has 3 members, want 2$`, 0},
		{"negative-zero", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: not JSON: .*-0`, 0},
		{"bad-kind", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: done message: member "kind" must be a failure kind$`, 0},
		{"huge-frame", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: frame too large: 2147483648 bytes`, 0},
		{"cut-frame", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: unexpected EOF$`, 0},
		{"duplicate-id", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: call id 1 out of order \(the next is 2\)$`, 1},
		{"unknown-binding", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: call to "secret", which is not bound$`, 0},
		{"bad-namespace", ptc.KindWorkerExit, `^runtime crashed: the worker broke the protocol: call to namespace 5 of 1$`, 0},
		{"exit-3", ptc.KindWorkerExit, `^worker exited with code 3 before completing$`, 0},
		{"log-then-exit", ptc.KindWorkerExit, `^worker exited with code 3 before completing$`, 0},
		{"sigterm", ptc.KindWorkerExit, `^worker killed by signal SIGTERM$`, 0},
		{"out-of-memory", ptc.KindWorkerExit, `^worker exceeded its memory limit \(512 MiB\)$`, 0},
		{"out-of-memory-long-report", ptc.KindWorkerExit, `^worker exceeded its memory limit \(512 MiB\)$`, 0},
	}
	for _, c := range cases {
		t.Run("a child that "+strings.ReplaceAll(c.scenario, "-", " ")+" fails its run and is replaced", func(t *testing.T) {
			t.Parallel()
			rt := newHostile(t, c.scenario, ptc.Budgets{})
			var calls atomic.Int32
			for range 2 { // the second run meets a fresh child
				res, err := rt.Run(context.Background(), ptc.Request{Program: "p", Bindings: []ptc.Namespace{echoNamespace(&calls)}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Err == nil || res.Err.Kind != c.kind || !regexp.MustCompile(c.message).MatchString(res.Err.Message) {
					t.Fatalf("result %+v, err %+v; want %s %q", res, res.Err, c.kind, c.message)
				}
			}
			if got := calls.Load(); got != 2*c.calls {
				t.Errorf("echo ran %d times, want %d", got, 2*c.calls)
			}
		})
	}
}

func TestAChildsLogsAreChargedToTheParentsLedger(t *testing.T) {
	b := ptc.DefaultBudgets()
	b.MaxOutputBytes = 100
	rt := newHostile(t, "forged-logs", b)
	res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
	if err != nil {
		t.Fatal(err)
	}
	// 100 entries of 30 bytes forged; the cap keeps what fits beside the
	// message, then a prefix: exactly what the ledger gives.
	want := ptc.NewLedger(100)
	for range 100 {
		want.Log(strings.Repeat("L", 30))
	}
	w := want.Limit()
	if res.Err == nil || *res.Err != *w.Err || strings.Join(res.Logs, "|") != strings.Join(w.Logs, "|") {
		t.Fatalf("got %+v %+v, want %+v %+v", res, res.Err, w, w.Err)
	}
}

func TestAChildsOutputLimitHasTheWholeMessage(t *testing.T) {
	// The child logs abc, then reports the output limit with its message
	// cut to "ou": this side's ledger gives the whole message, which is
	// not charged against the cap, and the logs that fit beside it.
	for _, tt := range []struct {
		name string
		cap  float64
		logs []string
	}{
		{"at cap 6 the message is whole and no log is kept", 6, []string{}},
		{"at cap 10 the message is whole and no log is kept", 10, []string{}},
		{"at cap 300 the log is kept beside the whole message", 300, []string{"abc"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := ptc.DefaultBudgets()
			b.MaxOutputBytes = tt.cap
			rt := newHostile(t, "cut-output-limit", b)
			res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
			if err != nil {
				t.Fatal(err)
			}
			want := ptc.Failure{Kind: ptc.KindOutputLimit, Message: fmt.Sprintf("outer output exceeded %d bytes", int(tt.cap))}
			if res.Err == nil || *res.Err != want || res.HasValue || !slices.Equal(res.Logs, tt.logs) {
				t.Fatalf("got logs %q, failure %+v, value %v; want logs %q, failure %+v", res.Logs, res.Err, res.HasValue, tt.logs, want)
			}
		})
	}
}

func TestAChildsLastLogsAreKeptWhenItDies(t *testing.T) {
	rt := newHostile(t, "log-then-exit", ptc.Budgets{})
	res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Logs) != 1 || res.Logs[0] != "last words" {
		t.Fatalf("logs %q, want [last words]", res.Logs)
	}
}

func TestBindingCallsCrossTheProcessBoundary(t *testing.T) {
	cases := []struct {
		name    string
		program string // what the echo child passes to echo
		want    any
		failure string
	}{
		{"a value comes back", "hello", "hello", ""},
		{"a failed call is the program's error", "fail", nil, "ToolCallError: echo failed"},
		{"a value that is not lossless JSON is refused", "lossy", nil, "ToolCallError: binding resolution must be lossless JSON"},
	}
	rt := newHostile(t, "echo", ptc.Budgets{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			var logs []string
			res, err := rt.Run(context.Background(), ptc.Request{Program: c.program, Bindings: []ptc.Namespace{echoNamespace(&calls)},
				OnLog: func(e string) { logs = append(logs, e) }})
			if err != nil {
				t.Fatal(err)
			}
			if c.failure != "" {
				if res.Err == nil || res.Err.Message != c.failure {
					t.Fatalf("got %+v %+v, want failure %q", res, res.Err, c.failure)
				}
			} else if res.Err != nil || res.Value != c.want {
				t.Fatalf("got %+v %+v, want %v", res, res.Err, c.want)
			}
			if calls.Load() != 1 || len(res.Logs) != 1 || res.Logs[0] != "calling" || len(logs) != 1 {
				t.Fatalf("calls %d, logs %q, streamed %q", calls.Load(), res.Logs, logs)
			}
		})
	}
}

func TestAChildIsKilledAndReplacedWhenTheRunEnds(t *testing.T) {
	t.Run("an abort kills a hung child and reports the reason", func(t *testing.T) {
		rt := newHostile(t, "hang", ptc.Budgets{})
		ctx, cancel := context.WithCancelCause(context.Background())
		time.AfterFunc(100*time.Millisecond, func() { cancel(errors.New("user-cancel")) })
		res, err := rt.Run(ctx, ptc.Request{Program: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Err == nil || res.Err.Kind != ptc.KindAbort || res.Err.Message != "user-cancel" {
			t.Fatalf("got %+v", res.Err)
		}
	})
	t.Run("a child past its wall ceiling is killed", func(t *testing.T) {
		b := ptc.DefaultBudgets()
		b.MaxWallMs = 50
		rt := newHostile(t, "hang", b)
		res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if res.Err == nil || res.Err.Message != "wall-clock ceiling reached (50ms)" {
			t.Fatalf("got %+v", res.Err)
		}
	})
	t.Run("a child spinning past its compute budget is killed", func(t *testing.T) {
		if !haveProcStats {
			t.Skip("no /proc to measure a child's CPU time on this OS")
		}
		b := ptc.DefaultBudgets()
		b.ComputeMs = 100
		rt := newHostile(t, "spin", b)
		res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if res.Err == nil || res.Err.Message != "compute budget exhausted (100ms busy)" {
			t.Fatalf("got %+v", res.Err)
		}
	})
	t.Run("a child growing past its memory cap is killed", func(t *testing.T) {
		if !haveProcStats {
			t.Skip("no /proc to measure a child's memory on this OS")
		}
		b := ptc.DefaultBudgets()
		b.MaxMemoryMB = 64
		rt := newHostile(t, "grow", b)
		res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if res.Err == nil || res.Err.Message != "worker exceeded its memory limit (64 MiB)" {
			t.Fatalf("got %+v", res.Err)
		}
	})
	t.Run("closing the runtime disposes of the run in flight", func(t *testing.T) {
		rt := newHostile(t, "hang", ptc.Budgets{})
		done := make(chan ptc.Result)
		go func() {
			res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
			done <- res
		}()
		time.Sleep(100 * time.Millisecond)
		if err := rt.Close(); err != nil {
			t.Fatal(err)
		}
		res := <-done
		if res.Err == nil || res.Err.Kind != ptc.KindAbort || res.Err.Message != "runtime disposed" {
			t.Fatalf("got %+v", res.Err)
		}
		if _, err := rt.Run(context.Background(), ptc.Request{Program: "p"}); err == nil || err.Error() != "process: run() after disposal" {
			t.Fatalf("run after close: %v", err)
		}
	})
}

func TestAChildThatSpeaksWhenIdleIsReplaced(t *testing.T) {
	rt := newHostile(t, "late-log", ptc.Budgets{})
	for range 3 {
		// The child's late entry arrives while it is idle (its run is
		// over, and the next has not begun).
		time.Sleep(200 * time.Millisecond)
		res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if err != nil {
			t.Fatal(err)
		}
		// Each run meets a child that has run nothing before (its run count
		// is 0): the one that spoke after its run was never reused.
		if res.Err != nil || res.Value != 0.0 || len(res.Logs) != 0 {
			t.Fatalf("got %+v %+v", res, res.Err)
		}
	}
}

func TestAChildIsRecycledAfterItsRuns(t *testing.T) {
	exe, _ := os.Executable()
	rt, err := NewRuntime(Options{Language: ptc.Lua, Path: exe, Args: []string{"child", "hostile-child", "late-log"}, Pool: -1, RecycleAfter: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	for range 2 {
		res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if res.Value != 0.0 {
			t.Fatalf("got %+v", res)
		}
	}
}

func TestAChildsMisuseErrorIsBounded(t *testing.T) {
	rt := newHostile(t, "misuse", ptc.Budgets{})
	_, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
	if err == nil || len(err.Error()) > maxMisuse+len("…") {
		t.Fatalf("got %v", err)
	}
}

func TestAChildThatFailsToStart(t *testing.T) {
	cases := []struct {
		scenario string
		message  string
	}{
		{"exit-before-ready", `^runtime crashed: the worker ended: exit status 7`},
		{"call-before-ready", `^runtime crashed: the worker broke the protocol: a call message before ready$`},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			exe, _ := os.Executable()
			rt, err := NewRuntime(Options{Language: ptc.TypeScript, Path: exe, Args: []string{"child", "hostile-child", c.scenario}, Pool: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer rt.Close()
			res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Err == nil || res.Err.Kind != ptc.KindWorkerExit || !regexp.MustCompile(c.message).MatchString(res.Err.Message) {
				t.Fatalf("got %+v", res.Err)
			}
		})
	}
	t.Run("a missing executable", func(t *testing.T) {
		rt, err := NewRuntime(Options{Language: ptc.TypeScript, Path: "/nonexistent/dsh", Pool: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Close()
		res, _ := rt.Run(context.Background(), ptc.Request{Program: "p"})
		if res.Err == nil || !strings.HasPrefix(res.Err.Message, "runtime crashed: starting /nonexistent/dsh: ") {
			t.Fatalf("got %+v", res.Err)
		}
	})
}

func TestNewRuntimeRefusesBadOptions(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"an unknown language", Options{Language: "cobol"}, `process: no runtime language "cobol"`},
		{"a memory cap too small for a child", Options{Language: ptc.Lua, Budgets: ptc.Budgets{ComputeMs: 1, MaxWallMs: 1, MaxOutputBytes: 4, MaxMemoryMB: 8}}, "process: config.maxMemoryMB must be at least 64, got 8"},
		{"an invalid budget", Options{Language: ptc.Lua, Budgets: ptc.Budgets{ComputeMs: -1, MaxWallMs: 1, MaxOutputBytes: 4, MaxMemoryMB: 64}}, "process: config.computeMs must be a positive number, got -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewRuntime(c.opts)
			if err == nil || err.Error() != c.want {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestAChildInheritsNothingButItsPipes(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to list a child's descriptors on this OS")
	}
	t.Setenv("DSH_SECRET", "s3cret")
	leak, err := os.Open(os.DevNull) // a descriptor of the parent's
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	rt := newHostile(t, "report", ptc.Budgets{})
	res, err := rt.Run(context.Background(), ptc.Request{Program: "p"})
	if err != nil || res.Err != nil || len(res.Logs) != 2 {
		t.Fatalf("got %+v %v", res, err)
	}
	if res.Logs[0] != "" {
		t.Errorf("the child's environment is %q, want it empty", res.Logs[0])
	}
	// 0, 1 and 2 are its pipes; one more is the directory being read (the
	// Go runtime may hold a descriptor or two of its own, e.g. an epoll).
	fds := strings.Fields(res.Logs[1])
	if len(fds) < 3 || fds[0] != "0" || fds[1] != "1" || fds[2] != "2" || len(fds) > 6 {
		t.Errorf("the child's descriptors are %v", fds)
	}
	if res.Value != "/" {
		t.Errorf("the child runs in %v, want /", res.Value)
	}
}
