package engine

import "context"

// DispatchLogEntry is what the tools/ptc-dispatch-log waterfall sees before a
// sub-call's settle event is appended.
type DispatchLogEntry struct {
	Exec      *Execution // the outer (run_code) execution
	Agent     *Agent
	SubCallID string
	Name      string
	IsError   bool
	Content   []Block
}

// DispatchLogFunc is a tools/ptc-dispatch-log listener: it returns the
// content to log (next() returns it unchanged). Only the durable copy changes.
type DispatchLogFunc func(ctx context.Context, e *DispatchLogEntry, next func() ([]Block, error)) ([]Block, error)

// DispatchLogContent runs the tools/ptc-dispatch-log waterfall; a failing
// listener is contained, logged, and the original content is logged.
func (s *Service) DispatchLogContent(ctx context.Context, e *DispatchLogEntry) []Block {
	if s.dlog.empty() {
		return e.Content
	}
	it := s.dlog.iter(s.Epoch())
	var next func() ([]Block, error)
	next = func() (b []Block, err error) {
		l := it.next(e.Agent)
		if l == nil {
			return e.Content, nil
		}
		defer recoverInto(&err)
		return l.fn(ctx, e, next)
	}
	b, err := next()
	if err != nil {
		s.logger.Warn("tools/ptc-dispatch-log listener failed: " + errorText(err))
		return e.Content
	}
	return b
}
