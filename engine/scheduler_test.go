package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// schedWait bounds every wait of these tests: a scheduler that deadlocks
// fails the test instead of hanging it.
const schedWait = 10 * time.Second

// schedHarness is an engine with one agent, an in-memory event log and a
// scRecorder of what happened in which order.
type schedHarness struct {
	t     *testing.T
	svc   *engine.Service
	agent *engine.Agent
	scope *engine.Scope
	log   *scLog
	rec   *scRecorder
}

func newSchedHarness(t *testing.T) *schedHarness {
	t.Helper()
	svc := engine.New()
	agent := engine.NewAgent("main", nil)
	return &schedHarness{t: t, svc: svc, agent: agent, scope: svc.Scope(agent), log: &scLog{}, rec: &scRecorder{}}
}

// tool registers a global tool whose value is a string; parallel says
// whether its classifier declares it concurrency-safe.
func (h *schedHarness) tool(name string, parallel bool, body func(ctx context.Context, run *engine.Run) (any, error)) {
	h.t.Helper()
	def := &engine.Definition{
		Name:        name,
		Description: name + " tool",
		Parameters:  dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{
			Schema: dsl.NewObject(dsl.Member{Key: "type", Value: "string"}),
			Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text(v.(string))}, nil },
		},
		Execute: func(ctx context.Context, _ any, run *engine.Run) (any, error) { return body(ctx, run) },
	}
	if parallel {
		def.IsConcurrencySafe = func(any) bool { return true }
	}
	if _, err := h.svc.Global().Register(def); err != nil {
		h.t.Fatal(err)
	}
}

// batch builds a batch from "id:tool" specs, with empty arguments, logging
// to the harness's log.
func (h *schedHarness) batch(specs ...string) engine.Batch {
	b := engine.Batch{Log: h.log}
	for _, s := range specs {
		id, name, _ := strings.Cut(s, ":")
		b.Calls = append(b.Calls, engine.ToolCallBlock{ID: id, Name: name})
	}
	return b
}

// start runs b on the agent's scope in the background; the returned function
// waits for it.
func (h *schedHarness) start(ctx context.Context, b engine.Batch) func() (*engine.BatchResult, error) {
	type outcome struct {
		r   *engine.BatchResult
		err error
	}
	ch := make(chan outcome, 1)
	go func() {
		r, err := h.scope.Execute(ctx, b)
		ch <- outcome{r, err}
	}()
	return func() (*engine.BatchResult, error) {
		h.t.Helper()
		select {
		case o := <-ch:
			return o.r, o.err
		case <-time.After(schedWait):
			h.t.Fatal("Execute did not return")
			return nil, nil
		}
	}
}

// run runs b and fails the test on an error.
func (h *schedHarness) run(ctx context.Context, b engine.Batch) *engine.BatchResult {
	h.t.Helper()
	r, err := h.start(ctx, b)()
	if err != nil {
		h.t.Fatalf("Execute: %v", err)
	}
	return r
}

// scLog is an in-memory EventLog.
type scLog struct {
	mu     sync.Mutex
	events []engine.Event
	ids    []string
}

func (l *scLog) Append(_ context.Context, e engine.Event) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := "ev" + strconv.Itoa(len(l.events)+1)
	l.events = append(l.events, e)
	l.ids = append(l.ids, id)
	return id, nil
}

// summary returns "call c1", "result c1", … in append order.
func (l *scLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.events))
	for i, e := range l.events {
		id, _ := e.Data.Get("callId")
		out[i] = strings.TrimPrefix(e.Type, "tool/") + " " + id.(string)
	}
	return out
}

// lines returns each event as "<type> <payload JSON>".
func (l *scLog) lines(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.events))
	for i, e := range l.events {
		out[i] = e.Type + " " + schedJSON(t, e.Data)
	}
	return out
}

// scRecorder keeps what happened, in order.
type scRecorder struct {
	mu  sync.Mutex
	log []string
}

func (r *scRecorder) add(s string) {
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
}

func (r *scRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.log...)
}

func (r *scRecorder) index(s string) int {
	for i, x := range r.all() {
		if x == s {
			return i
		}
	}
	return -1
}

// scGates hold bodies until a test releases them.
type scGates struct {
	mu      sync.Mutex
	chans   map[string]chan struct{}
	started chan string
}

func scNewGates() *scGates {
	return &scGates{chans: map[string]chan struct{}{}, started: make(chan string, 4096)}
}

func (g *scGates) ch(id string) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.chans[id]
	if !ok {
		c = make(chan struct{})
		g.chans[id] = c
	}
	return c
}

// end reports that id's body is about to return.
func (g *scGates) end(id string) { close(g.ch("end " + id)) }

// awaitEnded waits for id's body to report its end.
func (g *scGates) awaitEnded(t *testing.T, id string) {
	t.Helper()
	select {
	case <-g.ch("end " + id):
	case <-time.After(schedWait):
		t.Fatalf("%s did not return", id)
	}
}

// hold reports id as started and waits for its release.
func (g *scGates) hold(id string) {
	g.started <- id
	<-g.ch(id)
}

func (g *scGates) release(ids ...string) {
	for _, id := range ids {
		close(g.ch(id))
	}
}

