package engine

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/display"
)

// stage says where a call goes next (§3): dispatch runs the body, post skips
// it but still runs post-execute, final goes straight to finish.
type stage uint8

const (
	stageDispatch stage = iota
	stagePost
	stageFinal
)

// call is one execution going through the pipeline's stages.
type call struct {
	svc      *Service
	ctx      context.Context // the caller's
	exec     *Execution
	run      *Run
	ep       *epochState // the epoch it began in: its tools and listeners
	finalize func(*Execution, *Result) ([]Block, error)
	project  func(*Execution, *Result) ([]Block, error)
	invoked  bool // the body was invoked
	hidden   bool // the caller's context hides the tool (WithToolFilter)
	denied   bool // a policy denied or blocked the call (for its span)
	// wrapperErr is the first throw of an inner tools/execute wrapper.
	wrapperErr error
	// tel is the call's telemetry; nil when the Service records none.
	tel *callSpan

	// Allocated with the call: its Run, and the tools/execute chain's
	// iteration and next (runWrappers).
	runv  Run
	wrap  iter[ExecuteFunc]
	nextW func(ctx context.Context) *Result
}

// resolve returns the call's registration in the registry of its epoch,
// nil for a tool the caller's context hides (WithToolFilter).
func (c *call) resolve() *registration {
	if c.hidden {
		return nil
	}
	return c.svc.resolveIn(c.ep.reg.Load(), c.exec.name, c.exec.agent, c.exec.toolSet)
}

// begin is creation (§3.1, C1–C5). A final stage comes with its result.
func (s *Service) begin(ctx context.Context, in Input) (*call, stage, *Result) {
	exec := &Execution{
		callID: in.CallID, rootCallID: in.RootCallID, name: in.Name,
		agent: in.Agent, parent: in.Parent, schema: in.Schema, toolSet: in.ToolSet, log: in.Log,
	}
	if exec.rootCallID == "" {
		exec.rootCallID = exec.callID
	}
	var limit *ToolError // a nested call past the depth or its root's budget
	exec.token, limit = s.nest(in.Parent, exec.callID, in.OwnBudget)
	var tel *callSpan
	if s.tel != nil {
		ctx, tel = s.tel.startCall(ctx, in, exec.token.depth)
	}
	c := &call{svc: s, ctx: ctx, exec: exec, ep: s.enterEpoch(), tel: tel}
	c.hidden = in.Name != TransportName && !Admits(ctx, in.Name)
	exec.epoch = c.ep.n
	// C2: the visible definition, and whether the surface is collapsed.
	reg := c.resolve()
	collapsed := reg != nil && in.Parent == nil && in.Name != TransportName && s.collapsed(in.Agent)
	aborted := ctx.Err() != nil
	// C3: capture the finalizer and projector before the arguments are read.
	if reg != nil {
		exec.def = reg.def
		if !collapsed || aborted {
			c.finalize = reg.def.FinalizeContent
			c.project = reg.def.ProjectContent
		}
	}
	// C4: the arguments, snapshotted once.
	args, err := dsl.SnapshotAt("arguments", in.Arguments)
	if err != nil {
		exec.arguments = dsl.Undefined{}
		return c, stageFinal, failureResult(&Failure{Message: msgArgsNotLossless})
	}
	exec.arguments = args
	c.runv = Run{Execution: exec, caller: ctx}
	c.run = &c.runv
	// Nesting bounds: like the checks above, before any policy runs.
	if limit != nil {
		return c, stageFinal, errorResult(limit)
	}
	// C5
	if collapsed {
		if aborted {
			return c, stageFinal, abortedResult(true)
		}
		return c, stageFinal, errorResult(errCollapsed(in.Name))
	}
	return c, stageDispatch, nil
}

// newRoot mints the token of a call that begins a call tree, allocated
// with the tree.
func newRoot(depth int, callID string) *Token {
	p := &struct {
		t    Token
		tree callTree
	}{t: Token{depth: depth}, tree: callTree{rootID: callID}}
	p.t.tree = &p.tree
	return &p.t
}

