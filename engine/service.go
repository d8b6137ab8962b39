package engine

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/dsh-go/dsh/dsl"
)

// Service is the tool engine: the registry, the policy waterfalls and the
// executors. Its methods are safe for concurrent use. Registration and
// listeners go through a [Scope]: [Service.Global] or [Service.Scope].
type Service struct {
	mu sync.RWMutex // guards registry changes, executors and transports

	// epoch is the current epoch, with its registry; tx the swap in
	// progress, if any (see Swap). ended are the epochs swaps ended, in
	// order, until their calls finished.
	epoch   atomic.Pointer[epochState]
	tx      atomic.Pointer[swapTx]
	swapMu  sync.Mutex
	epochMu sync.Mutex
	ended   []*epochState

	executors   map[*Agent]Executor
	defaultExec Executor
	transports  map[*Definition]*registration

	pre    table[PreExecuteFunc]
	exec   table[ExecuteFunc]
	post   table[PostExecuteFunc]
	result table[ResultContextObserver]
	change table[ChangeObserver]
	dlog   table[DispatchLogFunc]

	approval ApprovalService
	logger   *slog.Logger

	maxDepth     int   // see WithMaxNestingDepth
	nestedBudget int64 // see WithNestedCallBudget

	// Telemetry (see trace.go): the options' values, and what New made of
	// them, nil when the engine records nothing.
	tracerProvider trace.TracerProvider
	meterProvider  metric.MeterProvider
	captureContent bool
	tel            *telemetry
}

// The defaults of [WithMaxNestingDepth] and [WithNestedCallBudget].
const (
	MaxNestingDepth  = 64
	NestedCallBudget = 1000
)

// Option configures a Service.
type Option func(*Service)

// WithApproval mounts the service that answers ask decisions.
func WithApproval(a ApprovalService) Option { return func(s *Service) { s.approval = a } }

// WithLogger sets the logger for contained failures (observers, listeners).
func WithLogger(l *slog.Logger) Option { return func(s *Service) { s.logger = l } }

// WithExecutor sets the deployment's default executor (the native executor
// with a cap of 10 otherwise).
func WithExecutor(e Executor) Option { return func(s *Service) { s.defaultExec = e } }

// WithMaxNestingDepth bounds how deep calls nest: a call whose chain of
// parents, from the root call to itself inclusive, is longer than n fails
// before any policy runs (see [CodeNestingLimit]). The default is
// [MaxNestingDepth], the same bound as the Lua host's per-instance one; a
// non-positive n keeps it.
func WithMaxNestingDepth(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.maxDepth = n
		}
	}
}

// WithNestedCallBudget bounds how many calls may nest under one root call,
// at every depth together: the call that would be the (n+1)th fails before
// any policy runs, and so does every later one under that root. The default
// is [NestedCallBudget]; a non-positive n keeps it.
func WithNestedCallBudget(n int) Option {
	return func(s *Service) {
		if n > 0 {
			s.nestedBudget = int64(n)
		}
	}
}

// New returns an empty engine.
func New(opts ...Option) *Service {
	s := &Service{
		executors:  map[*Agent]Executor{},
		transports: map[*Definition]*registration{},
		logger:     slog.New(slog.DiscardHandler),

		maxDepth:     MaxNestingDepth,
		nestedBudget: NestedCallBudget,
	}
	s.epoch.Store(newEpoch(0, newRegState()))
	s.pre.svc, s.exec.svc, s.post.svc, s.result.svc, s.change.svc, s.dlog.svc = s, s, s, s, s, s
	for _, o := range opts {
		o(s)
	}
	if s.defaultExec == nil {
		s.defaultExec = &NativeExecutor{svc: s, maxParallel: defaultMaxParallel}
	}
	s.tel = newTelemetry(s.tracerProvider, s.meterProvider, s.captureContent)
	return s
}

// Global returns a registration context for the global layer. Each call
// returns a new context that owns what is registered through it.
func (s *Service) Global() *Scope { return &Scope{svc: s} }

// Scope returns a registration context for agent's layer (the global one for
// nil). Each call returns a new context that owns what is registered through it.
func (s *Service) Scope(agent *Agent) *Scope { return &Scope{svc: s, agent: agent} }

