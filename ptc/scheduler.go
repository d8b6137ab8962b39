package ptc

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/dsh-go/dsh/engine"
)

// schedulerOptions configure one run's sub-call scheduler.
type schedulerOptions struct {
	// MaxParallel is maxParallelSubCalls: the cap on bodies in flight and on
	// pending settle-event tasks; a positive integer.
	MaxParallel int
	// Outer is the run_code execution the program runs under: sub-call ids,
	// rootCallId, parentCallId, agent, parent token and tool set come from
	// it, and the dispatch-log waterfall sees it. Required.
	Outer *engine.Execution
	// MaxSubCalls bounds the calls a run makes; 0 means no bound.
	MaxSubCalls int
	// MaxQueued bounds the calls waiting to start (submitted, not started);
	// 0 means no bound.
	MaxQueued int
	// Log receives the sub-calls' durable events when Outer has an agent
	// (the session owner); nil logs nothing.
	Log engine.EventLog
	// OnCommit, when set, sees each committed result (never a synthesized
	// internal failure) in submission order on the driver lane, before the
	// program's call settles: the bridge forwards contexts, images and
	// concludesTurn there (§2.9).
	OnCommit func(subCallID string, r *engine.Result)
}

// subCall is one binding call as the bridge hands it over, its arguments
// already snapshotted (§2.5 step 2).
type subCall struct {
	Name      string
	Arguments any // the dispatched snapshot
	Logged    any // the independent snapshot the events carry
	Schema    any // the binding-time schema
}

// scheduler runs one run_code program's sub-calls (§2.6). Submissions enter
// a FIFO; one driver lane runs every ordered stage: for the queue's head it
// appends the start event and runs creation, pre-execute and the guards
// (Service.Stage), then launches only the dispatch (tools/execute chain and
// body) on a goroutine of its own, or runs it itself when the call is alone
// and no call may join it (see start). The head starts when no exclusive
// barrier is active and, as the classifier says at that moment, nothing is
// in flight (exclusive) or fewer than MaxParallel bodies are (parallel). An
// exclusive call keeps its barrier until its commit is done. Calls commit
// (post-execute, OnCommit, settling the program's call, scheduling the
// settle event) strictly in submission order, so a call resolves only once
// every earlier call has committed. While more than MaxParallel
// settle-event tasks are pending the lane waits.
//
// The run is over once its context ends or Close is called; Close drains
// the scheduler and must be called for its goroutines to end.
type scheduler struct {
	svc      *engine.Service
	outer    *engine.Execution
	agent    *engine.Agent
	log      engine.EventLog // nil: no events
	max      int
	maxCalls int // 0: no bound
	maxQueue int // 0: no bound
	onCommit func(string, *engine.Result)

	ctx     context.Context // the run-scoped context: the sub-calls' signal
	cancel  context.CancelCauseFunc
	logCtx  context.Context // ctx without its cancellation
	unwatch func() bool
	wake    chan struct{} // buffered: a pending wake-up for the lane
	done    chan struct{} // closed when the lane has drained and exited

	// Dispatch workers: a dispatch the lane does not run itself runs on a
	// worker kept for the run, so that a sub-call reuses a goroutine whose
	// stack has grown to what a pipeline needs (a fresh goroutine per
	// dispatch spent a tenth of a sub-call growing its stack). The lane
	// alone starts workers and hands them work; they stop when the lane
	// exits.
	jobs    chan *subEntry
	workers int // started, lane-owned
	wg      sync.WaitGroup

	idPrefix string // "<outer call id>:ptc:", the sub-call ids' prefix

	mu        sync.Mutex
	n         int        // sub-call ids handed out
	pending   entryQueue // submitted, not started
	started   entryQueue // started, not committed, in submission order
	inflight  int        // dispatches running
	exclusive bool       // an exclusive call started and has not committed
	logWork   int        // settle-event tasks pending
	laneUp    bool       // the lane was started (by the first call)
	err       error      // the first internal failure
}

// subEntry is one submission.
type subEntry struct {
	in     engine.Input
	logged any
	done   chan struct{} // closed once value and err are the outcome

	// The outcome, written once before done is closed.
	value    any
	replyErr error

	// Written by the lane, or under scheduler.mu by a dispatch goroutine.
	mode    engine.Mode
	staged  *engine.Staged
	settled bool  // ready to commit
	err     error // a stage's internal failure
}

