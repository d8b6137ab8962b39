package engine

import "sync"

// listener is one registered listener of an event table.
type listener[F any] struct {
	fn       F
	agent    *Agent // nil: hears every call
	source   string // the plugin that registered it, "" when unknown (see Source)
	disposed bool
	// added and removed are the epochs (see Service.Swap) from which a
	// listener added or removed inside a swap is, or stops being, visible;
	// 0 for the ordinary changes, which every call sees at once.
	added, removed Epoch
}

// visible reports whether a call that began in epoch e sees the listener.
// Callers hold the table's lock.
func (l *listener[F]) visible(e Epoch) bool {
	return !l.disposed && l.added <= e && (l.removed == 0 || e < l.removed)
}

// admits reports whether the listener hears a call made as agent: unscoped
// listeners hear every call, scoped ones their agent's and its descendants'.
func (l *listener[F]) admits(agent *Agent) bool {
	return l.agent == nil || agent != nil && agent.isOrDescends(l.agent)
}

// table is an event's listeners: prepended ones (outermost, the newest
// first) then appended ones in registration order.
//
// Iteration is live: a listener appended while an iteration runs is seen by
// it, unless the table was drained to empty in between (which starts a new
// generation that older iterations do not see).
type table[F any] struct {
	svc   *Service // for the swap in progress, if any
	mu    sync.Mutex
	gen   uint64
	front []*listener[F] // prepended, in prepend order (iterated backwards)
	back  []*listener[F]
	live  int
	dead  int
}

func (t *table[F]) add(fn F, agent *Agent, cfg listenerConfig) Disposer {
	l := &listener[F]{fn: fn, agent: agent, source: cfg.source}
	tx := t.svc.openSwap()
	t.mu.Lock()
	if tx != nil {
		l.added = tx.epoch
	}
	if cfg.prepend {
		t.front = append(t.front, l)
	} else {
		t.back = append(t.back, l)
	}
	t.live++
	t.mu.Unlock()
	if tx != nil {
		tx.onUndo(func() { t.removeNow(l) })
	}
	return func() { t.remove(l) }
}

// remove disposes l; it is idempotent. Inside a swap, l only stops being
// visible to the calls that begin after it, and goes once they are all that
// is left running.
func (t *table[F]) remove(l *listener[F]) {
	if tx := t.svc.openSwap(); tx != nil {
		t.mu.Lock()
		if l.disposed || l.removed != 0 {
			t.mu.Unlock()
			return
		}
		l.removed = tx.epoch
		t.mu.Unlock()
		tx.onUndo(func() {
			t.mu.Lock()
			l.removed = 0
			t.mu.Unlock()
		})
		tx.onDrained(func() { t.removeNow(l) })
		return
	}
	t.removeNow(l)
}

// removeNow disposes l for every call.
func (t *table[F]) removeNow(l *listener[F]) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l.disposed {
		return
	}
	l.disposed = true
	t.live--
	t.dead++
	switch {
	case t.live == 0:
		// Drained: a new generation, in new arrays older iterations do not share.
		t.front, t.back, t.dead = nil, nil, 0
		t.gen++
	case t.dead > 16 && t.dead > 2*t.live:
		t.front, t.back, t.dead = compact(t.front), compact(t.back), 0
		t.gen++
	}
}

func compact[F any](ls []*listener[F]) []*listener[F] {
	out := make([]*listener[F], 0, len(ls))
	for _, l := range ls {
		if !l.disposed {
			out = append(out, l)
		}
	}
	return out
}

// empty reports whether the table has no live listener (a fast path).
func (t *table[F]) empty() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.live == 0
}

// iter walks a table's listeners in waterfall order, outermost first.
type iter[F any] struct {
	t     *table[F]
	epoch Epoch // of the call iterating
	gen   uint64
	front []*listener[F]
	fi    int // next front index (counting down)
	back  []*listener[F]
	bi    int
	ended bool // end was called and found nothing left: next returns nil
}

// iter starts an iteration for a call that began in epoch e. It is a value,
// so that an iteration that does not outlive its frame costs no allocation.
func (t *table[F]) iter(e Epoch) iter[F] {
	t.mu.Lock()
	defer t.mu.Unlock()
	return iter[F]{t: t, epoch: e, gen: t.gen, front: t.front, fi: len(t.front) - 1, back: t.back}
}

// next returns the next live listener admitted for agent, or nil.
func (it *iter[F]) next(agent *Agent) *listener[F] {
	if it.ended {
		return nil
	}
	for ; it.fi >= 0; it.fi-- {
		l := it.front[it.fi]
		if it.visible(l) && l.admits(agent) {
			it.fi--
			return l
		}
	}
	for {
		it.t.mu.Lock()
		if it.t.gen == it.gen {
			it.back = it.t.back // see listeners appended since
		}
		it.t.mu.Unlock()
		if it.bi >= len(it.back) {
			return nil
		}
		l := it.back[it.bi]
		it.bi++
		if it.visible(l) && l.admits(agent) {
			return l
		}
	}
}

// end reports whether no listener admitted for agent is left, and if so ends
// the iteration: listeners added later are not seen by it.
func (it *iter[F]) end(agent *Agent) bool {
	fi, bi, back := it.fi, it.bi, it.back
	if it.next(agent) != nil {
		it.fi, it.bi, it.back = fi, bi, back
		return false
	}
	it.ended = true
	return true
}

func (it *iter[F]) visible(l *listener[F]) bool {
	it.t.mu.Lock()
	defer it.t.mu.Unlock()
	return l.visible(it.epoch)
}
