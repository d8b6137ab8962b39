package js

import "sync"

// basePool keeps up to size base runtimes built ahead of need by one
// background goroutine. A base leaves the pool for one run and never comes
// back; taking one asks the builder for a replacement.
type basePool struct {
	build func() (*programBase, error)
	size  int

	mu     sync.Mutex
	idle   []*programBase
	closed bool

	wake chan struct{} // one slot: "the pool may be short"
	quit chan struct{} // closed by close
	done chan struct{} // closed when the builder has exited
}

// newBasePool starts the builder, unless size is 0.
func newBasePool(size int, build func() (*programBase, error)) *basePool {
	bp := &basePool{
		build: build,
		size:  size,
		wake:  make(chan struct{}, 1),
		quit:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	if size <= 0 {
		close(bp.done)
		return bp
	}
	go bp.fill()
	bp.poke()
	return bp
}

// refill asks the builder to bring the pool back to its size.
func (bp *basePool) refill() {
	if bp.size <= 0 {
		return
	}
	bp.poke()
}

func (bp *basePool) poke() {
	select {
	case bp.wake <- struct{}{}:
	default:
	}
}

// fill builds bases while the pool is short, then waits to be poked.
func (bp *basePool) fill() {
	defer close(bp.done)
	for {
		select {
		case <-bp.quit:
			return
		case <-bp.wake:
		}
		for {
			bp.mu.Lock()
			full := bp.closed || len(bp.idle) >= bp.size
			bp.mu.Unlock()
			if full {
				break
			}
			b, err := bp.build()
			if err != nil {
				break // a run building its own base reports it
			}
			bp.mu.Lock()
			if bp.closed {
				bp.mu.Unlock()
				b.dispose()
				return
			}
			bp.idle = append(bp.idle, b)
			bp.mu.Unlock()
		}
	}
}

// take returns an idle base, or builds one when there is none. The pool
// is refilled at once only when it is left empty; otherwise the taker calls
// refill when its run is over, so that building the replacement (jsguard's
// 10,000 allocations) does not compete with the run for the CPU and the GC.
func (bp *basePool) take() (*programBase, error) {
	bp.mu.Lock()
	var b *programBase
	if len(bp.idle) > 0 {
		b = bp.idle[0]
		bp.idle[0] = nil
		bp.idle = bp.idle[1:]
	}
	empty := len(bp.idle) == 0
	bp.mu.Unlock()
	if empty {
		bp.refill()
	}
	if b != nil {
		if !b.loop.Broken() {
			return b, nil
		}
		b.dispose()
	}
	return bp.build()
}

// close stops the builder and disposes of the idle bases. It is idempotent.
func (bp *basePool) close() {
	bp.mu.Lock()
	if bp.closed {
		bp.mu.Unlock()
		return
	}
	bp.closed = true
	idle := bp.idle
	bp.idle = nil
	bp.mu.Unlock()
	close(bp.quit)
	<-bp.done
	for _, b := range idle {
		b.dispose()
	}
}
