package engine

import "context"

// Staged is one call driven stage by stage, for a scheduler that orders the
// stages of many calls itself (the PTC sub-call bridge, which starts a
// program's calls in the order it made them; docs/run-code.md):
// [Service.Stage] runs creation, pre-execute and the guards;
// Dispatch runs the tools/execute chain and the body, on any goroutine;
// Commit runs post-execute (or finishes a call that ended before its body)
// and returns the final result. [Service.Call] is the three in a row.
//
// A panic in a stage (a broken listener or tool written in Go) is returned
// as an error, as the native executor reports an internal failure; the call
// is then over.
type Staged struct {
	c  *call
	st stage
	r  *Result
	id string
}

// Stage begins a call and runs it up to its dispatch.
func (s *Service) Stage(ctx context.Context, in Input) (*Staged, error) {
	x := &Staged{id: in.CallID}
	err := guard(func() {
		var (
			c  *call
			st stage
			r  *Result
		)
		c, st, r = s.begin(ctx, in)
		if st != stageFinal {
			st, r = c.prepare()
		}
		x.c, x.st, x.r = c, st, r
	}, "prepare", in.CallID)
	if err != nil {
		return nil, err
	}
	return x, nil
}

// NeedsDispatch reports whether the call reached its dispatch stage (the
// tools/execute chain, and the body unless the tool is unknown or its
// arguments fail): Dispatch is then due before Commit.
func (x *Staged) NeedsDispatch() bool { return x.st == stageDispatch }

// Execution is the call's execution (for the events a scheduler writes).
func (x *Staged) Execution() *Execution { return x.c.exec }

// Dispatch runs the tools/execute chain and the body, when the call reached
// them; otherwise it does nothing.
func (x *Staged) Dispatch() error {
	if x.st != stageDispatch {
		return nil
	}
	return guard(func() { x.st, x.r = x.c.dispatch() }, "dispatch", x.id)
}

// Commit runs post-execute, or finishes a call that ended before its body,
// and returns the final result. Call it once, after Dispatch.
func (x *Staged) Commit() (*Result, error) {
	var r *Result
	err := guard(func() {
		if x.st == stagePost {
			r = x.c.postExecute(x.r)
		} else {
			r = x.c.finish(x.r)
		}
	}, "commit", x.id)
	return r, err
}
