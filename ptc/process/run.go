package process

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dsh-go/dsh/ptc"
)

// msgResolutionLossy is what a program's call rejects with when the
// binding's value cannot cross as lossless JSON (as in-process, §6 111).
const msgResolutionLossy = "binding resolution must be lossless JSON"

// maxMisuse bounds a child's contract-misuse message as this side returns it.
const maxMisuse = 1000

// run is one program's run in a child.
type run struct {
	rt     *Runtime
	req    ptc.Request
	ledger *ptc.Ledger
	ctx    context.Context
	cancel context.CancelCauseFunc
	w      *worker

	bindings []map[string]ptc.Binding
	callCtx  context.Context // the calls' context: ends with the run
	nextID   int64           // the last call id (the monitor's)
	calls    sync.WaitGroup
	end      chan *message // the child's done or misuse message
	killed   *ptc.Failure  // the failure this side killed the child for
}

// stop ends the run with cause (Close's errDisposed).
func (r *run) stop(cause error) { r.cancel(cause) }

// ended is the result of a run whose context ended: disposed or aborted.
func (r *run) ended() ptc.Result {
	if errors.Is(context.Cause(r.ctx), errDisposed) {
		return r.ledger.Finish(ptc.Result{Err: ptc.DisposedFailure()})
	}
	return r.ledger.Finish(ptc.Result{Err: ptc.AbortFailure(ptc.CauseText(r.ctx))})
}

// run sends the program to the child and serves it until it settles or
// dies; the result comes once the child is idle again or gone.
func (r *run) run() (ptc.Result, error) {
	w := r.w
	callCtx, cancelCalls := context.WithCancel(r.ctx)
	defer func() {
		cancelCalls()
		r.calls.Wait()
	}()
	wire := make([]wireNamespace, len(r.req.Bindings))
	r.bindings = make([]map[string]ptc.Binding, len(r.req.Bindings))
	for i, ns := range r.req.Bindings {
		wire[i] = wireNamespace{Global: ns.Global, ErrorClass: ns.ErrorClass, ErrorMember: ns.ErrorMember, Names: make([]string, len(ns.Bindings))}
		r.bindings[i] = make(map[string]ptc.Binding, len(ns.Bindings))
		for j, b := range ns.Bindings {
			wire[i].Names[j] = b.Name
			r.bindings[i][b.Name] = b
		}
	}
	r.callCtx = callCtx
	r.end = make(chan *message, 1)
	w.attach(r)
	if err := w.send(&message{T: msgRun, Program: r.req.Program, Bindings: wire}); err != nil {
		<-w.exited
		return r.died(), nil
	}
	began := time.Now()
	var buf [1024]byte
	_, ticks0, measured := procStats(w.pid, buf[:])
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		select {
		case m := <-r.end:
			if r.req.OnCompute != nil && measured {
				r.reportCompute(ticks0, buf[:])
			}
			return r.finish(m)
		case <-w.exited:
			return r.died(), nil
		case <-r.ctx.Done():
			w.kill(context.Cause(r.ctx))
			<-w.exited
			r.rt.release(w, false)
			return r.ended(), nil
		case <-tick.C:
			if f := r.watch(began, ticks0, buf[:]); f != nil {
				r.killed = f
				w.kill(errors.New(f.Message))
				<-w.exited
				return r.died(), nil
			}
		}
	}
}

// take handles one message of the child's during the run, on the worker's
// monitor goroutine, in the order they came: a call is submitted, a log
// entry charged, and the run's end (done, misuse) handed to the run, the
// child becoming idle. An error is a protocol violation.
func (r *run) take(m *message) error {
	switch m.T {
	case msgCall:
		return r.call(r.callCtx, m)
	case msgLog:
		if r.req.OnLog != nil {
			r.req.OnLog(m.Entry)
		}
		r.ledger.Log(m.Entry)
	case msgDone, msgMisuse:
		r.w.detach()
		r.end <- m
	default:
		return fmt.Errorf("unexpected %s message during a run", m.T)
	}
	return nil
}