// nest mints a call's token under parent (nil for a root call) and says
// whether the call breaks a nesting bound: the depth first, then the budget
// of its root, which every nested call counts against, failing ones included.
// A call with its own budget (Input.OwnBudget) is the root of a fresh one.
func (s *Service) nest(parent *Token, callID string, ownBudget bool) (*Token, *ToolError) {
	if parent == nil || parent.tree == nil {
		return newRoot(1, callID), nil
	}
	var t *Token
	var n int64
	if ownBudget {
		t = newRoot(parent.depth+1, callID)
	} else {
		t = &Token{depth: parent.depth + 1, tree: parent.tree}
		n = t.tree.nested.Add(1)
	}
	switch {
	case t.depth > s.maxDepth:
		return t, errTooDeep(s.maxDepth)
	case n > s.nestedBudget:
		return t, errOverBudget(t.tree.rootID, s.nestedBudget)
	}
	return t, nil
}

// prepare is §3.2 (P1–P7): pre-execute, approval and guards.
func (c *call) prepare() (stage, *Result) {
	if c.ctx.Err() != nil {
		return stageFinal, abortedResult(true)
	}
	st, r, err := c.prepareSteps()
	if err != nil {
		return stageFinal, errorResult(err)
	}
	return st, r
}

func (c *call) prepareSteps() (stage, *Result, error) {
	d, err := c.svc.runPre(c.ctx, c.exec)
	if err != nil {
		return 0, nil, c.policyFailure(err)
	}
	approvalCancelled := false
	switch d.Kind {
	case PreCancel:
		return stagePost, abortedResult(true), nil
	case PreAsk:
		d, approvalCancelled, err = c.svc.approve(c.ctx, c.exec, d)
		if err != nil {
			return 0, nil, err
		}
	}
	if approvalCancelled && c.ctx.Err() != nil {
		return stagePost, abortedResult(true), nil
	}
	if d.Kind == PreDeny {
		c.denied = true
		return stagePost, denial(d.Reason, d.Info), nil
	}
	reason, err := c.svc.checkGuards(c.ctx, c.ep.reg.Load(), c.exec)
	if err != nil {
		return 0, nil, c.policyFailure(err)
	}
	if reason != "" {
		c.denied = true
		return stagePost, denial(reason, nil), nil
	}
	if c.ctx.Err() != nil {
		return stagePost, abortedResult(true), nil
	}
	return stageDispatch, nil, nil
}

// policyFailure is the error a call fails with when a pre-execute listener
// or a guard failed with err. They see the arguments before the body
// validates them, and may fail because of them: when the tool's parameter
// schema rejects the arguments, the call reports that (the INVALID_ARGS
// failure the body would give, which the model can act on), not err.
func (c *call) policyFailure(err error) error {
	reg := c.resolve()
	if reg == nil || reg.def.ValidateArgs == nil {
		return err
	}
	if vs := validateArgs(reg.def.ValidateArgs, c.exec.arguments); len(vs) > 0 {
		return &ArgsError{Violations: vs}
	}
	return err
}

// validateArgs calls a definition's ValidateArgs; a panic counts as valid
// arguments, leaving the policy's error as the call's.
func validateArgs(f func(args any) []string, args any) (vs []string) {
	defer func() {
		if recover() != nil {
			vs = nil
		}
	}()
	return f(args)
}

func denial(reason string, info *ErrorInfo) *Result {
	f := &Failure{Message: reason}
	if info != nil {
		i := *info
		f.Info = &i
	}
	return failureResult(f)
}

// runPre runs the tools/pre-execute waterfall and checks its decision.
func (s *Service) runPre(ctx context.Context, exec *Execution) (PreDecision, error) {
	if s.pre.empty() {
		return Allow(), nil
	}
	it := s.pre.iter(exec.epoch)
	end := func() bool { return it.end(exec.agent) }
	exec.endPre.Store(&end)
	defer exec.endPre.Store(nil)
	var next func() (PreDecision, error)
	next = func() (d PreDecision, err error) {
		l := it.next(exec.agent)
		if l == nil {
			return Allow(), nil
		}
		if svc := it.t.svc; svc.tel != nil { // not s: the closure stays as small as untraced
			return svc.tracedPre(ctx, exec, l, next)
		}
		defer recoverInto(&err)
		return l.fn(ctx, exec, next)
	}
	d, err := next()
	if err != nil {
		return d, err
	}
	return d, checkPre(d)
}

// EndPreChain is for script hosts. Called from a tools/pre-execute listener
// with the execution it was given, it reports whether calling next would run no further
// listener; if so it ends the chain (a listener added meanwhile is not run
// for this call) and returns the decision next would return. A host whose
// listener's next() must otherwise leave its interpreter to ask the engine
// can answer it in place.
func EndPreChain(exec *Execution) (PreDecision, bool) {
	if exec == nil {
		return PreDecision{}, false
	}
	if end := exec.endPre.Load(); end == nil || !(*end)() {
		return PreDecision{}, false
	}
	return Allow(), true
}

