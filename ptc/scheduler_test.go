package ptc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// schedWait bounds every wait of these tests: a scheduler that deadlocks
// fails the test instead of hanging it.
const schedWait = 10 * time.Second

// schedEnv is an engine with one agent, an in-memory event log, a recorder
// of what happened in which order, and an outer tool (call-1) whose body
// runs a test's program against a scheduler.
type schedEnv struct {
	t     *testing.T
	svc   *engine.Service
	agent *engine.Agent
	log   *memLog
	rec   *recorder
}

func newSchedEnv(t *testing.T) *schedEnv {
	t.Helper()
	return &schedEnv{t: t, svc: engine.New(), agent: engine.NewAgent("main", nil), log: &memLog{}, rec: &recorder{}}
}

// tool registers a global tool with a string value; parallel says whether
// its classifier declares it concurrency-safe.
func (h *schedEnv) tool(name string, parallel bool, body func(ctx context.Context, args *dsl.Object) (any, error)) {
	h.t.Helper()
	def := &engine.Definition{
		Name:        name,
		Description: name + " tool",
		Parameters:  dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		Execute: func(ctx context.Context, args any, _ *engine.Run) (any, error) {
			o, _ := args.(*dsl.Object)
			return body(ctx, o)
		},
	}
	if parallel {
		def.IsConcurrencySafe = func(any) bool { return true }
	}
	if _, err := h.svc.Global().Register(def); err != nil {
		h.t.Fatal(err)
	}
}

// echo registers echo: "echo:<value>".
func (h *schedEnv) echo() {
	h.tool("echo", false, func(_ context.Context, args *dsl.Object) (any, error) {
		return "echo:" + str(args, "value"), nil
	})
}

// run calls the outer tool as call-1 on ctx (with the env's agent unless
// noAgent), runs program against a scheduler built with opts inside its
// body, closes the scheduler with "run_code settled" and returns Close's
// error. Every event appended is in h.log when run returns.
func (h *schedEnv) run(ctx context.Context, opts schedulerOptions, noAgent bool, program func(s *scheduler)) error {
	h.t.Helper()
	var closeErr error
	def := &engine.Definition{
		Name:        "outer",
		Description: "runs the test's program",
		Parameters:  dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		Execute: func(ctx context.Context, _ any, run *engine.Run) (any, error) {
			opts.Outer = run.Execution
			s, err := newScheduler(ctx, h.svc, opts)
			if err != nil {
				return nil, err
			}
			program(s)
			closeErr = s.Close("run_code settled")
			return "ok", nil
		},
	}
	if _, err := h.svc.Global().Register(def); err != nil {
		h.t.Fatal(err)
	}
	in := engine.Input{CallID: "call-1", Name: "outer", Arguments: dsl.NewObject()}
	if !noAgent {
		in.Agent = h.agent
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.svc.Call(ctx, in)
	}()
	select {
	case <-done:
	case <-time.After(schedWait):
		h.t.Fatal("the outer call did not return")
	}
	return closeErr
}

// onPre records "pre-enter:<n>" and "pre-exit:<n>" around every sub-call's
// pre-execute chain, running hold (when set) in between.
func (h *schedEnv) onPre(hold func(n string)) {
	h.svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		n, ok := subNumber(exec)
		if !ok {
			return next()
		}
		h.rec.add("pre-enter:" + n)
		if hold != nil {
			hold(n)
		}
		h.rec.add("pre-exit:" + n)
		return next()
	})
}

// onPost records "post:<label>" for every sub-call's post-execute, label
// being its "id" argument or else its number.
func (h *schedEnv) onPost() {
	h.svc.Global().OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		if n, ok := subNumber(exec); ok {
			o, _ := exec.Arguments().(*dsl.Object)
			if id := str(o, "id"); id != "" {
				n = id
			}
			h.rec.add("post:" + n)
		}
		return next()
	})
}

// subNumber returns n for a sub-call call-1:ptc:<n>.
func subNumber(exec *engine.Execution) (string, bool) {
	return strings.CutPrefix(exec.CallID(), "call-1:ptc:")
}

