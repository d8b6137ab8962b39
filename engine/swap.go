package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
)

// Epoch numbers the engine's committed swaps (see [Service.Swap]): a call
// belongs to the epoch in which it began, and sees the tools and listeners
// of that epoch to its end.
type Epoch uint64

// ChangeSwap is the tools/change kind of a committed swap: one event stands
// for every change the swap made.
const ChangeSwap ChangeKind = "swap"

// epochState is one epoch: its registry (replaced by every ordinary change
// made in the epoch, frozen once a swap ends it) and the calls begun in it.
type epochState struct {
	n      Epoch
	reg    atomic.Pointer[regState]
	active atomic.Int64
	ended  atomic.Bool   // a swap ended it: no call joins it any more
	done   chan struct{} // closed once it ended and its calls finished
	once   sync.Once
	purge  []func() // what the swap that ended it removed, to forget once drained
}

func newEpoch(n Epoch, reg *regState) *epochState {
	e := &epochState{n: n, done: make(chan struct{})}
	e.reg.Store(reg)
	return e
}

// enterEpoch counts a beginning call in the current epoch and returns it.
func (s *Service) enterEpoch() *epochState {
	for {
		e := s.epoch.Load()
		e.active.Add(1)
		if s.epoch.Load() == e {
			return e
		}
		s.leaveEpoch(e) // a swap ended it meanwhile: join the new one
	}
}

// leaveEpoch counts a call of e as finished.
func (s *Service) leaveEpoch(e *epochState) {
	if e.active.Add(-1) == 0 && e.ended.Load() {
		s.epochDone(e)
	}
}

// epochDone closes e's done once, then forgets what the swaps removed as far
// as every earlier epoch has drained too.
func (s *Service) epochDone(e *epochState) {
	e.once.Do(func() { close(e.done) })
	s.epochMu.Lock()
	var purge []func()
	for len(s.ended) > 0 {
		first := s.ended[0]
		select {
		case <-first.done:
		default:
			s.epochMu.Unlock()
			runAll(purge)
			return
		}
		purge = append(purge, first.purge...)
		first.purge = nil
		s.ended = s.ended[1:]
	}
	s.epochMu.Unlock()
	runAll(purge)
}

func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}

// swapTx is a swap in progress: the registry it builds and how to undo or
// complete the listener changes made meanwhile.
type swapTx struct {
	epoch Epoch     // the epoch it will start
	reg   *regState // its registry, a private copy changed in place
	mu    sync.Mutex
	undo  []func()              // in order; run backwards on failure
	after []func()              // once the earlier epochs drained
	owned map[*Scope][]Disposer // scopes disposed meanwhile, with what they owned
}

func (tx *swapTx) onUndo(f func()) {
	tx.mu.Lock()
	tx.undo = append(tx.undo, f)
	tx.mu.Unlock()
}

func (tx *swapTx) onDrained(f func()) {
	tx.mu.Lock()
	tx.after = append(tx.after, f)
	tx.mu.Unlock()
}

// disposed records a scope disposed inside the swap, so that a failed swap
// gives it back what it owned.
func (tx *swapTx) disposed(c *Scope, owned []Disposer) {
	tx.mu.Lock()
	if _, ok := tx.owned[c]; !ok {
		tx.owned[c] = owned
	}
	tx.mu.Unlock()
}

// openSwap returns the swap in progress, or nil.
func (s *Service) openSwap() *swapTx {
	if s == nil {
		return nil
	}
	return s.tx.Load()
}

// Swap runs fn and applies every registry and listener change made meanwhile
// (through the ordinary Scope methods, disposers and Scope.Dispose, by fn or
// by anyone else) as one atomic change, for a hot reload: calls that began
// before see none of them and finish with the tools and listeners they
// began with, including what fn disposed; calls that begin after see all of
// them. If fn returns an error (or panics), every change is undone, the
// scopes disposed meanwhile own their effects again, and Swap returns the
// error. tools/change listeners hear one Change{Kind: ChangeSwap} per
// committed swap instead of each change. Swaps are serialized; fn must not
// call Swap.
//
// What the swap removed stays reachable to the older calls until they
// finish; [Service.Drain] waits for them.
func (s *Service) Swap(fn func() error) (_ Epoch, err error) {
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	s.mu.Lock()
	cur := s.epoch.Load()
	tx := &swapTx{epoch: cur.n + 1, reg: cur.reg.Load().clone(), owned: map[*Scope][]Disposer{}}
	s.tx.Store(tx)
	s.mu.Unlock()
	defer func() {
		if v := recover(); v != nil {
			s.abortSwap(tx)
			panic(v)
		}
	}()
	if err := fn(); err != nil {
		s.abortSwap(tx)
		return cur.n, err
	}
	// Commit: the new epoch's registry and listeners become what calls
	// beginning from now see, at once.
	next := newEpoch(tx.epoch, tx.reg)
	s.mu.Lock()
	s.tx.Store(nil)
	s.epochMu.Lock()
	cur.purge = tx.after
	s.ended = append(s.ended, cur)
	s.epochMu.Unlock()
	s.epoch.Store(next)
	cur.ended.Store(true)
	s.mu.Unlock()
	if cur.active.Load() == 0 {
		s.epochDone(cur)
	}
	_ = s.emitChange(Change{Kind: ChangeSwap}, false)
	return next.n, nil
}

// abortSwap undoes a swap's changes.
func (s *Service) abortSwap(tx *swapTx) {
	s.mu.Lock()
	s.tx.Store(nil)
	s.mu.Unlock()
	tx.mu.Lock()
	undo, owned := tx.undo, tx.owned
	tx.mu.Unlock()
	for _, f := range slices.Backward(undo) {
		f()
	}
	for c, d := range owned {
		c.mu.Lock()
		c.owned, c.disposed = append(d, c.owned...), false
		c.mu.Unlock()
	}
}

// Drain waits until no call that began before epoch e is still running, or
// ctx is done (its error is returned). After a swap, the effects it removed
// (a plugin's old version, say) can be closed once Drain returns nil.
func (s *Service) Drain(ctx context.Context, e Epoch) error {
	s.epochMu.Lock()
	var wait []chan struct{}
	for _, st := range s.ended {
		if st.n < e {
			wait = append(wait, st.done)
		}
	}
	s.epochMu.Unlock()
	for _, ch := range wait {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Epoch returns the current epoch: the number of committed swaps.
func (s *Service) Epoch() Epoch { return s.epoch.Load().n }