// awaitStarted waits for n bodies to report and returns their ids.
func (g *scGates) awaitStarted(t *testing.T, n int) []string {
	t.Helper()
	var ids []string
	for len(ids) < n {
		select {
		case id := <-g.started:
			ids = append(ids, id)
		case <-time.After(schedWait):
			t.Fatalf("only %d of %d bodies started: %v", len(ids), n, ids)
		}
	}
	return ids
}

func schedJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return string(b)
}

func scResultIDs(r *engine.BatchResult) []string {
	var ids []string
	for _, c := range r.Results {
		ids = append(ids, c.CallID)
	}
	return ids
}

func scText(r *engine.Result) string {
	var b strings.Builder
	for _, blk := range r.Content {
		if tb, ok := blk.(engine.TextBlock); ok {
			b.WriteString(tb.Text)
		}
	}
	return b.String()
}

func scEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func scIDs(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i+1)
	}
	return out
}

// Case 134.
func TestParallelCallsAllStartBeforeAnyIsReleased(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		g.hold(run.CallID())
		return "done " + run.CallID(), nil
	})
	wait := h.start(context.Background(), h.batch("c1:read", "c2:read", "c3:read"))
	started := g.awaitStarted(t, 3)
	g.release("c1", "c2", "c3")
	r, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(started) != 3 {
		t.Fatalf("started %v", started)
	}
	if got := scResultIDs(r); !scEqual(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("results %v", got)
	}
	for _, c := range r.Results {
		if c.Result.IsError || scText(c.Result) != "done "+c.CallID {
			t.Errorf("%s: %s", c.CallID, schedJSON(t, c.Result.JSON()))
		}
	}
}

// Case 135, and the classifier's role in grouping.
func TestExclusiveCallsAreBarriers(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name  string
		calls []string
		want  []string
	}{
		{
			name:  "a write between two reads splits the step into three groups",
			calls: []string{"r1:read", "w:write", "r3:read"},
			want:  []string{"r1 start", "r1 end", "w start", "w end", "r3 start", "r3 end"},
		},
		{
			name:  "consecutive writes run one at a time",
			calls: []string{"w1:write", "w2:write"},
			want:  []string{"w1 start", "w1 end", "w2 start", "w2 end"},
		},
		{
			name:  "an unknown tool is exclusive and still yields its result in place",
			calls: []string{"r1:read", "x:nope", "r3:read"},
			want:  []string{"r1 start", "r1 end", "r3 start", "r3 end"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newSchedHarness(t)
			body := func(_ context.Context, run *engine.Run) (any, error) {
				h.rec.add(run.CallID() + " start")
				runtime.Gosched()
				h.rec.add(run.CallID() + " end")
				return "ok", nil
			}
			h.tool("read", true, body)
			h.tool("write", false, body)
			r := h.run(context.Background(), h.batch(tc.calls...))
			if got := h.rec.all(); !scEqual(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
			if len(r.Results) != len(tc.calls) {
				t.Fatalf("%d results", len(r.Results))
			}
		})
	}
}

func TestAToolReplacedByAnExclusiveVariantStopsReplenishment(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	body := func(_ context.Context, run *engine.Run) (any, error) {
		h.rec.add(run.CallID() + " start")
		g.hold(run.CallID())
		h.rec.add(run.CallID() + " end")
		return "ok", nil
	}
	def := func(parallel bool) *engine.Definition {
		d := &engine.Definition{
			Name: "t", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output: engine.Output{
				Schema: dsl.NewObject(),
				Render: func(_, v any) ([]engine.Block, error) { return []engine.Block{engine.Text("ok")}, nil },
			},
			Execute: func(ctx context.Context, _ any, run *engine.Run) (any, error) { return body(ctx, run) },
		}
		if parallel {
			d.IsConcurrencySafe = func(any) bool { return true }
		}
		return d
	}
	if _, err := h.svc.Global().Register(def(true)); err != nil {
		t.Fatal(err)
	}
	// While b is prepared, the agent's scope shadows the tool with an
	// exclusive variant (a shadow, so that a's body never finds it missing).
	h.svc.Global().OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		if exec.CallID() == "b" {
			if _, err := h.scope.Register(def(false)); err != nil {
				return engine.PreDecision{}, err
			}
		}
		return next()
	})
	wait := h.start(context.Background(), h.batch("a:t", "b:t", "c:t", "d:t"))
	g.awaitStarted(t, 2)
	g.release("a", "b")
	g.awaitStarted(t, 1)
	g.release("c")
	g.awaitStarted(t, 1)
	g.release("d")
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
	rec := h.rec.all()
	if h.rec.index("c start") < h.rec.index("a end") || h.rec.index("c start") < h.rec.index("b end") ||
		h.rec.index("d start") < h.rec.index("c end") {
		t.Fatalf("c and d did not wait for the calls before them: %v", rec)
	}
}