// finish is the result of the child's done or misuse message; the child is
// idle again, or replaced when it cannot be trusted with another run.
func (r *run) finish(m *message) (ptc.Result, error) {
	w := r.w
	if m.T == msgMisuse {
		r.rt.release(w, true)
		msg := m.Error
		if len(msg) > maxMisuse {
			msg = msg[:maxMisuse] + "…"
		}
		return ptc.Result{}, errors.New(msg)
	}
	res := ptc.Result{Value: m.Value, HasValue: m.HasValue}
	reusable := true
	if m.Kind != "" {
		res = ptc.Result{Err: &ptc.Failure{Kind: ptc.Kind(m.Kind), Message: m.Message}}
		switch res.Err.Kind {
		case ptc.KindOutputLimit:
			// Its message is this side's, whole: the ledger gives it the
			// logs that fit beside it, whatever the child wrote.
			res.Err = ptc.OutputLimitFailure(r.ledger.Cap())
		case ptc.KindTimeout, ptc.KindAbort, ptc.KindWorkerExit:
			reusable = false // never reused after a timeout, an abort or a crash
		}
	}
	r.rt.release(w, reusable)
	return r.ledger.Finish(res), nil
}

// call dispatches one binding call of the child's. Its Start (when the
// binding has one) runs here, in the order the calls arrived; the wait and
// the answer run on a goroutine of their own. An answer for a run that is
// over is not sent.
func (r *run) call(ctx context.Context, m *message) error {
	if m.ID != r.nextID+1 {
		return fmt.Errorf("call id %d out of order (the next is %d)", m.ID, r.nextID+1)
	}
	r.nextID = m.ID
	if m.NS >= len(r.bindings) {
		return fmt.Errorf("call to namespace %d of %d", m.NS, len(r.bindings))
	}
	b, ok := r.bindings[m.NS][m.Name]
	if !ok {
		return fmt.Errorf("call to %s, which is not bound", quote(m.Name))
	}
	id := m.ID
	reply := func(v any, err error) {
		if ctx.Err() != nil {
			return
		}
		res := &message{T: msgResult, ID: id}
		if err != nil {
			res.Error = err.Error()
		} else {
			res.OK, res.Value = true, v
		}
		body, encErr := res.encode()
		if encErr != nil {
			res.OK, res.Value, res.Error = false, nil, msgResolutionLossy
			body, encErr = res.encode()
		}
		if encErr == nil {
			_ = r.w.write(body)
		}
	}
	if b.Start != nil {
		wait, err := b.Start(ctx, m.Args)
		if err != nil {
			reply(nil, err)
			return nil
		}
		r.calls.Add(1)
		go func() {
			defer r.calls.Done()
			reply(wait(ctx))
		}()
		return nil
	}
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		reply(b.Call(ctx, m.Args))
	}()
	return nil
}

// watch checks the child's resident set against its memory cap, and its
// time against the budgets it should have enforced itself: the failure to
// kill it for, or nil.
func (r *run) watch(began time.Time, ticks0 int64, buf []byte) *ptc.Failure {
	b := r.rt.budgets
	if time.Since(began) > time.Duration(b.MaxWallMs)*time.Millisecond+wallBackstop {
		return ptc.WallCeilingFailure(b.MaxWallMs)
	}
	rss, ticks, ok := procStats(r.w.pid, buf)
	if !ok {
		return nil
	}
	if rss > int64(b.MaxMemoryMB*(1<<20)) {
		return ptc.MemoryLimitFailure(b.MaxMemoryMB)
	}
	// CPU time may run ahead of the interpreter's busy time (the collector
	// runs beside it), so the backstop is twice the budget and a second.
	busy := time.Duration(ticks-ticks0) * time.Second / ticksPerSecond
	if busy > 2*time.Duration(b.ComputeMs)*time.Millisecond+time.Second {
		return ptc.ComputeBudgetFailure(b.ComputeMs)
	}
	return nil
}

// reportCompute gives the request's OnCompute the child's CPU time since
// ticks0 (in the kernel's ticks: 10 ms steps), when it can be read.
func (r *run) reportCompute(ticks0 int64, buf []byte) {
	if _, ticks, ok := procStats(r.w.pid, buf); ok {
		r.req.OnCompute(float64((ticks-ticks0)*1000) / ticksPerSecond)
	}
}

// died is the result of a run whose child is gone without settling (every
// frame it sent first was taken: its log entries are charged), or gone
// after settling, which still counts unless this side killed it.
func (r *run) died() ptc.Result {
	select {
	case m := <-r.end:
		if r.killed == nil && m.T == msgDone {
			res, _ := r.finish(m)
			return res
		}
	default:
	}
	f := r.killed
	if f == nil {
		if r.ctx.Err() != nil {
			return r.ended()
		}
		f = r.w.failure(r.rt.budgets.MaxMemoryMB)
		r.rt.logger.Debug("process: a child died", "pid", r.w.pid, "failure", f.Message, "error", r.w.deathError())
	}
	r.rt.release(r.w, false)
	return r.ledger.Finish(ptc.Result{Err: f})
}
