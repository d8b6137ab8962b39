package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/dsh-go/dsh/dsl"
)

// NativeExecutor runs batches in the engine's own scheduler (§5).
type NativeExecutor struct {
	svc *Service

	mu          sync.Mutex // guards maxParallel
	maxParallel int
}

// NewNativeExecutor returns a native executor for svc with a cap on bodies in
// flight (maxParallelToolCalls), which must be a positive integer.
func NewNativeExecutor(svc *Service, maxParallel int) (*NativeExecutor, error) {
	if maxParallel <= 0 {
		return nil, errInvalidCap
	}
	return &NativeExecutor{svc: svc, maxParallel: maxParallel}, nil
}

// MaxParallel returns the executor's configured cap on bodies in flight.
func (e *NativeExecutor) MaxParallel() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.maxParallel
}

// SetMaxParallel changes the executor's cap; n must be a positive integer.
// Running batches read it at their next group start.
func (e *NativeExecutor) SetMaxParallel(n int) error {
	if n <= 0 {
		return errInvalidCap
	}
	e.mu.Lock()
	e.maxParallel = n
	e.mu.Unlock()
	return nil
}

// Describe returns the definitions' schemas and names.
func (e *NativeExecutor) Describe(defs []*Definition) (Description, error) {
	var d Description
	for _, def := range defs {
		s, err := projectSchema(def)
		if err != nil {
			return Description{}, err
		}
		d.Schemas = append(d.Schemas, s)
		d.Names = append(d.Names, def.Name)
	}
	return d, nil
}

// Execute runs one assistant step's tool calls (§5) and returns one result
// per call, in input order.
//
// Each call gets its own input: callId = the block's id, its name, its
// arguments parsed as §5.1 says, the batch's agent and tool set, and ctx as
// the step signal. Starting at the first call not yet run, a call the
// classifier calls exclusive runs alone; a parallel one opens a rolling pool
// over the calls after it, each classified again when it would start; the
// first that is no longer parallel stops the pool from starting more and
// heads the next group once the pool has drained. At most the cap's worth of
// bodies are in flight (Batch.MaxParallelToolCalls when positive, else the
// executor's cap; read at each group start); a call that prepare settles
// (denied, failed, cancelled) never holds a slot.
//
// Creation and prepare (pre-execute, approval, guards) run one call at a
// time in model order on the calling goroutine; bodies run on their own
// goroutines. Calls are committed in model order as soon as every earlier
// call is: post-execute (or finish) runs at commit time, so post-execute
// listeners and tools/result observers see model order whatever order bodies
// settle in; then the tool/result event is appended, the result's contexts
// are accepted into BatchResult.AdditionalContexts and its ConcludesTurn is
// or-ed into Concluded.
//
// With b.Log and b.Agent set, durable events are appended: tool/call when a
// call starts (never up front), tool/result when it commits (see
// [ToolCallEvent] and [ToolResultEvent]). They are appended with ctx's values
// but without its cancellation: an aborted step still logs its events.
//
// Once ctx is done no call starts: started calls are drained and committed
// (a body that succeeds after the abort commits as ABORTED), and every call
// not started gets the canonical ABORTED_BEFORE_DISPATCH failure as a
// synthetic skip: a tool/call and tool/result pair, without the pipeline (no
// listener, observer or finalizer runs).
//
// A negative b.MaxParallelToolCalls is an error (maxParallelToolCalls must be
// a positive integer) before anything runs. An internal failure — an event
// log Append that fails or panics, or a panic escaping one of the pipeline's
// own staged operations (tool and listener panics are results, not this) —
// stops the batch: no call starts, the bodies in flight are awaited (a started
// body is never abandoned) but not committed, and Execute returns a
// *BatchError with the first failure. Its Committed holds the results
// committed before it, a prefix of the batch in model order (a call counts as
// committed once its tool/result is appended), with their contexts; no
// synthetic result is made up. No goroutine Execute starts outlives it.
func (e *NativeExecutor) Execute(ctx context.Context, b Batch) (*BatchResult, error) {
	if b.MaxParallelToolCalls < 0 {
		return nil, errInvalidCap
	}
	x := &batchRun{
		e: e, svc: e.svc, ctx: ctx, logCtx: context.WithoutCancel(ctx), b: b,
		slots:   make([]slot, len(b.Calls)),
		settles: make(chan settled, len(b.Calls)),
	}
	if b.Log != nil && b.Agent != nil {
		x.log = b.Log
	}
	x.out.Results = make([]CallResult, len(b.Calls))
	for i, tc := range b.Calls {
		x.slots[i].in = Input{CallID: tc.ID, Name: tc.Name, Arguments: parseArguments(tc.Arguments), Agent: b.Agent, ToolSet: b.ToolSet, Log: x.log}
	}
	return x.run()
}