// Case 138.
func TestALaterCallSettlingFirstWaitsForTheEarlierCommit(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		g.hold(run.CallID())
		h.rec.add(run.CallID() + " body returned")
		return "v" + run.CallID(), nil
	})
	h.svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
		h.rec.add("result " + exec.CallID())
		return nil
	})
	returned := make(chan struct{})
	h.svc.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
		r := next(ctx)
		if exec.CallID() == "c2" {
			close(returned)
		}
		return r, nil
	})
	wait := h.start(context.Background(), h.batch("c1:read", "c2:read"))
	g.awaitStarted(t, 2)
	g.release("c2")
	select {
	case <-returned:
	case <-time.After(schedWait):
		t.Fatal("c2 did not settle")
	}
	g.release("c1")
	r, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c2 body returned", "c1 body returned", "result c1", "result c2"}
	if got := h.rec.all(); !scEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if got, want := h.log.summary(), []string{"call c1", "call c2", "result c1", "result c2"}; !scEqual(got, want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	if got := scResultIDs(r); !scEqual(got, []string{"c1", "c2"}) {
		t.Fatalf("results %v", got)
	}
	if scText(r.Results[0].Result) != "vc1" || scText(r.Results[1].Result) != "vc2" {
		t.Fatalf("results %s", schedJSON(t, []any{r.Results[0].Result.JSON(), r.Results[1].Result.JSON()}))
	}
}

// scCapProbe counts bodies in flight and checks, in pre-execute, that a call
// starts only when enough bodies have ended for it to fit under the cap.
type scCapProbe struct {
	inflight, max, ended atomic.Int64
	violations           atomic.Int64
}

func (p *scCapProbe) enter() {
	n := p.inflight.Add(1)
	for {
		m := p.max.Load()
		if n <= m || p.max.CompareAndSwap(m, n) {
			return
		}
	}
}

func (p *scCapProbe) leave() {
	p.inflight.Add(-1)
	p.ended.Add(1)
}

// install adds the pre-execute check for calls named c1, c2, … that are all
// parallel and all dispatched: call j may start only once j-cap bodies ended.
func (p *scCapProbe) install(s *engine.Scope, limit int) {
	s.OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		j, _ := strconv.Atoi(strings.TrimPrefix(exec.CallID(), "c"))
		if p.ended.Load() < int64(j-limit) {
			p.violations.Add(1)
		}
		return next()
	})
}

