package engine

import "context"

// The policy decisions (dsh.policy.decision) the stages take beyond the
// listeners' own kinds (allow, deny, ask, cancel, accept, block).
const (
	decisionReplace = "replace" // a wrapper's own result, a post-execute listener's content or value, a finalizer's blocks
	decisionKeep    = "keep"    // a projector or finalizer that left the content as it was
)

// preStep is a traced pre-execute listener's next: it remembers what the
// rest of the chain decided, to tell the listener's own decision from one it
// passed on. One allocation holds it all, the stage's span included.
type preStep struct {
	ss       stageSpan
	next     func() (PreDecision, error)
	inner    PreDecision
	innerErr error
	called   bool
}

func (p *preStep) step() (PreDecision, error) {
	p.inner, p.innerErr = p.next()
	p.called = true
	return p.inner, p.innerErr
}

// tracedPre runs the pre-execute listener l, the outermost of the rest of
// the chain, inside its stage span. It is runPre's step when the engine
// records telemetry.
func (s *Service) tracedPre(ctx context.Context, exec *Execution, l *listener[PreExecuteFunc], next func() (PreDecision, error)) (d PreDecision, err error) {
	p := &preStep{next: next}
	s.tel.initStage(&p.ss, ctx, stagePreExecute, l.source)
	defer func() {
		delegated := p.called && err == nil && p.innerErr == nil && d.Kind == p.inner.Kind && d.Reason == p.inner.Reason
		p.ss.end(string(d.Kind), delegated, err)
	}()
	defer recoverInto(&err)
	return l.fn(ctx, exec, p.step)
}

// postStep is [preStep] for a post-execute listener.
type postStep struct {
	ss       stageSpan
	next     func() (PostDecision, error)
	inner    PostDecision
	innerErr error
	called   bool
}

func (p *postStep) step() (PostDecision, error) {
	p.inner, p.innerErr = p.next()
	p.called = true
	return p.inner, p.innerErr
}

// tracedPost is [Service.tracedPre] for a post-execute listener.
func (s *Service) tracedPost(ctx context.Context, exec *Execution, r *Result, l *listener[PostExecuteFunc], next func() (PostDecision, error)) (d PostDecision, err error) {
	p := &postStep{next: next}
	s.tel.initStage(&p.ss, ctx, stagePostExecute, l.source)
	defer func() {
		delegated := p.called && err == nil && p.innerErr == nil && d.Kind == p.inner.Kind &&
			d.HasContent == p.inner.HasContent && d.HasValue == p.inner.HasValue
		p.ss.end(postDecision(d), delegated, err)
	}()
	defer recoverInto(&err)
	return l.fn(ctx, exec, r, p.step)
}

// postDecision names a post-execute decision: block, replace (content or
// value), or accept.
func postDecision(d PostDecision) string {
	if d.Kind == PostAccept && (d.HasContent || d.HasValue) {
		return decisionReplace
	}
	return string(d.Kind)
}

// tracedWrapper runs the tools/execute wrapper l inside its stage span: its
// decision is allow when it returned what the rest of the chain gave it,
// replace when it returned a result of its own.
func (c *call) tracedWrapper(l *listener[ExecuteFunc], ctx context.Context, next func(context.Context) *Result) (r *Result, err error) {
	ss := c.svc.tel.startStage(c.ctx, stageExecute, l.source)
	var inner *Result
	step := func(ctx context.Context) *Result {
		inner = next(ctx)
		return inner
	}
	defer func() {
		decision := decisionReplace
		if r != nil && r == inner {
			decision = string(PreAllow)
		}
		ss.end(decision, false, err)
	}()
	defer recoverInto(&err)
	return l.fn(ctx, c.exec, step)
}

// guardDecision names a guard's verdict: deny with a reason, else allow.
func guardDecision(reason string) string {
	if reason != "" {
		return string(PreDeny)
	}
	return string(PreAllow)
}

// finalizerDecision names what a projector or finalizer did.
func finalizerDecision(blocks []Block) string {
	if blocks != nil {
		return decisionReplace
	}
	return decisionKeep
}