// settle sets e's outcome and wakes its waiters; the lane calls it once.
func (e *subEntry) settle(value any, err error) {
	e.value, e.replyErr = value, err
	close(e.done)
}

// wait waits for e's outcome; when ctx ends first it returns ctx's cause.
// Every wait after the outcome sees the same outcome.
func (e *subEntry) wait(ctx context.Context) (any, error) {
	select {
	case <-e.done:
		return e.value, e.replyErr
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// entryQueue is a FIFO of entries that reuses its slice: popping the last
// entry rewinds it, and a push into a full slice whose front half is popped
// moves the rest down instead of growing it.
type entryQueue struct {
	items []*subEntry
	head  int // the index of the front entry
}

func (q *entryQueue) len() int { return len(q.items) - q.head }

// front is the first entry; the queue must not be empty.
func (q *entryQueue) front() *subEntry { return q.items[q.head] }

func (q *entryQueue) push(e *subEntry) {
	if len(q.items) == cap(q.items) && q.head > 0 && q.head >= len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, e)
}

// pop removes and returns the first entry; the queue must not be empty.
func (q *entryQueue) pop() *subEntry {
	e := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return e
}

// newScheduler starts the scheduler for one run. The run-scoped context is
// derived from ctx: its end (the outer call's abort, or Close) ends the run.
func newScheduler(ctx context.Context, svc *engine.Service, opts schedulerOptions) (*scheduler, error) {
	if err := ValidateMaxParallelSubCalls(float64(opts.MaxParallel)); err != nil {
		return nil, err
	}
	if opts.Outer == nil {
		return nil, errors.New("ptc: scheduler without an outer execution")
	}
	s := &scheduler{
		svc: svc, outer: opts.Outer, idPrefix: opts.Outer.CallID() + ":ptc:", agent: opts.Outer.Agent(), max: opts.MaxParallel, maxCalls: opts.MaxSubCalls, maxQueue: opts.MaxQueued, onCommit: opts.OnCommit,
		wake: make(chan struct{}, 1), done: make(chan struct{}), jobs: make(chan *subEntry),
	}
	if opts.Log != nil && s.agent != nil {
		s.log = opts.Log
	}
	s.ctx, s.cancel = context.WithCancelCause(ctx)
	s.logCtx = context.WithoutCancel(s.ctx)
	s.unwatch = context.AfterFunc(s.ctx, s.signal)
	return s, nil
}

// Submit is one binding call: [scheduler.Enqueue] and wait.
func (s *scheduler) Submit(ctx context.Context, c subCall) (any, error) {
	e, err := s.enqueue(c)
	if err != nil {
		return nil, err
	}
	return e.wait(ctx)
}

// Enqueue queues one binding call under the next sub-call id and returns a
// function that waits for its commit. That function returns the result's
// canonical value, or an error whose message is what the program sees
// (§2.7, §2.8): the failure's message, or one of the "run is over"
// messages. When its ctx ends first it returns ctx's cause and the call goes
// on unwatched. Calls are numbered and started in the order Enqueue is
// called. A call past MaxSubCalls, or finding MaxQueued calls waiting,
// fails at once with the cap's message: it takes no number, starts nothing
// and logs nothing.
func (s *scheduler) Enqueue(c subCall) func(ctx context.Context) (any, error) {
	e, err := s.enqueue(c)
	if err != nil {
		return func(context.Context) (any, error) { return nil, err }
	}
	return e.wait
}

// enqueue is [scheduler.Enqueue]: the queued call, or the error of a call
// refused at once.
func (s *scheduler) enqueue(c subCall) (*subEntry, error) {
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		return nil, s.overError(c.Name, "not dispatched")
	}
	if s.maxCalls > 0 && s.n >= s.maxCalls {
		s.mu.Unlock()
		return nil, fmt.Errorf("run_code sub-call limit reached: a run may make at most %d tool calls", s.maxCalls)
	}
	if s.maxQueue > 0 && s.pending.len() >= s.maxQueue {
		s.mu.Unlock()
		return nil, fmt.Errorf("run_code queue limit reached: at most %d tool calls may wait to start", s.maxQueue)
	}
	s.n++
	var id [64]byte
	e := &subEntry{
		in: engine.Input{
			CallID:     string(strconv.AppendInt(append(id[:0], s.idPrefix...), int64(s.n), 10)),
			RootCallID: s.outer.RootCallID(),
			Name:       c.Name,
			Arguments:  c.Arguments,
			Agent:      s.agent,
			Parent:     s.outer.Token(),
			Schema:     c.Schema,
			ToolSet:    s.outer.ToolSet(),
			OwnBudget:  true,
		},
		logged: c.Logged,
		done:   make(chan struct{}),
	}
	s.pending.push(e)
	if !s.laneUp { // the lane starts with the first call
		s.laneUp = true
		go s.drive()
	}
	s.mu.Unlock()
	s.signal()
	return e, nil
}