// Case 139.
func TestTheCapBoundsBodiesInFlight(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("with cap 2 and four calls the third starts only after the first settles", func(t *testing.T) {
		h := newSchedHarness(t)
		g := scNewGates()
		h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
			g.hold(run.CallID())
			return "ok", nil
		})
		b := h.batch("c1:read", "c2:read", "c3:read", "c4:read")
		b.MaxParallelToolCalls = 2
		wait := h.start(context.Background(), b)
		if got := g.awaitStarted(t, 2); !scEqual(got, []string{"c1", "c2"}) && !scEqual(got, []string{"c2", "c1"}) {
			t.Fatalf("started %v", got)
		}
		if got, want := h.log.summary(), []string{"call c1", "call c2"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
		g.release("c1")
		if got := g.awaitStarted(t, 1); got[0] != "c3" {
			t.Fatalf("started %v after c1", got)
		}
		if got, want := h.log.summary(), []string{"call c1", "call c2", "result c1", "call c3"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
		g.release("c2", "c3")
		g.awaitStarted(t, 1)
		g.release("c4")
		r, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if got := scResultIDs(r); !scEqual(got, scIDs("c", 4)) {
			t.Fatalf("results %v", got)
		}
	})

	t.Run("with cap 1 calls run strictly one after another", func(t *testing.T) {
		h := newSchedHarness(t)
		exec, err := engine.NewNativeExecutor(h.svc, 1)
		if err != nil {
			t.Fatal(err)
		}
		h.scope.SetExecutor(exec)
		h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
			h.rec.add(run.CallID() + " start")
			runtime.Gosched()
			h.rec.add(run.CallID() + " end")
			return "ok", nil
		})
		h.run(context.Background(), h.batch("c1:read", "c2:read", "c3:read"))
		want := []string{"c1 start", "c1 end", "c2 start", "c2 end", "c3 start", "c3 end"}
		if got := h.rec.all(); !scEqual(got, want) {
			t.Fatalf("order %v, want %v", got, want)
		}
	})

	caps := []struct {
		name       string
		executor   int // 0: the default executor
		batch      int
		wantCap    int
		totalCalls int
	}{
		{name: "the default executor's cap is 10", wantCap: 10, totalCalls: 25},
		{name: "a configured executor cap applies", executor: 3, wantCap: 3, totalCalls: 8},
		{name: "a batch cap overrides the executor's", executor: 1, batch: 4, wantCap: 4, totalCalls: 9},
		{name: "a batch cap overrides the default", batch: 12, wantCap: 12, totalCalls: 30},
	}
	for _, tc := range caps {
		t.Run(tc.name, func(t *testing.T) {
			h := newSchedHarness(t)
			if tc.executor > 0 {
				exec, err := engine.NewNativeExecutor(h.svc, tc.executor)
				if err != nil {
					t.Fatal(err)
				}
				h.scope.SetExecutor(exec)
			}
			var p scCapProbe
			p.install(h.scope, tc.wantCap)
			hold := make(chan struct{})
			started := make(chan struct{}, tc.totalCalls)
			h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
				p.enter()
				defer p.leave()
				started <- struct{}{}
				<-hold
				return "ok", nil
			})
			specs := make([]string, tc.totalCalls)
			for i := range specs {
				specs[i] = fmt.Sprintf("c%d:read", i+1)
			}
			b := h.batch(specs...)
			b.MaxParallelToolCalls = tc.batch
			wait := h.start(context.Background(), b)
			for range tc.wantCap {
				select {
				case <-started:
				case <-time.After(schedWait):
					t.Fatal("fewer bodies than the cap started")
				}
			}
			close(hold)
			if _, err := wait(); err != nil {
				t.Fatal(err)
			}
			if got := p.max.Load(); got != int64(tc.wantCap) {
				t.Fatalf("at most %d bodies in flight, want %d", got, tc.wantCap)
			}
			if v := p.violations.Load(); v != 0 {
				t.Fatalf("%d calls started over the cap", v)
			}
		})
	}

	t.Run("a non-positive executor cap is rejected with the spec's message", func(t *testing.T) {
		for _, n := range []int{0, -1, -10} {
			exec, err := engine.NewNativeExecutor(engine.New(), n)
			if exec != nil || err == nil || err.Error() != "maxParallelToolCalls must be a positive integer" {
				t.Errorf("cap %d: %v, %v", n, exec, err)
			}
			ok, _ := engine.NewNativeExecutor(engine.New(), 1)
			if err := ok.SetMaxParallel(n); err == nil || err.Error() != "maxParallelToolCalls must be a positive integer" {
				t.Errorf("SetMaxParallel(%d): %v", n, err)
			}
		}
	})

	t.Run("a negative batch cap is rejected before any call starts", func(t *testing.T) {
		h := newSchedHarness(t)
		var ran atomic.Int64
		h.tool("read", true, func(context.Context, *engine.Run) (any, error) { ran.Add(1); return "ok", nil })
		b := h.batch("c1:read")
		b.MaxParallelToolCalls = -2
		r, err := h.start(context.Background(), b)()
		if r != nil || err == nil || err.Error() != "maxParallelToolCalls must be a positive integer" {
			t.Fatalf("%v, %v", r, err)
		}
		if ran.Load() != 0 || len(h.log.summary()) != 0 {
			t.Fatal("the batch ran")
		}
	})

	t.Run("a changed executor cap applies from the next group", func(t *testing.T) {
		h := newSchedHarness(t)
		exec, _ := engine.NewNativeExecutor(h.svc, 1)
		h.scope.SetExecutor(exec)
		if exec.MaxParallel() != 1 {
			t.Fatal("MaxParallel")
		}
		var p scCapProbe
		hold := make(chan struct{})
		started := make(chan struct{}, 10)
		h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
			p.enter()
			defer p.leave()
			started <- struct{}{}
			<-hold
			return "ok", nil
		})
		h.tool("write", false, func(context.Context, *engine.Run) (any, error) {
			if err := exec.SetMaxParallel(3); err != nil {
				return nil, err
			}
			return "ok", nil
		})
		// The write raises the cap; the reads after it form a new group.
		wait := h.start(context.Background(), h.batch("w:write", "c1:read", "c2:read", "c3:read"))
		for range 3 {
			select {
			case <-started:
			case <-time.After(schedWait):
				t.Fatal("the new cap was not applied")
			}
		}
		close(hold)
		if _, err := wait(); err != nil {
			t.Fatal(err)
		}
		if p.max.Load() != 3 {
			t.Fatalf("max in flight %d", p.max.Load())
		}
	})
}

func TestAThousandCallsWithCapTenStayUnderTheCapAndCommitInModelOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	const n, limit = 1000, 10
	h := newSchedHarness(t)
	var p scCapProbe
	p.install(h.scope, limit)
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		p.enter()
		defer p.leave()
		for range 3 {
			runtime.Gosched()
		}
		return run.CallID(), nil
	})
	var committed []string
	var mu sync.Mutex
	h.svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
		mu.Lock()
		committed = append(committed, exec.CallID())
		mu.Unlock()
		return nil
	})
	specs := make([]string, n)
	for i := range specs {
		specs[i] = fmt.Sprintf("c%d:read", i+1)
	}
	b := h.batch(specs...)
	b.MaxParallelToolCalls = limit
	r := h.run(context.Background(), b)
	if got := p.max.Load(); got > limit {
		t.Fatalf("%d bodies in flight, cap %d", got, limit)
	}
	if v := p.violations.Load(); v != 0 {
		t.Fatalf("%d calls started over the cap", v)
	}
	want := scIDs("c", n)
	if !scEqual(committed, want) {
		t.Fatal("tools/result observers did not see model order")
	}
	if !scEqual(scResultIDs(r), want) {
		t.Fatal("results are not in input order")
	}
	var results []string
	for _, s := range h.log.summary() {
		if id, ok := strings.CutPrefix(s, "result "); ok {
			results = append(results, id)
		}
	}
	if !scEqual(results, want) {
		t.Fatal("tool/result events are not in model order")
	}
	for i, c := range r.Results {
		if scText(c.Result) != want[i] {
			t.Fatalf("%s has %q", c.CallID, scText(c.Result))
		}
	}
}