// capFor returns the cap on bodies in flight for b's next group.
func (e *NativeExecutor) capFor(b Batch) int {
	if b.MaxParallelToolCalls > 0 {
		return b.MaxParallelToolCalls
	}
	return e.MaxParallel()
}

// slot is one call of a batch.
type slot struct {
	in        Input
	c         *call
	st        stage   // stagePost or stageFinal once ready
	r         *Result // the candidate to commit, once ready
	ready     bool
	callEvent string // the id of its tool/call event
}

// settled is a dispatched call's outcome, sent by its goroutine.
type settled struct {
	i   int
	st  stage
	r   *Result
	err error // an internal failure
}

// batchRun is one Execute. Only the goroutine that called Execute touches it;
// body goroutines talk to it through settles.
type batchRun struct {
	e      *NativeExecutor
	svc    *Service
	ctx    context.Context
	logCtx context.Context // ctx without its cancellation
	b      Batch
	log    EventLog // nil: no durable events

	slots    []slot
	next     int // the first call not started
	done     int // calls committed: slots[:done]
	inflight int // bodies dispatched and not settled
	settles  chan settled
	out      BatchResult
	err      error // the first internal failure

	// Dispatch workers: a body runs on a worker goroutine kept for the
	// batch, so that the next body reuses its grown stack (a script
	// interpreter's calls need a deep one) instead of growing a fresh
	// goroutine's again. Idle workers wait on jobs; run stops them.
	jobs    chan dispatchJob
	workers sync.WaitGroup
	nwork   int
}

// dispatchJob is a body for a worker: call i.
type dispatchJob struct {
	i int
	c *call
}

func (x *batchRun) run() (*BatchResult, error) {
	defer x.stopWorkers()
	for x.err == nil && x.next < len(x.slots) && x.ctx.Err() == nil {
		x.group()
	}
	for x.err == nil && x.next < len(x.slots) {
		x.skip(x.next)
	}
	for x.inflight > 0 { // only after an internal failure; group drains otherwise
		<-x.settles
		x.inflight--
	}
	if x.err != nil {
		return nil, &BatchError{Err: x.err, Committed: &BatchResult{
			Results: x.out.Results[:x.done], AdditionalContexts: x.out.AdditionalContexts, Concluded: x.out.Concluded,
		}}
	}
	return &x.out, nil
}

// group runs one group (§5.2, §5.3) from the first call not started, until
// every call it started is committed (or an internal failure).
func (x *batchRun) group() {
	limit := x.e.capFor(x.b)
	head := x.next
	mode, ok := x.mode(head)
	if !ok {
		return
	}
	stop := false
	for {
		for !stop && x.err == nil && x.ctx.Err() == nil && x.next < len(x.slots) && x.inflight < limit {
			if x.next != head {
				if mode != Parallel {
					stop = true
					break
				}
				m, ok := x.mode(x.next)
				if !ok {
					break
				}
				if m != Parallel {
					stop = true
					break
				}
			}
			x.start(x.next)
			x.commit()
		}
		if x.inflight == 0 {
			return
		}
		x.await()
	}
}

// mode classifies call i now.
func (x *batchRun) mode(i int) (m Mode, ok bool) {
	err := guard(func() { m = x.svc.executionMode(x.slots[i].in) }, "executionMode", x.slots[i].in.CallID)
	if err != nil {
		x.fail(err)
		return "", false
	}
	return m, true
}

// start appends call i's tool/call, runs creation and prepare, and puts a
// dispatch in flight or makes the slot ready.
func (x *batchRun) start(i int) {
	s := &x.slots[i]
	x.next++
	if !x.logCall(s) {
		return
	}
	var (
		c  *call
		st stage
		r  *Result
	)
	err := guard(func() {
		c, st, r = x.svc.begin(x.ctx, s.in)
		if st != stageFinal {
			st, r = c.prepare()
		}
	}, "prepare", s.in.CallID)
	if err != nil {
		x.fail(err)
		return
	}
	s.c = c
	if st == stageDispatch {
		x.inflight++
		x.spawn(dispatchJob{i: i, c: c})
		return
	}
	s.st, s.r, s.ready = st, r, true
}