// Close ends the run with reason (unless it already ended) and drains it:
// queued calls are abandoned, calls in flight see the run's context end and
// still commit and log, and every settle event is appended before Close
// returns. It returns the first internal failure (a stage's panic, an event
// log's failure), if any. Close may be called more than once.
func (s *scheduler) Close(reason string) error {
	s.cancel(errors.New(reason))
	// Enqueue starts the lane under mu once it saw the context alive; after
	// the cancel above no Enqueue gets that far.
	s.mu.Lock()
	up := s.laneUp
	s.mu.Unlock()
	if up {
		s.signal()
		<-s.done
	}
	s.unwatch()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// signal wakes the lane.
func (s *scheduler) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// overError is "run_code run is over (<reason>); <name> <what>".
func (s *scheduler) overError(name, what string) error {
	return fmt.Errorf("run_code run is over (%s); %s %s", context.Cause(s.ctx).Error(), name, what)
}

// drive is the lane: each pass abandons the queue's head once the run is
// over, else commits the head of the started calls when it is ready, else
// starts the queue's head when there is capacity, else waits for a wake-up.
func (s *scheduler) drive() {
	defer func() {
		close(s.jobs)
		s.wg.Wait()
		close(s.done)
	}()
	for {
		s.mu.Lock()
		if s.logWork > s.max { // backpressure
			s.mu.Unlock()
			<-s.wake
			continue
		}
		over := s.ctx.Err() != nil
		if over && s.pending.len() > 0 {
			// Abandoned before any commit: a call the lane ran itself
			// commits only after the run's end was seen.
			head := s.pending.pop()
			s.mu.Unlock()
			head.settle(nil, s.overError(head.in.Name, "tool call abandoned"))
			continue
		}
		if s.started.len() > 0 && s.started.front().settled {
			e := s.started.pop()
			s.mu.Unlock()
			s.commit(e)
			if e.mode == engine.Exclusive {
				s.mu.Lock()
				s.exclusive = false
				s.mu.Unlock()
			}
			continue
		}
		if s.pending.len() > 0 {
			head := s.pending.front()
			if !s.exclusive {
				inflight := s.inflight // only falls meanwhile
				s.mu.Unlock()
				mode := s.mode(head.in)
				if (mode == engine.Exclusive && inflight == 0) || (mode == engine.Parallel && inflight < s.max) {
					s.mu.Lock()
					head.mode = mode
					s.exclusive = mode == engine.Exclusive
					s.pending.pop()
					s.started.push(head)
					s.mu.Unlock()
					s.start(head)
					continue
				}
				s.mu.Lock()
			}
		}
		idle := over && s.pending.len() == 0 && s.started.len() == 0 && s.logWork == 0
		s.mu.Unlock()
		if idle {
			return
		}
		<-s.wake
	}
}

// mode classifies in now; a panic is exclusive.
func (s *scheduler) mode(in engine.Input) (m engine.Mode) {
	defer func() {
		if recover() != nil {
			m = engine.Exclusive
		}
	}()
	return s.svc.Global().ExecutionMode(in)
}

// start appends e's start event, runs its prepare and launches its
// dispatch, or runs it when e is alone.
func (s *scheduler) start(e *subEntry) {
	if s.log != nil {
		s.append(engine.PTCDispatchStartEvent(s.agent, s.dispatch(e)), e.in.CallID)
	}
	x, err := s.svc.Stage(s.ctx, e.in)
	s.mu.Lock()
	e.staged, e.err = x, err
	dispatch := err == nil && x.NeedsDispatch()
	// A call that is the only one started and that no call may join while
	// it runs (it is exclusive, or it fills a cap of one) leaves the lane
	// nothing to do until its dispatch ends but wait for it: no earlier call
	// is left to commit and no later one may start. The lane then runs the
	// dispatch itself, sparing two goroutine hand-offs per call. Calls queued
	// meanwhile wait as they would; the only difference is when calls
	// queued at a run's end are abandoned: once the dispatch ends.
	inline := dispatch && s.started.len() == 1 && (e.mode == engine.Exclusive || s.max == 1)
	if dispatch {
		s.inflight++
	} else {
		e.settled = true
	}
	s.mu.Unlock()
	switch {
	case inline:
		s.dispatchBody(e)
	case dispatch:
		s.launch(e)
	}
}

// launch hands e's dispatch to an idle worker, or to a new one while there
// are fewer workers than the cap. At the cap one is idle or about to be
// (fewer than the cap are in flight), so the send waits only briefly.
func (s *scheduler) launch(e *subEntry) {
	select {
	case s.jobs <- e:
		return
	default:
	}
	if s.workers < s.max {
		s.workers++
		s.wg.Add(1)
		go s.worker(e)
		return
	}
	s.jobs <- e
}

// worker runs dispatches until the lane exits.
func (s *scheduler) worker(e *subEntry) {
	defer s.wg.Done()
	for ; e != nil; e = <-s.jobs {
		s.run(e)
	}
}

// run is e's dispatch, on a worker.
func (s *scheduler) run(e *subEntry) {
	s.dispatchBody(e)
	s.signal()
}

// dispatchBody runs e's dispatch and marks e ready to commit.
func (s *scheduler) dispatchBody(e *subEntry) {
	err := e.staged.Dispatch()
	s.mu.Lock()
	e.err, e.settled = err, true
	s.inflight--
	s.mu.Unlock()
}

// commit finishes e, settles the program's call and schedules its settle
// event.
func (s *scheduler) commit(e *subEntry) {
	var r *engine.Result
	err := e.err
	if err == nil {
		r, err = e.staged.Commit()
	}
	if err != nil {
		s.fail(err)
		r = internalResult(err)
	} else if s.onCommit != nil {
		s.onCommit(e.in.CallID, r)
	}
	s.mu.Lock()
	over := s.ctx.Err() != nil
	if s.log != nil {
		s.logWork++
	}
	s.mu.Unlock()
	switch {
	case over:
		e.settle(nil, s.overError(e.in.Name, "result discarded"))
	case r.IsError:
		e.settle(nil, errors.New(failureMessage(r)))
	default:
		e.settle(r.Value, nil)
	}
	if s.log != nil {
		go s.settleEvent(e, r)
	}
}

// settleEvent runs the dispatch-log waterfall and appends e's settle event.
func (s *scheduler) settleEvent(e *subEntry, r *engine.Result) {
	defer func() {
		s.mu.Lock()
		s.logWork--
		s.mu.Unlock()
		s.signal()
	}()
	content := s.svc.DispatchLogContent(s.logCtx, &engine.DispatchLogEntry{
		Exec: s.outer, Agent: s.agent, SubCallID: e.in.CallID, Name: e.in.Name, IsError: r.IsError, Content: r.Content,
	})
	s.append(engine.PTCDispatchEvent(s.agent, s.dispatch(e), r, content), e.in.CallID)
}

// dispatch names e in its events.
func (s *scheduler) dispatch(e *subEntry) engine.PTCDispatch {
	return engine.PTCDispatch{
		RootCallID: e.in.RootCallID, ParentCallID: s.outer.CallID(), SubCallID: e.in.CallID,
		Name: e.in.Name, Arguments: e.logged,
	}
}

// append writes ev to the log; a failure or panic is an internal failure.
func (s *scheduler) append(ev engine.Event, callID string) {
	defer func() {
		if v := recover(); v != nil {
			s.fail(fmt.Errorf("sub-call %q: event log panicked: %v", callID, v))
		}
	}()
	if _, err := s.log.Append(s.logCtx, ev); err != nil {
		s.fail(fmt.Errorf("sub-call %q: appending %s: %w", callID, ev.Type, err))
	}
}

func (s *scheduler) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.mu.Unlock()
}

// failureMessage is what the program sees of a failed result (§2.7).
func failureMessage(r *engine.Result) string {
	if r.Error != nil {
		return r.Error.Message
	}
	return "tool call failed"
}

// internalResult is the failure a call whose stage failed internally
// settles with, so that its settle event still follows its start event.
func internalResult(err error) *engine.Result {
	msg := err.Error()
	return &engine.Result{IsError: true, Error: &engine.Failure{Message: msg}, Content: []engine.Block{engine.Text("Error: " + msg)}}
}