// call is a sub-call of name with arguments k1, v1, ….
func call(name string, kv ...any) subCall {
	args := obj(kv...)
	logged, err := dsl.Snapshot(args)
	if err != nil {
		panic(err)
	}
	return subCall{Name: name, Arguments: args, Logged: logged}
}

func obj(kv ...any) *dsl.Object {
	o := dsl.NewObject()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func str(o *dsl.Object, key string) string {
	if o == nil {
		return ""
	}
	v, _ := o.Get(key)
	s, _ := v.(string)
	return s
}

// wait waits for f's outcome, bounded.
func wait(f func(context.Context) (any, error)) (any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), schedWait)
	defer cancel()
	return f(ctx)
}

// eventually polls cond until it holds, bounded.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(schedWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// await receives from ch, bounded.
func await(ch <-chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-time.After(schedWait):
		return errors.New("timed out")
	}
}

// breather gives a wrong scheduler the chance to do what it must not; a
// right one passes whatever the timing.
func breather() { time.Sleep(20 * time.Millisecond) }

// recorder keeps labels in the order they happened.
type recorder struct {
	mu  sync.Mutex
	got []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.got = append(r.got, s)
	r.mu.Unlock()
}

// with returns the labels starting with prefix, in order.
func (r *recorder) with(prefix string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.got {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}

func (r *recorder) index(t *testing.T, s string) int {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.got, s)
	if i < 0 {
		t.Fatalf("%q never happened in %q", s, r.got)
	}
	return i
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// memLog is an in-memory EventLog; fail, when set, fails every append.
type memLog struct {
	mu     sync.Mutex
	events []engine.Event
	fail   error
}

func (l *memLog) Append(_ context.Context, e engine.Event) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return "", l.fail
	}
	l.events = append(l.events, e)
	return "e" + strconv.Itoa(len(l.events)), nil
}

// lines returns the events of type typ as canonical JSON payloads, in
// append order.
func (l *memLog) lines(t *testing.T, typ string) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.Type != typ {
			continue
		}
		b, err := dsl.Marshal(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// summary returns "start <n>" and "settle <n>" in append order.
func (l *memLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.events))
	for i, e := range l.events {
		id, _ := e.Data.Get("subCallId")
		kind := "settle"
		if e.Type == engine.EventPTCDispatchStart {
			kind = "start"
		}
		out[i] = kind + " " + strings.TrimPrefix(id.(string), "call-1:ptc:")
	}
	return out
}