// EndPostChain is [EndPreChain] for a tools/post-execute listener: the
// decision next would return at the end of the chain is accept.
func EndPostChain(exec *Execution) (PostDecision, bool) {
	if exec == nil {
		return PostDecision{}, false
	}
	if end := exec.endPost.Load(); end == nil || !(*end)() {
		return PostDecision{}, false
	}
	return Accept(), true
}

func checkPre(d PreDecision) error {
	switch d.Kind {
	case PreAllow, PreCancel:
		if d.Reason != "" || d.Info != nil || d.DisplayReason != "" {
			return fmt.Errorf("tools/pre-execute decision %q carries fields it does not take", d.Kind)
		}
	case PreDeny:
		if d.DisplayReason != "" {
			return errors.New(`tools/pre-execute decision "deny" carries fields it does not take`)
		}
	case PreAsk:
		if d.Info != nil {
			return errors.New(`tools/pre-execute decision "ask" carries fields it does not take`)
		}
	default:
		return fmt.Errorf("tools/pre-execute listener returned an invalid decision kind %q", d.Kind)
	}
	return nil
}

// recoverInto turns a panic of listener or tool code into an error.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = panicError{v}
	}
}

// dispatch is §3.3 (D1–D5): the tools/execute wrappers around the body.
func (c *call) dispatch() (stage, *Result) {
	r, err := c.runWrappers()
	if err == nil {
		r, err = c.normalize(r)
	}
	if err != nil {
		return stageFinal, errorResult(err) // D5: deferred contexts are lost
	}
	// D4
	deferred, _ := c.run.state()
	if len(deferred) > 0 {
		r = r.withContexts(append(deferred, r.AdditionalContexts...))
	}
	if c.ctx.Err() != nil && !r.IsError {
		r = abortedResult(!c.invoked).withContexts(r.AdditionalContexts)
	}
	return stagePost, r
}

func (c *call) runWrappers() (*Result, error) {
	s := c.svc
	if s.exec.empty() {
		return c.body(c.ctx), nil
	}
	c.wrap = s.exec.iter(c.ep.n)
	l := c.wrap.next(c.exec.agent)
	if l == nil {
		return c.body(c.ctx), nil
	}
	c.nextW = c.nextWrapper
	r, err := c.callWrapper(l, c.ctx, c.nextW)
	if err == nil && r == nil {
		err = errors.New("tools/execute wrapper returned no result")
	}
	if err == nil && c.wrapperErr != nil {
		err = c.wrapperErr
	}
	return r, err
}

// nextWrapper is the next(ctx) a tools/execute wrapper gets: the next
// wrapper of the chain, or the body after the last.
func (c *call) nextWrapper(ctx context.Context) *Result {
	if ctx == nil {
		ctx = c.ctx
	}
	l := c.wrap.next(c.exec.agent)
	if l == nil {
		return c.body(ctx)
	}
	r, err := c.callWrapper(l, ctx, c.nextW)
	if err == nil && r == nil {
		err = errors.New("tools/execute wrapper returned no result")
	}
	if err == nil {
		r, err = c.normalize(r)
	}
	if err != nil {
		// An inner wrapper's throw propagates through the chain (D5): the
		// outer wrapper sees it as a failure, and the call ends with it.
		if c.wrapperErr == nil {
			c.wrapperErr = err
		}
		return errorResult(err)
	}
	return r
}

func (c *call) callWrapper(l *listener[ExecuteFunc], ctx context.Context, next func(context.Context) *Result) (r *Result, err error) {
	if c.svc.tel != nil {
		return c.tracedWrapper(l, ctx, next)
	}
	defer recoverInto(&err)
	return l.fn(ctx, c.exec, next)
}

// body is the body stage (D2); it never fails, failures are results.
func (c *call) body(ctx context.Context) *Result {
	fused, release := fuse(c.ctx, ctx)
	defer release()
	if fused.Err() != nil {
		return abortedResult(true)
	}
	reg := c.resolve()
	if reg == nil {
		return errorResult(errUnknownTool(c.exec.name))
	}
	c.invoked = true
	value, err := callBody(reg.def, fused, c.exec.arguments, c.run)
	if err != nil {
		return errorResult(err)
	}
	var r *Result
	if pre, ok := value.(*Prerendered); ok {
		r, err = c.successRendered(reg, pre.Value, pre)
	} else {
		r, err = c.success(reg, value)
	}
	if err != nil {
		return errorResult(err)
	}
	if fused.Err() != nil {
		return abortedResult(false)
	}
	return r
}

