// Package warmpool keeps values that are costly to build (a program
// runtime's interpreter) built ahead of need by one background goroutine.
// A value leaves the pool for one use and never comes back; the pool is
// refilled when it runs empty, or when its user says its use is over, so
// that building a replacement does not compete with the use.
package warmpool

import "sync"

// Pool keeps up to a size of values built ahead of need.
type Pool[T any] struct {
	build   func() (T, error)
	dispose func(T)
	usable  func(T) bool
	size    int

	mu     sync.Mutex
	idle   []T
	closed bool

	wake chan struct{} // one slot: "the pool may be short"
	quit chan struct{} // closed by Close
	done chan struct{} // closed when the builder has exited
}

// New starts the builder of a pool of size values (none when size is not
// positive: Take then builds each value). dispose releases a value the pool
// will not hand out (at Close, or one usable rejects); usable, when not
// nil, says whether an idle value may still be handed out.
func New[T any](size int, build func() (T, error), dispose func(T), usable func(T) bool) *Pool[T] {
	p := &Pool[T]{
		build:   build,
		dispose: dispose,
		usable:  usable,
		size:    size,
		wake:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	if size <= 0 {
		close(p.done)
		return p
	}
	go p.fill()
	p.Refill()
	return p
}

// Refill asks the builder to bring the pool back to its size.
func (p *Pool[T]) Refill() {
	if p.size <= 0 {
		return
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// fill builds values while the pool is short, then waits to be woken.
func (p *Pool[T]) fill() {
	defer close(p.done)
	for {
		select {
		case <-p.quit:
			return
		case <-p.wake:
		}
		for {
			p.mu.Lock()
			full := p.closed || len(p.idle) >= p.size
			p.mu.Unlock()
			if full {
				break
			}
			v, err := p.build()
			if err != nil {
				break // a Take building its own value reports it
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				p.dispose(v)
				return
			}
			p.idle = append(p.idle, v)
			p.mu.Unlock()
		}
	}
}

// Take returns an idle value, or builds one when there is none. The pool is
// refilled at once only when it is left empty; otherwise the taker calls
// Refill when its use is over.
func (p *Pool[T]) Take() (T, error) {
	p.mu.Lock()
	var v T
	found := len(p.idle) > 0
	if found {
		v = p.idle[0]
		var zero T
		p.idle[0] = zero
		p.idle = p.idle[1:]
	}
	empty := len(p.idle) == 0
	p.mu.Unlock()
	if empty {
		p.Refill()
	}
	if found {
		if p.usable == nil || p.usable(v) {
			return v, nil
		}
		p.dispose(v)
	}
	return p.build()
}

// Idle returns the values the pool holds now (for tests).
func (p *Pool[T]) Idle() []T {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]T(nil), p.idle...)
}

// Done is closed once the builder has exited (after Close).
func (p *Pool[T]) Done() <-chan struct{} { return p.done }

// Close stops the builder and disposes of the idle values. It is
// idempotent.
func (p *Pool[T]) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	close(p.quit)
	<-p.done
	for _, v := range idle {
		p.dispose(v)
	}
}