// spawn hands j to an idle worker, or to a new one while there are fewer
// workers than the group's cap. At the cap, a worker is idle or about to be
// (fewer bodies than the cap are in flight, and settles never blocks), so
// the send waits only for it.
func (x *batchRun) spawn(j dispatchJob) {
	if len(x.slots) == 1 {
		// A batch of one has nothing to overlap: its goroutine would only
		// wait for the body, so it runs the body itself.
		x.dispatch(j.i, j.c)
		return
	}
	if x.jobs == nil {
		x.jobs = make(chan dispatchJob)
	}
	select {
	case x.jobs <- j:
		return
	default:
	}
	if x.nwork < x.e.capFor(x.b) {
		x.nwork++
		x.workers.Add(1)
		go x.worker(j)
		return
	}
	x.jobs <- j
}

// worker runs bodies until the batch is over.
func (x *batchRun) worker(j dispatchJob) {
	defer x.workers.Done()
	for ok := true; ok; j, ok = <-x.jobs {
		x.dispatch(j.i, j.c)
	}
}

// stopWorkers ends the workers once no body is in flight.
func (x *batchRun) stopWorkers() {
	if x.jobs != nil {
		close(x.jobs)
		x.workers.Wait()
	}
}

// dispatch runs call i's tools/execute chain and body (on a worker).
func (x *batchRun) dispatch(i int, c *call) {
	var (
		st stage
		r  *Result
	)
	err := guard(func() { st, r = c.dispatch() }, "dispatch", x.slots[i].in.CallID)
	x.settles <- settled{i: i, st: st, r: r, err: err}
}

// await takes one settled dispatch and commits what became committable.
func (x *batchRun) await() {
	s := <-x.settles
	x.inflight--
	if s.err != nil {
		x.fail(s.err)
		return
	}
	sl := &x.slots[s.i]
	sl.st, sl.r, sl.ready = s.st, s.r, true
	x.commit()
}

// commit commits every contiguous ready slot in model order (§5.3).
func (x *batchRun) commit() {
	for x.err == nil && x.done < x.next && x.slots[x.done].ready {
		s := &x.slots[x.done]
		var r *Result
		err := guard(func() {
			if s.st == stagePost {
				r = s.c.postExecute(s.r)
			} else {
				r = s.c.finish(s.r)
			}
		}, "commit", s.in.CallID)
		if err != nil {
			x.fail(err)
			return
		}
		s.r = r
		if !x.settle(x.done, r) {
			return
		}
	}
}

// skip commits call i as a synthetic ABORTED_BEFORE_DISPATCH skip (§5.5),
// without the pipeline.
func (x *batchRun) skip(i int) {
	s := &x.slots[i]
	x.next++
	if x.logCall(s) {
		x.settle(i, materialize(abortedResult(true)))
	}
}

// logCall appends the slot's tool/call event, when the batch logs; it
// reports false after an internal failure.
func (x *batchRun) logCall(s *slot) bool {
	if x.log == nil {
		return true
	}
	id, err := x.append(ToolCallEvent(x.b.Agent, s.in.CallID, s.in.Name, logged(s.in.Arguments)), s.in.CallID)
	if err != nil {
		x.fail(err)
		return false
	}
	s.callEvent = id
	return true
}

// settle appends call i's tool/result and accepts r into the batch.
func (x *batchRun) settle(i int, r *Result) bool {
	s := &x.slots[i]
	if x.log != nil {
		if _, err := x.append(ToolResultEvent(x.b.Agent, s.in.CallID, s.callEvent, r), s.in.CallID); err != nil {
			x.fail(err)
			return false
		}
	}
	x.out.Results[i] = CallResult{CallID: s.in.CallID, Result: r}
	x.out.AdditionalContexts = append(x.out.AdditionalContexts, r.AdditionalContexts...)
	x.out.Concluded = x.out.Concluded || r.ConcludesTurn
	x.done++
	return true
}

// append writes e to the batch's log.
func (x *batchRun) append(e Event, callID string) (id string, err error) {
	perr := guard(func() { id, err = x.log.Append(x.logCtx, e) }, "event log", callID)
	if perr != nil {
		return "", perr
	}
	if err != nil {
		return "", fmt.Errorf("call %q: appending %s: %w", callID, e.Type, err)
	}
	return id, nil
}

func (x *batchRun) fail(err error) {
	if x.err == nil {
		x.err = err
	}
}

// guard runs f and turns a panic escaping it into an internal failure.
func guard(f func(), what, callID string) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("call %q: %s panicked: %w", callID, what, panicError{v})
		}
	}()
	f()
	return nil
}

// logged returns the arguments as the tool/call event carries them: a
// detached copy of the parsed value.
func logged(args any) any {
	if v, err := dsl.Snapshot(args); err == nil {
		return v
	}
	return args
}
