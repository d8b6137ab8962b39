package ptc

import (
	"context"
	"sync"
)

// Runs is a runtime's record of its runs in flight, for disposal (§3.7): a
// run joins unless the runtime was closed, and Close stops every run in
// flight and waits until each has left. R is the runtime's run type.
type Runs[R comparable] struct {
	mu     sync.Mutex
	closed bool
	set    map[R]struct{}
	wg     sync.WaitGroup
}

// Join records r as in flight. It reports false once Close was called: the
// run must then fail with [RunAfterDisposal].
func (s *Runs[R]) Join(r R) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.set == nil {
		s.set = make(map[R]struct{})
	}
	s.set[r] = struct{}{}
	s.wg.Add(1)
	return true
}

// Leave records that r, which joined, has ended.
func (s *Runs[R]) Leave(r R) {
	s.mu.Lock()
	delete(s.set, r)
	s.mu.Unlock()
	s.wg.Done()
}

// Close refuses later runs, calls stop for each run in flight (which should
// end it as [DisposedFailure]) and waits until every one has left. It may
// be called more than once.
func (s *Runs[R]) Close(stop func(R)) {
	s.mu.Lock()
	s.closed = true
	runs := make([]R, 0, len(s.set))
	for r := range s.set {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		stop(r)
	}
	s.wg.Wait()
}

// CauseText is the reason an abort reports for ctx's end: its cause's text
// (String(signal.reason)), "context canceled" when it has none.
func CauseText(ctx context.Context) string {
	if err := context.Cause(ctx); err != nil {
		return err.Error()
	}
	return context.Canceled.Error()
}