// Case 140.
func TestPreAndPostListenersObserveModelOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		g.hold(run.CallID())
		h.rec.add("end " + run.CallID())
		g.end(run.CallID())
		return "ok", nil
	})
	h.svc.Global().OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		h.rec.add("pre " + exec.CallID())
		return next()
	})
	h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		h.rec.add("post " + exec.CallID())
		return next()
	})
	wait := h.start(context.Background(), h.batch("c1:read", "c2:read", "c3:read"))
	g.awaitStarted(t, 3)
	// Release 3, 2, 1, each after the one before has returned.
	for _, id := range []string{"c3", "c2", "c1"} {
		g.release(id)
		g.awaitEnded(t, id)
	}
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
	var pre, post []string
	for _, s := range h.rec.all() {
		switch {
		case strings.HasPrefix(s, "pre "):
			pre = append(pre, s[4:])
		case strings.HasPrefix(s, "post "):
			post = append(post, s[5:])
		}
	}
	want := []string{"c1", "c2", "c3"}
	if !scEqual(pre, want) || !scEqual(post, want) {
		t.Fatalf("pre %v post %v", pre, post)
	}
	if h.rec.index("post c1") < h.rec.index("end c1") {
		t.Fatal("post-execute ran before the body settled")
	}
}

// Case 142.
func TestCallsSettledInPrepareNeverOccupyASlot(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	var ran []string
	var mu sync.Mutex
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		mu.Lock()
		ran = append(ran, run.CallID())
		mu.Unlock()
		return "ran", nil
	})
	h.svc.Global().OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
		switch exec.CallID() {
		case "c2":
			return engine.Deny("blocked by policy"), nil
		case "c3":
			return engine.PreDecision{}, errors.New("pre exploded")
		}
		return next()
	})
	var post []string
	h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		post = append(post, exec.CallID())
		return next()
	})
	b := h.batch("c1:read", "c2:read", "c3:read")
	b.MaxParallelToolCalls = 1
	r := h.run(context.Background(), b)
	if !scEqual(ran, []string{"c1"}) {
		t.Fatalf("ran %v", ran)
	}
	if !scEqual(post, []string{"c1", "c2"}) {
		t.Fatalf("post saw %v", post)
	}
	if got := scResultIDs(r); !scEqual(got, []string{"c1", "c2", "c3"}) {
		t.Fatalf("results %v", got)
	}
	wantText := []string{"ran", "Error: blocked by policy", "Error: pre exploded"}
	for i, c := range r.Results {
		if got := scText(c.Result); got != wantText[i] || c.Result.IsError != (i > 0) {
			t.Errorf("%s: %s", c.CallID, schedJSON(t, c.Result.JSON()))
		}
	}
}

// Case 143.
func TestAbortBeforeAGroupStartsSkipsEveryCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	const abortedJSON = `{"isError":true,"error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},"content":[{"type":"text","text":"Error: tool call aborted before dispatch"}]}`

	t.Run("an already aborted step starts no call and runs no listener", func(t *testing.T) {
		h := newSchedHarness(t)
		var bodies, finalized atomic.Int64
		h.tool("read", true, func(context.Context, *engine.Run) (any, error) { bodies.Add(1); return "ok", nil })
		fin := &engine.Definition{
			Name: "fin", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
			Output:          engine.Output{Schema: dsl.NewObject(), Render: func(_, _ any) ([]engine.Block, error) { return nil, nil }},
			Execute:         func(context.Context, any, *engine.Run) (any, error) { bodies.Add(1); return "ok", nil },
			FinalizeContent: func(*engine.Execution, *engine.Result) ([]engine.Block, error) { finalized.Add(1); return nil, nil },
		}
		if _, err := h.svc.Global().Register(fin); err != nil {
			t.Fatal(err)
		}
		h.svc.Global().OnPreExecute(func(ctx context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			h.rec.add("pre " + exec.CallID())
			return next()
		})
		h.svc.Global().OnExecute(func(ctx context.Context, exec *engine.Execution, next func(context.Context) *engine.Result) (*engine.Result, error) {
			h.rec.add("execute " + exec.CallID())
			return next(ctx), nil
		})
		h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			h.rec.add("post " + exec.CallID())
			return next()
		})
		h.svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
			h.rec.add("result " + exec.CallID())
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r := h.run(ctx, h.batch("c1:read", "c2:fin"))
		if bodies.Load() != 0 || finalized.Load() != 0 || len(h.rec.all()) != 0 {
			t.Fatalf("the pipeline ran: bodies %d, finalizer %d, listeners %v", bodies.Load(), finalized.Load(), h.rec.all())
		}
		if got, want := h.log.summary(), []string{"call c1", "result c1", "call c2", "result c2"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
		for _, c := range r.Results {
			if got := schedJSON(t, c.Result.JSON()); got != abortedJSON {
				t.Errorf("%s: %s", c.CallID, got)
			}
		}
		want := []string{
			`tool/call {"callId":"c1","name":"read","arguments":{}}`,
			`tool/result {"callId":"c1","content":[{"type":"text","text":"Error: tool call aborted before dispatch"}],"isError":true,"error":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"},"callEvent":"ev1"}`,
			`tool/call {"callId":"c2","name":"fin","arguments":{}}`,
			`tool/result {"callId":"c2","content":[{"type":"text","text":"Error: tool call aborted before dispatch"}],"isError":true,"error":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"},"callEvent":"ev3"}`,
		}
		if got := h.log.lines(t); !scEqual(got, want) {
			t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})

	t.Run("an abort during the first call's pre-execute skips the rest", func(t *testing.T) {
		h := newSchedHarness(t)
		var bodies atomic.Int64
		h.tool("read", true, func(context.Context, *engine.Run) (any, error) { bodies.Add(1); return "ok", nil })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		h.svc.Global().OnPreExecute(func(_ context.Context, exec *engine.Execution, next func() (engine.PreDecision, error)) (engine.PreDecision, error) {
			h.rec.add("pre " + exec.CallID())
			if exec.CallID() == "c1" {
				cancel()
			}
			return next()
		})
		h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
			h.rec.add("post " + exec.CallID())
			return next()
		})
		h.svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
			h.rec.add("result " + exec.CallID())
			return nil
		})
		r := h.run(ctx, h.batch("c1:read", "c2:read"))
		if bodies.Load() != 0 {
			t.Fatal("a body ran")
		}
		if got, want := h.rec.all(), []string{"pre c1", "post c1", "result c1"}; !scEqual(got, want) {
			t.Fatalf("listeners saw %v, want %v", got, want)
		}
		for _, c := range r.Results {
			if got := schedJSON(t, c.Result.JSON()); got != abortedJSON {
				t.Errorf("%s: %s", c.CallID, got)
			}
		}
		if got, want := h.log.summary(), []string{"call c1", "result c1", "call c2", "result c2"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
	})
}