// Call runs one call through the full pipeline (§3) and returns its final result.
func (s *Service) Call(ctx context.Context, in Input) *Result {
	c, st, r := s.begin(ctx, in)
	if st == stageFinal {
		return c.finish(r)
	}
	st, r = c.prepare()
	if st == stageDispatch {
		st, r = c.dispatch()
	}
	if st == stagePost {
		return c.postExecute(r)
	}
	return c.finish(r)
}

// executorFor returns the executor set for agent or its nearest ancestor, or
// the deployment default.
func (s *Service) executorFor(agent *Agent) Executor {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for a := agent; a != nil; a = a.parent {
		if e, ok := s.executors[a]; ok {
			return e
		}
	}
	return s.defaultExec
}

// transportFor returns the reserved transport's registration when agent's
// executor provides one.
func (s *Service) transportFor(agent *Agent) *registration {
	t, ok := s.executorFor(agent).(TransportExecutor)
	if !ok {
		return nil
	}
	def := t.Transport()
	if def == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.transports[def]; ok {
		return r
	}
	out, err := dsl.Compile(def.Output.Schema)
	if err != nil {
		return nil
	}
	r := &registration{def: def, out: out}
	s.transports[def] = r
	return r
}

// collapsed reports whether agent's surface is collapsed to the transport.
func (s *Service) collapsed(agent *Agent) bool {
	t, ok := s.executorFor(agent).(TransportExecutor)
	return ok && !t.Direct()
}

// Scope is a registration context: the global layer or one agent's. It owns
// what is registered through it; Dispose removes all of it.
type Scope struct {
	svc   *Service
	agent *Agent

	mu       sync.Mutex
	owned    []Disposer
	disposed bool
}

// Agent returns the scope's agent, or nil for the global layer.
func (c *Scope) Agent() *Agent { return c.agent }

// Service returns the engine the scope belongs to.
func (c *Scope) Service() *Service { return c.svc }

// own records a disposer so that Dispose reaches it, and returns one that
// also forgets it.
func (c *Scope) own(d Disposer) Disposer {
	c.mu.Lock()
	if c.disposed {
		c.mu.Unlock()
		d()
		return func() {}
	}
	c.owned = append(c.owned, d)
	c.mu.Unlock()
	return d
}

// Dispose removes everything registered through this scope: tools,
// restrictions, guards and listeners. It is idempotent.
func (c *Scope) Dispose() {
	c.mu.Lock()
	owned := c.owned
	c.owned, c.disposed = nil, true
	c.mu.Unlock()
	if tx := c.svc.openSwap(); tx != nil {
		tx.disposed(c, owned) // a failed swap gives them back
	}
	for _, d := range slices.Backward(owned) {
		d()
	}
}

// Register adds a tool to the scope's layer (§2.2) and returns its disposer.
func (c *Scope) Register(def *Definition, opts ...RegisterOption) (Disposer, error) {
	d, err := c.svc.register(c.agent, def, opts)
	if err != nil {
		return nil, err
	}
	return c.own(d), nil
}

// Restrict filters the tools the scope inherits (§2.3).
func (c *Scope) Restrict(f Filter) (Disposer, error) {
	d, err := c.svc.restrict(c.agent, f)
	if err != nil {
		return nil, err
	}
	return c.own(d), nil
}

// Guard adds a deny-only guard to the scope's layer (§2.5). Of opts only
// [Source] applies: guards run in registration order.
func (c *Scope) Guard(fn GuardFunc, opts ...ListenerOption) Disposer {
	return c.own(c.svc.guard(c.agent, fn, listenerOpts(opts).source))
}

// OnPreExecute adds a tools/pre-execute listener.
func (c *Scope) OnPreExecute(fn PreExecuteFunc, opts ...ListenerOption) Disposer {
	return c.own(c.svc.pre.add(fn, c.agent, listenerOpts(opts)))
}

// OnExecute adds a tools/execute wrapper.
func (c *Scope) OnExecute(fn ExecuteFunc, opts ...ListenerOption) Disposer {
	return c.own(c.svc.exec.add(fn, c.agent, listenerOpts(opts)))
}