func callBody(def *Definition, ctx context.Context, args any, run *Run) (v any, err error) {
	defer recoverInto(&err)
	if def.Execute == nil {
		return nil, fmt.Errorf("tool %q has no execute function", def.Name)
	}
	return def.Execute(ctx, args, run)
}

// fuse returns a ctx cancelled when either is, with the earlier of their
// deadlines and the caller's values; the caller's own when they are the same.
// release drops the link.
func fuse(caller, other context.Context) (context.Context, func()) {
	if other == caller {
		return caller, func() {}
	}
	base, stopDeadline := caller, context.CancelFunc(func() {})
	if d, ok := other.Deadline(); ok {
		if cd, has := caller.Deadline(); !has || d.Before(cd) {
			base, stopDeadline = context.WithDeadlineCause(caller, d, context.Cause(other))
		}
	}
	ctx, cancel := context.WithCancelCause(base)
	if other.Err() != nil {
		// AfterFunc would cancel from another goroutine, later.
		cancel(context.Cause(other))
		return ctx, stopDeadline
	}
	stop := context.AfterFunc(other, func() { cancel(context.Cause(other)) })
	return ctx, func() { stop(); cancel(context.Canceled); stopDeadline() }
}

// normalize is D3: what the wrapper chain returned, made canonical.
func (c *call) normalize(r *Result) (*Result, error) {
	if r.canonical == c.exec.token {
		return r, nil
	}
	if r.IsError {
		f := r.Error
		if f == nil {
			f = &Failure{Message: ""}
		}
		out := &Result{IsError: true, Error: f, Content: r.Content, Meta: r.Meta, HasMeta: r.HasMeta}
		out.AdditionalContexts = copyContexts(r.AdditionalContexts)
		return out, nil
	}
	reg := c.resolve()
	if reg == nil {
		return nil, errUnknownTool(c.exec.name)
	}
	out, err := c.success(reg, r.Value) // a fresh result, ours to set
	if err != nil {
		return nil, err
	}
	out.AdditionalContexts = copyContexts(r.AdditionalContexts)
	return out, nil
}

// copyContexts is ms detached, nil when there are none (the key is absent).
func copyContexts(ms []Message) []Message {
	if len(ms) == 0 {
		return nil
	}
	return append([]Message(nil), ms...)
}

// withContexts returns a copy of r carrying contexts (none: the key is absent).
func (r *Result) withContexts(ms []Message) *Result {
	out := *r
	out.AdditionalContexts = copyContexts(ms)
	return &out
}

// success builds a canonical success from a candidate value (§3.4, S1–S7).
// Its errors are *OutputError.
func (c *call) success(reg *registration, candidate any) (*Result, error) {
	return c.successRendered(reg, candidate, nil)
}

// Prerendered is what a script host's Execute may return when it rendered
// its value itself, in the same trip into its interpreter as the body: it
// checked Value against the tool's output schema, and only then called the
// tool's render, whose blocks or error are Content and Err. The pipeline
// treats Value as any body's value (snapshot, validation) and, when it is
// valid, takes Content and Err as what render returned instead of calling
// it. Go tools have no use for it.
//
// A host that also computed the tool's presentationMeta in that trip sets
// HasMeta, with its value or error in Meta and MetaErr.
type Prerendered struct {
	Value   any
	Content []Block
	Err     error

	HasMeta bool
	Meta    any
	MetaErr error
}

// SnapshotFailure is a body's value that its host could not turn into a
// Go value for a reason other than its kind (a size, count or depth limit,
// see dsl.Limits): the pipeline reports the tool's output as invalid with
// "value snapshot failed: <Err>", so the model learns which limit it hit.
type SnapshotFailure struct{ Err error }