// Case 145.
func TestAbortWhileBodiesRunDrainsStartedCallsAndSkipsTheRest(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("a later exclusive call never runs and gets its call and result events", func(t *testing.T) {
		h := newSchedHarness(t)
		g := scNewGates()
		h.tool("late", true, func(ctx context.Context, run *engine.Run) (any, error) {
			g.started <- run.CallID()
			<-ctx.Done()
			run.DeferContext(engine.NewUserMessage([]engine.Block{engine.Text("parked")}, nil))
			return "finished anyway", nil
		})
		h.tool("fails", true, func(ctx context.Context, run *engine.Run) (any, error) {
			g.started <- run.CallID()
			<-ctx.Done()
			return nil, engine.NewError("HarnessError", "TOOL_FAILURE", "saw the abort")
		})
		var writes atomic.Int64
		h.tool("write", false, func(context.Context, *engine.Run) (any, error) { writes.Add(1); return "ok", nil })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		wait := h.start(ctx, h.batch("p1:late", "p2:fails", "w:write"))
		g.awaitStarted(t, 2)
		cancel()
		r, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if writes.Load() != 0 {
			t.Fatal("the exclusive call ran")
		}
		codes := []string{"ABORTED", "TOOL_FAILURE", "ABORTED_BEFORE_DISPATCH"}
		for i, c := range r.Results {
			if !c.Result.IsError || c.Result.Error.Info == nil || c.Result.Error.Info.Code != codes[i] {
				t.Errorf("%s: %s", c.CallID, schedJSON(t, c.Result.JSON()))
			}
		}
		if got, want := h.log.summary(), []string{"call p1", "call p2", "result p1", "result p2", "call w", "result w"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
		if len(r.AdditionalContexts) != 1 || scText(&engine.Result{Content: r.AdditionalContexts[0].Content}) != "parked" {
			t.Fatalf("contexts %v", r.AdditionalContexts)
		}
	})

	t.Run("unstarted calls of the running group are skipped", func(t *testing.T) {
		h := newSchedHarness(t)
		var bodies atomic.Int64
		started := make(chan struct{})
		h.tool("read", true, func(ctx context.Context, run *engine.Run) (any, error) {
			if bodies.Add(1) == 1 {
				close(started)
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		b := h.batch("c1:read", "c2:read", "c3:read")
		b.MaxParallelToolCalls = 1
		wait := h.start(ctx, b)
		<-started
		cancel()
		r, err := wait()
		if err != nil {
			t.Fatal(err)
		}
		if bodies.Load() != 1 {
			t.Fatalf("%d bodies ran", bodies.Load())
		}
		if got := scText(r.Results[0].Result); got != "Error: context canceled" {
			t.Errorf("c1: %q", got)
		}
		for _, c := range r.Results[1:] {
			if c.Result.Error.Info == nil || c.Result.Error.Info.Code != "ABORTED_BEFORE_DISPATCH" {
				t.Errorf("%s: %s", c.CallID, schedJSON(t, c.Result.JSON()))
			}
		}
		if got, want := h.log.summary(), []string{"call c1", "result c1", "call c2", "result c2", "call c3", "result c3"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
	})
}

// §5.4.
func TestContextsAreAcceptedInCommitOrder(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		g.hold(run.CallID())
		run.DeferContext(engine.NewUserMessage([]engine.Block{engine.Text("body " + run.CallID())}, nil))
		g.end(run.CallID())
		return "ok", nil
	})
	h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
		return engine.Accept(engine.NewUserMessage([]engine.Block{engine.Text("post " + exec.CallID())}, nil)), nil
	})
	wait := h.start(context.Background(), h.batch("c1:read", "c2:read", "c3:read"))
	g.awaitStarted(t, 3)
	for _, id := range []string{"c3", "c2", "c1"} {
		g.release(id)
		g.awaitEnded(t, id)
	}
	r, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range r.AdditionalContexts {
		got = append(got, scText(&engine.Result{Content: m.Content}))
	}
	want := []string{"body c1", "post c1", "body c2", "post c2", "body c3", "post c3"}
	if !scEqual(got, want) {
		t.Fatalf("contexts %v, want %v", got, want)
	}
}

// Case 148 (the flag; the agent loop is out of scope).
func TestConcludedIsTrueIffACommittedResultConcludesTheTurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	tests := []struct {
		name  string
		calls []string
		block bool // post-execute blocks the concluding call
		want  bool
	}{
		{name: "a concluding success concludes the batch", calls: []string{"c1:plain", "c2:conclude"}, want: true},
		{name: "a batch without one does not conclude", calls: []string{"c1:plain", "c2:plain"}, want: false},
		{name: "a concluding call that fails does not conclude", calls: []string{"c1:concludeThenFail"}, want: false},
		{name: "a concluding success blocked by post-execute does not conclude", calls: []string{"c1:conclude"}, block: true, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newSchedHarness(t)
			h.tool("plain", true, func(context.Context, *engine.Run) (any, error) { return "ok", nil })
			h.tool("conclude", true, func(_ context.Context, run *engine.Run) (any, error) {
				run.ConcludeTurn()
				return "done", nil
			})
			h.tool("concludeThenFail", true, func(_ context.Context, run *engine.Run) (any, error) {
				run.ConcludeTurn()
				return nil, errors.New("failed")
			})
			if tc.block {
				h.svc.Global().OnPostExecute(func(ctx context.Context, exec *engine.Execution, r *engine.Result, next func() (engine.PostDecision, error)) (engine.PostDecision, error) {
					return engine.BlockResult([]engine.Block{engine.Text("no")}), nil
				})
			}
			r := h.run(context.Background(), h.batch(tc.calls...))
			if r.Concluded != tc.want {
				t.Fatalf("Concluded = %v", r.Concluded)
			}
			var results int
			for _, s := range h.log.summary() {
				if strings.HasPrefix(s, "result ") {
					results++
				}
			}
			if results != len(tc.calls) {
				t.Fatalf("%d tool/result events", results)
			}
		})
	}
}