func TestSubCallsPrepareOneAtATimeAndCommitInSubmissionOrder(t *testing.T) {
	h := newSchedEnv(t)
	ended := map[string]chan struct{}{"1": make(chan struct{}), "2": make(chan struct{}), "3": make(chan struct{})}
	// Bodies end in reverse order: call n waits for call n+1's body.
	h.tool("safe", true, func(_ context.Context, args *dsl.Object) (any, error) {
		n := str(args, "n")
		defer close(ended[n])
		if next, ok := ended[strconv.Itoa(mustAtoi(n)+1)]; ok {
			if err := await(next); err != nil {
				return nil, err
			}
		}
		h.rec.add("body-end:" + n)
		return "safe:" + n, nil
	})
	h.onPre(func(n string) {
		if n == "1" {
			breather() // a slow first prepare
		}
	})
	h.onPost()
	var values []any
	var postsAtThird []string
	err := h.run(context.Background(), schedulerOptions{MaxParallel: 10}, false, func(s *scheduler) {
		f1 := s.Enqueue(call("safe", "n", "1"))
		f2 := s.Enqueue(call("safe", "n", "2"))
		f3 := s.Enqueue(call("safe", "n", "3"))
		v3, err := wait(f3)
		if err != nil {
			t.Error(err)
		}
		postsAtThird = h.rec.with("post:")
		v1, _ := wait(f1)
		v2, _ := wait(f2)
		values = []any{v1, v2, v3}
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"prepares", h.rec.with("pre-"), []string{"pre-enter:1", "pre-exit:1", "pre-enter:2", "pre-exit:2", "pre-enter:3", "pre-exit:3"}},
		{"bodies", h.rec.with("body-end:"), []string{"body-end:3", "body-end:2", "body-end:1"}},
		{"commits", h.rec.with("post:"), []string{"post:1", "post:2", "post:3"}},
		{"commits when the third call resolved", postsAtThird, []string{"post:1", "post:2", "post:3"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
	if want := []any{"safe:1", "safe:2", "safe:3"}; !slices.Equal(values, want) {
		t.Errorf("values %v, want %v", values, want)
	}
}

func mustAtoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(err)
	}
	return n
}

func TestTheParallelPoolIsBoundedByMaxParallel(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run("MaxParallel "+strconv.Itoa(limit), func(t *testing.T) {
			h := newSchedEnv(t)
			var (
				mu        sync.Mutex
				cur, peak int
			)
			full, release := make(chan struct{}), make(chan struct{})
			var filled sync.Once
			h.tool("safe", true, func(_ context.Context, args *dsl.Object) (any, error) {
				mu.Lock()
				cur++
				peak = max(peak, cur)
				if cur == limit {
					filled.Do(func() { close(full) })
				}
				mu.Unlock()
				err := await(release)
				mu.Lock()
				cur--
				mu.Unlock()
				return "ok", err
			})
			err := h.run(context.Background(), schedulerOptions{MaxParallel: limit, Log: h.log}, false, func(s *scheduler) {
				var fs []func(context.Context) (any, error)
				for i := 1; i <= 6; i++ {
					fs = append(fs, s.Enqueue(call("safe", "n", strconv.Itoa(i))))
				}
				if err := await(full); err != nil {
					t.Error("the pool never filled")
				}
				breather()
				close(release)
				for _, f := range fs {
					if _, err := wait(f); err != nil {
						t.Error(err)
					}
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if peak != limit {
				t.Errorf("peak %d bodies in flight, want %d", peak, limit)
			}
			var starts []string
			for _, e := range h.log.summary() {
				if n, ok := strings.CutPrefix(e, "start "); ok {
					starts = append(starts, n)
				}
			}
			if want := []string{"1", "2", "3", "4", "5", "6"}; !slices.Equal(starts, want) {
				t.Errorf("calls started %q, want %q", starts, want)
			}
		})
	}
}

func TestAnExclusiveCallIsABarrierUntilItsCommit(t *testing.T) {
	h := newSchedEnv(t)
	r2Started := make(chan struct{})
	body := func(_ context.Context, args *dsl.Object) (any, error) {
		id := str(args, "id")
		h.rec.add("start:" + id)
		switch id {
		case "r1": // overlaps r2
			if err := await(r2Started); err != nil {
				return nil, err
			}
		case "r2":
			close(r2Started)
		}
		breather()
		h.rec.add("end:" + id)
		return id, nil
	}
	h.tool("read", true, body)
	h.tool("write", false, body)
	h.onPost()
	err := h.run(context.Background(), schedulerOptions{MaxParallel: 10}, false, func(s *scheduler) {
		fs := []func(context.Context) (any, error){
			s.Enqueue(call("read", "id", "r1")),
			s.Enqueue(call("read", "id", "r2")),
			s.Enqueue(call("write", "id", "w")),
			s.Enqueue(call("read", "id", "r3")),
		}
		for _, f := range fs {
			if _, err := wait(f); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	r := h.rec
	if w := r.index(t, "start:w"); w < r.index(t, "post:r1") || w < r.index(t, "post:r2") {
		t.Errorf("w started before r1 and r2 committed: %q", r.all())
	}
	if r.index(t, "start:r3") < r.index(t, "post:w") {
		t.Errorf("r3 started before w committed: %q", r.all())
	}
}

func TestAFailedSubCallRejectsWithTheProgramVisibleMessage(t *testing.T) {
	cases := []struct {
		name  string
		setup func(h *schedEnv)
		call  subCall
		want  string
	}{
		{"a body that fails", func(h *schedEnv) {
			h.tool("boom", false, func(context.Context, *dsl.Object) (any, error) { return nil, errors.New("deliberate failure") })
		}, call("boom"), "deliberate failure"},
		{"a pre-execute listener that denies", func(h *schedEnv) {
			h.echo()
			h.svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				if _, ok := subNumber(exec); ok {
					return engine.Deny("not on my watch"), nil
				}
				return next()
			})
		}, call("echo", "value", "x"), "not on my watch"},
		{"a pre-execute listener that fails", func(h *schedEnv) {
			h.echo()
			h.svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
				if _, ok := subNumber(exec); ok {
					return engine.PreDecision{}, errors.New("gate exploded")
				}
				return next()
			})
		}, call("echo", "value", "x"), "gate exploded"},
		{"an unknown tool", func(*schedEnv) {}, call("nope"), `unknown tool "nope"`},
		{"a post-execute listener that blocks", func(h *schedEnv) {
			h.echo()
			h.svc.Global().OnPostExecute(func(_ context.Context, exec *engine.Execution, _ *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
				if _, ok := subNumber(exec); ok {
					return engine.BlockResult([]engine.Block{engine.Text("blocked by policy")}), nil
				}
				return next()
			})
		}, call("echo", "value", "x"), "blocked by policy"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			h := newSchedEnv(t)
			tt.setup(h)
			var got error
			err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, Log: h.log}, false, func(s *scheduler) {
				_, got = s.Submit(context.Background(), tt.call)
			})
			if err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Error() != tt.want {
				t.Errorf("error %v, want %q", got, tt.want)
			}
			settles := h.log.lines(t, engine.EventPTCDispatchSettle)
			if len(settles) != 1 || !strings.Contains(settles[0], `"isError":true`) {
				t.Errorf("settle events %q, want one with isError true", settles)
			}
		})
	}
}