// successRendered is success with render's outcome known (pre not nil).
func (c *call) successRendered(reg *registration, candidate any, pre *Prerendered) (*Result, error) {
	def := reg.def
	fail := func(v string) error { return &OutputError{Tool: def.Name, Violations: []string{v}} }
	if sf, ok := candidate.(SnapshotFailure); ok {
		return nil, fail("value snapshot failed: " + sf.Err.Error())
	}
	value, err := dsl.Snapshot(candidate)
	if err != nil {
		return nil, fail("value is not lossless JSON")
	}
	if vs := reg.out.Validate(value); vs != nil {
		return nil, &OutputError{Tool: def.Name, Violations: vs}
	}
	args := c.exec.arguments
	var content []Block
	if pre != nil {
		content, err = pre.Content, pre.Err
	} else {
		content, err = callRender(def.Output.Render, args, value)
	}
	if err != nil {
		return nil, fail("output.render failed: " + errorText(err))
	}
	if !contentLossless(content) {
		return nil, fail("output.render returned non-lossless JSON")
	}
	r := &Result{Value: value, Content: content, canonical: c.exec.token}
	if def.Output.PresentationMeta != nil {
		var meta any
		if pre != nil && pre.HasMeta {
			meta, err = pre.Meta, pre.MetaErr
		} else {
			meta, err = callMeta(def.Output.PresentationMeta, args, value)
		}
		if err != nil {
			return nil, fail("output.presentationMeta failed: " + errorText(err))
		}
		if r.Meta, err = dsl.Snapshot(meta); err != nil {
			return nil, fail("output.presentationMeta returned non-lossless JSON")
		}
		r.HasMeta = true
	}
	_, r.ConcludesTurn = c.run.state()
	return r, nil
}

func callRender(f func(args, value any) ([]Block, error), args, value any) (b []Block, err error) {
	defer recoverInto(&err)
	return f(args, value)
}

func callMeta(f func(args, value any) (any, error), args, value any) (m any, err error) {
	defer recoverInto(&err)
	return f(args, value)
}

// LosslessContent reports whether blocks are lossless JSON content, as the
// pipeline requires of what render returns: a host that renders in the
// body's trip (Prerendered) stops there too when they are not.
func LosslessContent(blocks []Block) bool { return contentLossless(blocks) }

// contentLossless reports whether blocks are lossless JSON; a block whose
// JSON method panics is not.
func contentLossless(blocks []Block) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	for _, b := range blocks {
		switch x := b.(type) {
		case TextBlock, ReasoningBlock:
			// A string is lossless when it is valid UTF-8 (dsl.IsLossless's
			// test, without boxing the string into an interface).
			if !utf8.ValidString(blockText(x)) {
				return false
			}
		case nil:
			return false
		default:
			if !dsl.IsLossless(b.JSON()) {
				return false
			}
		}
	}
	return true
}

func blockText(b Block) string {
	switch x := b.(type) {
	case TextBlock:
		return x.Text
	case ReasoningBlock:
		return x.Text
	}
	return ""
}

// postExecute is §3.5 (F0–F7), then finish.
func (c *call) postExecute(r *Result) *Result {
	out, err := c.postSteps(r)
	if err != nil {
		out = errorResult(err)
	}
	return c.finish(out)
}

func (c *call) postSteps(r *Result) (*Result, error) {
	if c.project != nil {
		blocks, err := c.callFinalizer(stageProject, c.project, r)
		if err != nil {
			return nil, err
		}
		if blocks != nil {
			cp := *r
			cp.Content = blocks
			r = &cp
		}
	}
	d, err := c.svc.runPost(c.ctx, c.exec, r)
	if err != nil {
		return nil, err
	}
	switch {
	case d.Kind == PostBlock:
		c.denied = true
		msg := blocksText(d.Feedback)
		if msg == "" {
			msg = msgBlocked
		}
		out := &Result{IsError: true, Error: &Failure{Message: msg}, Content: d.Feedback}
		r = out.withContexts(d.AdditionalContexts)
	case d.HasContent && d.HasValue:
		return nil, errors.New(msgBothValueAndContent)
	case d.HasValue:
		if r.IsError {
			return nil, errors.New(msgValueOfFailed)
		}
		reg := c.resolve()
		if reg == nil {
			return nil, errUnknownTool(c.exec.name)
		}
		out, err := c.success(reg, d.Value)
		if err != nil {
			return nil, err
		}
		r = out.withContexts(append(append([]Message(nil), r.AdditionalContexts...), d.AdditionalContexts...))
	default:
		cp := *r
		if d.HasContent {
			cp.Content = d.Content
		}
		r = cp.withContexts(append(append([]Message(nil), r.AdditionalContexts...), d.AdditionalContexts...))
	}
	if c.ctx.Err() != nil && !r.IsError {
		r = abortedResult(!c.invoked).withContexts(r.AdditionalContexts)
	}
	return r, nil
}