func TestArgumentsAreParsedPerCall(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	var mu sync.Mutex
	seen := map[string]string{}
	def := &engine.Definition{
		Name: "echo", Parameters: dsl.NewObject(dsl.Member{Key: "type", Value: "object"}),
		Output: engine.Output{Schema: dsl.NewObject(), Render: func(_, v any) ([]engine.Block, error) { return nil, nil }},
		Execute: func(_ context.Context, args any, run *engine.Run) (any, error) {
			b, _ := dsl.Marshal(args)
			mu.Lock()
			seen[run.CallID()] = string(b)
			mu.Unlock()
			if run.Agent() != h.agent {
				return nil, errors.New("wrong agent")
			}
			return nil, nil
		},
		IsConcurrencySafe: func(any) bool { return true },
	}
	if _, err := h.svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	b := engine.Batch{Log: h.log, Calls: []engine.ToolCallBlock{
		{ID: "empty", Name: "echo", Arguments: ""},
		{ID: "json", Name: "echo", Arguments: `{"text":"hi","n":[1,2]}`},
		{ID: "bad", Name: "echo", Arguments: `{not json`},
	}}
	r := h.run(context.Background(), b)
	want := map[string]string{"empty": `{}`, "json": `{"text":"hi","n":[1,2]}`, "bad": `"{not json"`}
	for id, w := range want {
		if seen[id] != w {
			t.Errorf("%s: body saw %s, want %s", id, seen[id], w)
		}
	}
	for _, c := range r.Results {
		if c.Result.IsError {
			t.Errorf("%s: %s", c.CallID, schedJSON(t, c.Result.JSON()))
		}
	}
	lines := h.log.lines(t)
	wantCalls := []string{
		`tool/call {"callId":"empty","name":"echo","arguments":{}}`,
		`tool/call {"callId":"json","name":"echo","arguments":{"text":"hi","n":[1,2]}}`,
		`tool/call {"callId":"bad","name":"echo","arguments":"{not json"}`,
	}
	for _, w := range wantCalls {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Errorf("missing %s in\n%s", w, strings.Join(lines, "\n"))
		}
	}
}

// scFailingLog fails (or panics) on the n-th append of a given type.
type scFailingLog struct {
	scLog
	typ    string
	nth    int
	panics bool
	seen   int
}