func TestARunThatIsOverRejectsItsCalls(t *testing.T) {
	// slow runs until its context ends and reports that it saw the end.
	slow := func(h *schedEnv, started chan struct{}) {
		h.tool("slow", false, func(ctx context.Context, _ *dsl.Object) (any, error) {
			close(started)
			select {
			case <-ctx.Done():
				h.rec.add("saw-abort")
				return nil, ctx.Err()
			case <-time.After(schedWait):
				return "never", nil
			}
		})
	}
	t.Run("a call after Close is not dispatched", func(t *testing.T) {
		h := newSchedEnv(t)
		h.echo()
		var got error
		err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, Log: h.log}, false, func(s *scheduler) {
			if err := s.Close("run_code settled"); err != nil {
				t.Error(err)
			}
			_, got = s.Submit(context.Background(), call("echo", "value", "x"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := "run_code run is over (run_code settled); echo not dispatched"; got == nil || got.Error() != want {
			t.Errorf("error %v, want %q", got, want)
		}
		if s := h.log.summary(); len(s) != 0 {
			t.Errorf("events %q, want none", s)
		}
	})
	t.Run("Close abandons a queued call and discards the one in flight", func(t *testing.T) {
		h := newSchedEnv(t)
		h.echo()
		started := make(chan struct{})
		slow(h, started)
		var got1, got2 error
		err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, Log: h.log}, false, func(s *scheduler) {
			f1 := s.Enqueue(call("slow"))
			f2 := s.Enqueue(call("echo", "value", "x"))
			if err := await(started); err != nil {
				t.Error(err)
			}
			if err := s.Close("run_code settled"); err != nil {
				t.Error(err)
			}
			_, got1 = wait(f1)
			_, got2 = wait(f2)
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := "run_code run is over (run_code settled); slow result discarded"; got1 == nil || got1.Error() != want {
			t.Errorf("in flight: %v, want %q", got1, want)
		}
		if want := "run_code run is over (run_code settled); echo tool call abandoned"; got2 == nil || got2.Error() != want {
			t.Errorf("queued: %v, want %q", got2, want)
		}
		if s := h.log.summary(); !slices.Equal(s, []string{"start 1", "settle 1"}) {
			t.Errorf("events %q, want the in-flight call's start and settle only", s)
		}
		if got := h.rec.with("saw-abort"); len(got) != 1 {
			t.Error("the call in flight did not see the run end")
		}
	})
	t.Run("the outer context's end is the run's end, with its cause", func(t *testing.T) {
		h := newSchedEnv(t)
		h.echo()
		started := make(chan struct{})
		slow(h, started)
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		var got1, got2 error
		err := h.run(ctx, schedulerOptions{MaxParallel: 10, Log: h.log}, false, func(s *scheduler) {
			f1 := s.Enqueue(call("slow"))
			if err := await(started); err != nil {
				t.Error(err)
			}
			cancel(errors.New("user-cancel"))
			_, got1 = wait(f1)
			_, got2 = s.Submit(context.Background(), call("echo", "value", "x"))
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := "run_code run is over (user-cancel); slow result discarded"; got1 == nil || got1.Error() != want {
			t.Errorf("in flight: %v, want %q", got1, want)
		}
		if want := "run_code run is over (user-cancel); echo not dispatched"; got2 == nil || got2.Error() != want {
			t.Errorf("later: %v, want %q", got2, want)
		}
		if s := h.log.summary(); !slices.Equal(s, []string{"start 1", "settle 1"}) {
			t.Errorf("events %q", s)
		}
	})
}

func TestSubCallEventsAreAppended(t *testing.T) {
	settle := func(n, value, content string) string {
		return fmt.Sprintf(`{"rootCallId":"call-1","parentCallId":"call-1","subCallId":"call-1:ptc:%s","name":"echo","arguments":{"value":%q},"content":[{"type":"text","text":%q}],"isError":false}`, n, value, content)
	}
	cases := []struct {
		name        string
		noAgent     bool
		setup       func(h *schedEnv)
		wantStarts  int
		wantSettles []string
	}{
		{"two sequential calls log a start and a settle each", false, nil, 2,
			[]string{settle("1", "one", "echo:one"), settle("2", "two", "echo:two")}},
		{"without an agent nothing is logged", true, nil, 0, nil},
		{"a dispatch-log listener changes only the durable copy", false, func(h *schedEnv) {
			h.svc.Global().OnDispatchLog(func(_ context.Context, e *engine.DispatchLogEntry, _ func() ([]engine.Block, error)) ([]engine.Block, error) {
				return []engine.Block{engine.Text("short " + e.SubCallID)}, nil
			})
		}, 2, []string{settle("1", "one", "short call-1:ptc:1"), settle("2", "two", "short call-1:ptc:2")}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			h := newSchedEnv(t)
			h.echo()
			if tt.setup != nil {
				tt.setup(h)
			}
			var values []any
			err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, Log: h.log}, tt.noAgent, func(s *scheduler) {
				for _, v := range []string{"one", "two"} {
					got, err := s.Submit(context.Background(), call("echo", "value", v))
					if err != nil {
						t.Error(err)
					}
					values = append(values, got)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []any{"echo:one", "echo:two"}; !slices.Equal(values, want) {
				t.Errorf("values %v, want %v", values, want)
			}
			starts := h.log.lines(t, engine.EventPTCDispatchStart)
			if len(starts) != tt.wantStarts {
				t.Fatalf("start events %q, want %d", starts, tt.wantStarts)
			}
			for i, s := range starts {
				want := fmt.Sprintf(`"subCallId":"call-1:ptc:%d"`, i+1)
				if !strings.Contains(s, want) || strings.Contains(s, "isError") {
					t.Errorf("start event %d: %s", i+1, s)
				}
			}
			settles := h.log.lines(t, engine.EventPTCDispatchSettle)
			sort.Strings(settles) // appended off the program's path, in any order
			if !slices.Equal(settles, tt.wantSettles) {
				t.Errorf("settle events\n%q\nwant\n%q", settles, tt.wantSettles)
			}
		})
	}
}

func TestPendingSettleEventsHoldBackLaterStarts(t *testing.T) {
	h := newSchedEnv(t)
	var (
		mu     sync.Mutex
		bodies int
	)
	h.tool("count", false, func(context.Context, *dsl.Object) (any, error) {
		mu.Lock()
		bodies++
		mu.Unlock()
		return "ok", nil
	})
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
	entered, release := make(chan struct{}, 3), make(chan struct{})
	h.svc.Global().OnDispatchLog(func(_ context.Context, e *engine.DispatchLogEntry, next func() ([]engine.Block, error)) ([]engine.Block, error) {
		entered <- struct{}{}
		_ = await(release)
		return next()
	})
	err := h.run(context.Background(), schedulerOptions{MaxParallel: 1, Log: h.log}, false, func(s *scheduler) {
		var fs []func(context.Context) (any, error)
		for range 3 {
			fs = append(fs, s.Enqueue(call("count")))
		}
		for range 2 {
			if err := await(entered); err != nil {
				t.Error("a settle task never began")
			}
		}
		breather()
		if n := count(); n != 2 {
			t.Errorf("%d bodies ran while two settle tasks were pending, want 2", n)
		}
		release <- struct{}{}
		eventually(t, "the third body", func() bool { return count() == 3 })
		close(release)
		for _, f := range fs {
			if _, err := wait(f); err != nil {
				t.Error(err)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.log.summary(); len(got) != 6 {
		t.Errorf("events %q, want three starts and three settles before the run returned", got)
	}
}

func TestASchedulerNeedsAPositiveMaxParallel(t *testing.T) {
	for _, n := range []int{0, -1} {
		_, err := newScheduler(context.Background(), engine.New(), schedulerOptions{MaxParallel: n})
		if err == nil || err.Error() != "maxParallelSubCalls must be a positive integer" {
			t.Errorf("MaxParallel %d: %v", n, err)
		}
	}
}

func TestAFailingEventLogIsReportedByClose(t *testing.T) {
	h := newSchedEnv(t)
	h.echo()
	h.log.fail = errors.New("disk full")
	var got any
	err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, Log: h.log}, false, func(s *scheduler) {
		got, _ = s.Submit(context.Background(), call("echo", "value", "x"))
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close: %v, want the log's failure", err)
	}
	if got != "echo:x" {
		t.Errorf("value %v, want echo:x", got)
	}
}

// TestSubCallCount: a run's calls are bounded by MaxSubCalls alone, not by
// the engine's nested-call budget of 1,000 under one model call.
func TestSubCallCount(t *testing.T) {
	t.Run("a run makes more calls than the engine's nested-call budget", func(t *testing.T) {
		h := newSchedEnv(t)
		h.echo()
		const n = engine.NestedCallBudget + 200
		var failed []error
		err := h.run(context.Background(), schedulerOptions{MaxParallel: 10}, false, func(s *scheduler) {
			for i := range n {
				if _, err := s.Submit(context.Background(), call("echo", "value", strconv.Itoa(i))); err != nil {
					failed = append(failed, err)
				}
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(failed) > 0 {
			t.Fatalf("%d of %d calls failed, the first: %v", len(failed), n, failed[0])
		}
	})
	t.Run("the call past MaxSubCalls is refused with the cap, undispatched and unlogged", func(t *testing.T) {
		h := newSchedEnv(t)
		h.echo()
		var errs []error
		err := h.run(context.Background(), schedulerOptions{MaxParallel: 10, MaxSubCalls: 2, Log: h.log}, false, func(s *scheduler) {
			for i := range 3 {
				_, err := s.Submit(context.Background(), call("echo", "value", strconv.Itoa(i)))
				errs = append(errs, err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("the calls within the cap failed: %v", errs)
		}
		if want := "run_code sub-call limit reached: a run may make at most 2 tool calls"; errs[2] == nil || errs[2].Error() != want {
			t.Errorf("the third call: %v, want %q", errs[2], want)
		}
		if got := len(h.log.lines(t, engine.EventPTCDispatchStart)); got != 2 {
			t.Errorf("%d start events, want 2", got)
		}
	})
}