// OnPostExecute adds a tools/post-execute listener.
func (c *Scope) OnPostExecute(fn PostExecuteFunc, opts ...ListenerOption) Disposer {
	return c.own(c.svc.post.add(fn, c.agent, listenerOpts(opts)))
}

// OnResult adds a tools/result observer.
func (c *Scope) OnResult(fn ResultObserver, opts ...ListenerOption) Disposer {
	return c.OnResultContext(func(_ context.Context, exec *Execution, r *Result) error { return fn(exec, r) }, opts...)
}

// OnResultContext adds a tools/result observer that is given the call's
// context (see [ResultContextObserver]).
func (c *Scope) OnResultContext(fn ResultContextObserver, opts ...ListenerOption) Disposer {
	return c.own(c.svc.result.add(fn, c.agent, listenerOpts(opts)))
}

// OnChange adds a tools/change listener; it hears every scope's changes.
func (c *Scope) OnChange(fn ChangeObserver) Disposer {
	return c.own(c.svc.change.add(fn, nil, listenerConfig{}))
}

// OnDispatchLog adds a tools/ptc-dispatch-log listener.
func (c *Scope) OnDispatchLog(fn DispatchLogFunc, opts ...ListenerOption) Disposer {
	return c.own(c.svc.dlog.add(fn, c.agent, listenerOpts(opts)))
}

// Get returns the definition visible to the scope under name, or nil
// (restricted-away, conditional and unknown names all read as absent).
func (c *Scope) Get(name string) *Definition {
	if r := c.svc.resolve(name, c.agent, nil); r != nil {
		return r.def
	}
	return nil
}

// Definitions returns the scope's usable definitions in presentation order:
// the unconditional ones and, with a step's tool set, the conditional ones it
// admitted.
func (c *Scope) Definitions(set *ToolSet) []*Definition { return c.svc.definitions(c.agent, set) }

// Executable returns the definition a call to name would run, or nil (the
// call then fails as UNKNOWN_TOOL).
func (c *Scope) Executable(name string, set *ToolSet) *Definition {
	if r := c.svc.resolve(name, c.agent, set); r != nil {
		return r.def
	}
	return nil
}

// Schemas returns what the model is shown: {name, description, parameters}
// per visible tool, parameters a fresh snapshot.
func (c *Scope) Schemas() ([]ToolSchema, error) { return c.svc.schemas(c.agent, nil) }

// Resolve evaluates the activation conditions for one step and returns the
// step's tool set; a failing condition rejects it and nothing is published.
func (c *Scope) Resolve(ctx context.Context, modelSelection any) (*ToolSet, error) {
	return c.svc.resolveSet(ctx, c.agent, modelSelection)
}

// CheckGuards evaluates the guards a call as exec would meet (§2.5).
func (c *Scope) CheckGuards(ctx context.Context, exec *Execution) (string, error) {
	return c.svc.checkGuards(ctx, c.svc.reg(), exec)
}

// SetExecutor selects the executor for the scope's agent and its
// descendants (for the global scope: the deployment default).
func (c *Scope) SetExecutor(e Executor) {
	c.svc.mu.Lock()
	defer c.svc.mu.Unlock()
	if c.agent == nil {
		c.svc.defaultExec = e
		return
	}
	if e == nil {
		delete(c.svc.executors, c.agent)
		return
	}
	c.svc.executors[c.agent] = e
}

// Executor returns the executor that runs the scope's batches.
func (c *Scope) Executor() Executor { return c.svc.executorFor(c.agent) }

// Execute runs a batch of model tool calls through the scope's executor.
func (c *Scope) Execute(ctx context.Context, b Batch) (*BatchResult, error) {
	if b.Agent == nil {
		b.Agent = c.agent
	}
	return c.svc.executorFor(b.Agent).Execute(ctx, b)
}

// Call runs one call as the scope's agent through the full pipeline.
func (c *Scope) Call(ctx context.Context, in Input) *Result {
	if in.Agent == nil {
		in.Agent = c.agent
	}
	return c.svc.Call(ctx, in)
}
