package engine

import "sync"

// listener is one registered listener of an event table.
type listener[F any] struct {
	fn       F
	agent    *Agent // nil: hears every call
	disposed bool
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
	mu    sync.Mutex
	gen   uint64
	front []*listener[F] // prepended, in prepend order (iterated backwards)
	back  []*listener[F]
	live  int
	dead  int
}

func (t *table[F]) add(fn F, agent *Agent, prepend bool) Disposer {
	l := &listener[F]{fn: fn, agent: agent}
	t.mu.Lock()
	if prepend {
		t.front = append(t.front, l)
	} else {
		t.back = append(t.back, l)
	}
	t.live++
	t.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { t.remove(l) }) }
}

func (t *table[F]) remove(l *listener[F]) {
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
	gen   uint64
	front []*listener[F]
	fi    int // next front index (counting down)
	back  []*listener[F]
	bi    int
	ended bool // end was called and found nothing left: next returns nil
}

func (t *table[F]) iter() *iter[F] {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &iter[F]{t: t, gen: t.gen, front: t.front, fi: len(t.front) - 1, back: t.back}
}

// next returns the next live listener admitted for agent, or nil.
func (it *iter[F]) next(agent *Agent) *listener[F] {
	if it.ended {
		return nil
	}
	for ; it.fi >= 0; it.fi-- {
		l := it.front[it.fi]
		if !it.isDisposed(l) && l.admits(agent) {
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
		if !it.isDisposed(l) && l.admits(agent) {
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

func (it *iter[F]) isDisposed(l *listener[F]) bool {
	it.t.mu.Lock()
	defer it.t.mu.Unlock()
	return l.disposed
}