// runPost runs the tools/post-execute waterfall and checks its decision.
func (s *Service) runPost(ctx context.Context, exec *Execution, r *Result) (PostDecision, error) {
	if s.post.empty() {
		return Accept(), nil
	}
	it := s.post.iter(exec.epoch)
	end := func() bool { return it.end(exec.agent) }
	exec.endPost.Store(&end)
	defer exec.endPost.Store(nil)
	var next func() (PostDecision, error)
	next = func() (d PostDecision, err error) {
		l := it.next(exec.agent)
		if l == nil {
			return Accept(), nil
		}
		if svc := it.t.svc; svc.tel != nil { // not s: the closure stays as small as untraced
			return svc.tracedPost(ctx, exec, r, l, next)
		}
		defer recoverInto(&err)
		return l.fn(ctx, exec, r, next)
	}
	d, err := next()
	if err != nil {
		return d, err
	}
	switch d.Kind {
	case PostAccept:
		if d.Feedback != nil {
			return d, errors.New(`tools/post-execute decision "accept" carries feedback`)
		}
	case PostBlock:
		if d.HasContent || d.HasValue {
			return d, errors.New(`tools/post-execute decision "block" carries content or a value`)
		}
	default:
		return d, fmt.Errorf("tools/post-execute listener returned an invalid decision kind %q", d.Kind)
	}
	return d, nil
}

// callFinalizer runs a tool's projector or finalizer (stage says which).
func (c *call) callFinalizer(stage string, f func(*Execution, *Result) ([]Block, error), r *Result) ([]Block, error) {
	ss := c.svc.tel.startStage(c.ctx, stage, "")
	b, err := runFinalizer(f, c.exec, r)
	ss.end(finalizerDecision(b), false, err)
	return b, err
}

func runFinalizer(f func(*Execution, *Result) ([]Block, error), exec *Execution, r *Result) (b []Block, err error) {
	defer recoverInto(&err)
	return f(exec, r)
}

// finish is §3.7 (M1–M5): every outcome goes through it exactly once.
func (c *call) finish(r *Result) *Result {
	r = materialize(r)
	if c.finalize != nil {
		blocks, err := c.callFinalizer(stageFinalize, c.finalize, r)
		switch {
		case err != nil:
			r = errorResult(err)
		case blocks != nil:
			cp := *r
			cp.Content = blocks
			if !resultLossless(&cp) {
				r = failureResult(&Failure{Message: msgResultNotLossless})
			} else {
				r = &cp
			}
		}
	}
	if c.svc.tel != nil {
		endCall(c, r)
	}
	c.svc.notifyResult(c.ctx, c.exec, r)
	c.svc.leaveEpoch(c.ep)
	return r
}

// materialize returns r detached, or the lossless-result failure (M1).
func materialize(r *Result) *Result {
	if !resultLossless(r) {
		return failureResult(&Failure{Message: msgResultNotLossless})
	}
	out := *r
	out.Content = append([]Block(nil), r.Content...)
	if out.Content == nil {
		out.Content = []Block{}
	}
	if len(r.AdditionalContexts) == 0 {
		out.AdditionalContexts = nil
	} else {
		out.AdditionalContexts = append([]Message(nil), r.AdditionalContexts...)
	}
	if out.IsError {
		out.Value, out.ConcludesTurn = nil, false
	}
	return &out
}

func resultLossless(r *Result) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	if !contentLossless(r.Content) {
		return false
	}
	if r.HasMeta && !dsl.IsLossless(r.Meta) {
		return false
	}
	if r.IsError && (r.Error == nil || !dsl.IsLossless(r.Error.Message)) {
		return false
	}
	for _, m := range r.AdditionalContexts {
		if !dsl.IsLossless(m.JSON()) {
			return false
		}
	}
	return true
}

// notifyResult emits tools/result with the call's ctx, less its
// cancellation; observers' failures are contained (M4).
func (s *Service) notifyResult(ctx context.Context, exec *Execution, r *Result) {
	if s.result.empty() {
		return
	}
	if ctx.Done() != nil {
		ctx = context.WithoutCancel(ctx)
	}
	it := s.result.iter(exec.epoch)
	for l := it.next(exec.agent); l != nil; l = it.next(exec.agent) {
		if err := callObserver(func() error { return l.fn(ctx, exec, r) }); err != nil {
			s.logger.WarnContext(ctx, fmt.Sprintf("tool %s (%s): tools/result observer failed: %s", display.Quote(exec.name),
				display.Line(exec.callID, display.MaxName), display.Line(errorText(err), display.MaxText)))
		}
	}
}