func (l *scFailingLog) Append(ctx context.Context, e engine.Event) (string, error) {
	l.mu.Lock()
	if e.Type == l.typ {
		l.seen++
		if l.seen == l.nth {
			l.mu.Unlock()
			if l.panics {
				panic("log exploded")
			}
			return "", errors.New("disk full")
		}
	}
	l.mu.Unlock()
	return l.scLog.Append(ctx, e)
}

func TestAnEventLogFailureIsABatchError(t *testing.T) {
	defer goleak.VerifyNone(t)

	t.Run("a failed tool/result append keeps the commits before it and awaits bodies in flight", func(t *testing.T) {
		h := newSchedHarness(t)
		g := scNewGates()
		var ended atomic.Bool
		h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
			if run.CallID() == "c3" {
				g.hold("c3")
				ended.Store(true)
			}
			if run.CallID() == "c2" {
				run.DeferContext(engine.NewUserMessage([]engine.Block{engine.Text("from c2")}, nil))
			}
			return "ok", nil
		})
		log := &scFailingLog{typ: engine.EventToolResult, nth: 3}
		b := h.batch("c1:read", "c2:read", "c3:read", "c4:read", "c5:read")
		b.Log = log
		b.MaxParallelToolCalls = 1
		// c1 and c2 commit; the append of c3's tool/result fails.
		wait := h.start(context.Background(), b)
		g.awaitStarted(t, 1)
		g.release("c3")
		r, err := wait()
		if r != nil {
			t.Fatal("a result with the error")
		}
		var be *engine.BatchError
		if !errors.As(err, &be) {
			t.Fatalf("err %T %v", err, err)
		}
		if !strings.Contains(err.Error(), "disk full") || !strings.HasPrefix(err.Error(), "tool batch execution failed: ") {
			t.Fatalf("err %q", err)
		}
		if !ended.Load() {
			t.Fatal("returned before the body in flight ended")
		}
		if got := scResultIDs(be.Committed); !scEqual(got, []string{"c1", "c2"}) {
			t.Fatalf("committed %v", got)
		}
		if len(be.Committed.AdditionalContexts) != 1 {
			t.Fatalf("contexts %v", be.Committed.AdditionalContexts)
		}
		if got, want := log.summary(), []string{"call c1", "result c1", "call c2", "result c2", "call c3"}; !scEqual(got, want) {
			t.Fatalf("log %v, want %v", got, want)
		}
	})

	t.Run("a failed tool/call append starts nothing more and awaits the bodies in flight", func(t *testing.T) {
		h := newSchedHarness(t)
		g := scNewGates()
		var ended atomic.Int64
		h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
			g.hold(run.CallID())
			ended.Add(1)
			return "ok", nil
		})
		log := &scFailingLog{typ: engine.EventToolCall, nth: 3}
		b := h.batch("c1:read", "c2:read", "c3:read", "c4:read")
		b.Log = log
		wait := h.start(context.Background(), b)
		g.awaitStarted(t, 2)
		g.release("c1", "c2")
		_, err := wait()
		var be *engine.BatchError
		if !errors.As(err, &be) {
			t.Fatalf("err %v", err)
		}
		if ended.Load() != 2 {
			t.Fatalf("%d bodies ended before Execute returned", ended.Load())
		}
		if len(be.Committed.Results) != 0 {
			t.Fatalf("committed %v", scResultIDs(be.Committed))
		}
	})

	t.Run("a panicking log is an internal failure too", func(t *testing.T) {
		h := newSchedHarness(t)
		h.tool("read", true, func(context.Context, *engine.Run) (any, error) { return "ok", nil })
		log := &scFailingLog{typ: engine.EventToolResult, nth: 1, panics: true}
		b := h.batch("c1:read")
		b.Log = log
		_, err := h.start(context.Background(), b)()
		var be *engine.BatchError
		if !errors.As(err, &be) || !strings.Contains(err.Error(), "log exploded") {
			t.Fatalf("err %v", err)
		}
		if be.Name() != "ToolBatchExecutionError" || be.Code() != "UNKNOWN" {
			t.Fatalf("%s %s", be.Name(), be.Code())
		}
	})
}

func TestEventsNeedBothALogAndAnAgent(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	h.tool("read", true, func(context.Context, *engine.Run) (any, error) { return "ok", nil })
	r, err := h.svc.Global().Execute(context.Background(), h.batch("c1:read"))
	if err != nil || len(r.Results) != 1 || r.Results[0].Result.IsError {
		t.Fatalf("%v %v", r, err)
	}
	if n := len(h.log.summary()); n != 0 {
		t.Fatalf("%d events without an agent", n)
	}
}

func TestAnEmptyBatchReturnsNoResults(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	r := h.run(context.Background(), h.batch())
	if len(r.Results) != 0 || r.Concluded || r.AdditionalContexts != nil {
		t.Fatalf("%+v", r)
	}
}

func TestBatchResultJSON(t *testing.T) {
	svc := engine.New()
	cfMustRegister(t, svc.Global(), cfEchoDef("echo"))
	br, err := svc.Global().Execute(context.Background(), engine.Batch{Calls: []engine.ToolCallBlock{{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfJSON(t, br.JSON()); got != `{"results":[{"callId":"c1","result":{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}}],"additionalContexts":[],"concluded":false}` {
		t.Errorf("got %s", got)
	}
}
