package scripting

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dsh-go/dsh/engine"
)

// Site is where in a plugin's source an effect was made (1-based; zero when
// unknown), so a failure to commit it is reported at that line.
type Site struct{ Line, Col int }

// state is a plugin's lifecycle: effects are recorded while it loads,
// applied at once while it is live, refused once it is disposed.
type state uint8

const (
	loading state = iota
	live
	disposed
)

// Plugin is one script file's effects on the engine: tools, restrictions,
// guards and listeners. Effects made while its top level runs are recorded
// and committed together by [Plugin.Commit], or not at all; effects made
// later (by a tool body or a listener) take effect at once. [Plugin.Dispose]
// removes them all as a unit.
type Plugin struct {
	svc    *engine.Service
	file   string // the path diagnostics name
	agents func(id string) *engine.Agent

	mu        sync.Mutex
	st        state
	pending   []*effect
	committed []Effect                        // what Commit applied, for Effects
	scopes    map[*engine.Agent]*engine.Scope // the plugin's registration contexts
	onClose   []func()
	inflight  int
	drained   chan struct{} // closed when inflight drops to zero while disposing
}

// NewPlugin returns a plugin in its loading state; file names it in
// diagnostics, agents maps the agent ids scripts name to the engine's agents
// (nil: a directory of its own).
func NewPlugin(svc *engine.Service, file string, agents func(id string) *engine.Agent) *Plugin {
	if agents == nil {
		agents = NewAgents().Agent
	}
	return &Plugin{svc: svc, file: file, agents: agents, scopes: map[*engine.Agent]*engine.Scope{}}
}

// Agent returns the agent a script names by id, as the embedder resolves it.
func (p *Plugin) Agent(id string) *engine.Agent { return p.agents(id) }

// File returns the path the plugin's diagnostics name.
func (p *Plugin) File() string { return p.file }

// Service returns the engine the plugin's effects go to.
func (p *Plugin) Service() *engine.Service { return p.svc }

// Effect describes one effect a plugin's top level made.
type Effect struct {
	// Kind is "tool", "restriction", "guard", or the event a listener
	// is for ("tools/pre-execute", "tools/execute", "tools/post-execute",
	// "tools/result", "tools/change", "tools/ptc-dispatch-log").
	Kind  string
	Name  string        // the tool's name, for a tool
	Agent *engine.Agent // the scope it was made in; nil for the global layer
	Site  Site
}

// Effects lists the effects the plugin's top level made, in order (those
// disposed before the commit left out). Effects made later, by its calls,
// are not listed.
func (p *Plugin) Effects() []Effect {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st != loading {
		return append([]Effect(nil), p.committed...)
	}
	out := make([]Effect, 0, len(p.pending))
	for _, e := range p.pending {
		if !e.dropped {
			out = append(out, Effect{Kind: e.kind, Name: e.name, Agent: e.agent, Site: e.site})
		}
	}
	return out
}

// effect is one recorded registration, applied at commit.
type effect struct {
	kind, name string
	site       Site
	agent      *engine.Agent
	apply      func(s *engine.Scope) (engine.Disposer, error)
	dispose    engine.Disposer // once applied
	dropped    bool            // disposed before commit
}

// scope returns the plugin's registration context for agent. Callers hold p.mu.
func (p *Plugin) scope(agent *engine.Agent) *engine.Scope {
	s := p.scopes[agent]
	if s == nil {
		s = p.svc.Scope(agent)
		p.scopes[agent] = s
	}
	return s
}

// do records an effect while loading, or applies it while live.
func (p *Plugin) do(kind, name string, site Site, agent *engine.Agent, apply func(s *engine.Scope) (engine.Disposer, error)) (engine.Disposer, error) {
	p.mu.Lock()
	switch p.st {
	case disposed:
		p.mu.Unlock()
		return nil, ErrDisposed
	case live:
		s := p.scope(agent)
		p.mu.Unlock()
		return apply(s)
	}
	e := &effect{kind: kind, name: name, site: site, agent: agent, apply: apply}
	p.pending = append(p.pending, e)
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		d := e.dispose
		e.dropped = true
		p.mu.Unlock()
		if d != nil {
			d()
		}
	}, nil
}

// Register adds a tool to agent's layer (nil: the global layer). While the
// plugin loads, the definition is checked at once (so a bad one fails where
// the script registers it) and added at commit.
func (p *Plugin) Register(site Site, agent *engine.Agent, def *engine.Definition, opts ...engine.RegisterOption) (engine.Disposer, error) {
	if err := engine.ValidateDefinition(def); err != nil {
		return nil, err
	}
	return p.do("tool", def.Name, site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.Register(def, opts...) })
}

// Restrict filters what agent's scope inherits.
func (p *Plugin) Restrict(site Site, agent *engine.Agent, f engine.Filter) (engine.Disposer, error) {
	if err := engine.ValidateFilter(agent, f); err != nil {
		return nil, err
	}
	f = engine.Filter{Allow: cloneNames(f.Allow), Deny: cloneNames(f.Deny)}
	return p.do("restriction", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.Restrict(f) })
}

func cloneNames(n []string) []string {
	if n == nil {
		return nil
	}
	return append([]string{}, n...)
}

// Guard adds a deny-only guard to agent's layer.
func (p *Plugin) Guard(site Site, agent *engine.Agent, fn engine.GuardFunc) (engine.Disposer, error) {
	return p.do("guard", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.Guard(fn, engine.Source(p.file)), nil })
}

// OnPreExecute adds a tools/pre-execute listener for agent's calls (nil: all).
func (p *Plugin) OnPreExecute(site Site, agent *engine.Agent, fn engine.PreExecuteFunc, opts ...engine.ListenerOption) (engine.Disposer, error) {
	return p.do("tools/pre-execute", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.OnPreExecute(fn, p.sourced(opts)...), nil })
}

// OnExecute adds a tools/execute wrapper.
func (p *Plugin) OnExecute(site Site, agent *engine.Agent, fn engine.ExecuteFunc, opts ...engine.ListenerOption) (engine.Disposer, error) {
	return p.do("tools/execute", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.OnExecute(fn, p.sourced(opts)...), nil })
}

// OnPostExecute adds a tools/post-execute listener.
func (p *Plugin) OnPostExecute(site Site, agent *engine.Agent, fn engine.PostExecuteFunc, opts ...engine.ListenerOption) (engine.Disposer, error) {
	return p.do("tools/post-execute", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.OnPostExecute(fn, p.sourced(opts)...), nil })
}

// sourced is opts naming the plugin's file as the listener's source, which
// the engine's policy spans show.
func (p *Plugin) sourced(opts []engine.ListenerOption) []engine.ListenerOption {
	return append(append([]engine.ListenerOption{}, opts...), engine.Source(p.file))
}

// OnResult adds a tools/result observer, given the call's context (its
// span: the observer's log lines carry the call's trace ids).
func (p *Plugin) OnResult(site Site, agent *engine.Agent, fn engine.ResultContextObserver, opts ...engine.ListenerOption) (engine.Disposer, error) {
	return p.do("tools/result", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.OnResultContext(fn, opts...), nil })
}

// OnChange adds a tools/change listener.
func (p *Plugin) OnChange(site Site, fn engine.ChangeObserver) (engine.Disposer, error) {
	return p.do("tools/change", "", site, nil, func(s *engine.Scope) (engine.Disposer, error) { return s.OnChange(fn), nil })
}

// OnDispatchLog adds a tools/ptc-dispatch-log listener.
func (p *Plugin) OnDispatchLog(site Site, agent *engine.Agent, fn engine.DispatchLogFunc, opts ...engine.ListenerOption) (engine.Disposer, error) {
	return p.do("tools/ptc-dispatch-log", "", site, agent, func(s *engine.Scope) (engine.Disposer, error) { return s.OnDispatchLog(fn, opts...), nil })
}

// OnClose registers cleanup that runs when the plugin is disposed, after its
// in-flight calls settled: a host closes its interpreters there.
func (p *Plugin) OnClose(f func()) {
	p.mu.Lock()
	closed := p.st == disposed && p.inflight == 0
	if !closed {
		p.onClose = append(p.onClose, f)
	}
	p.mu.Unlock()
	if closed {
		f()
	}
}

// Commit applies every recorded effect, in order. If one fails, the ones
// applied are removed again and the error is returned, located at the
// effect's site: the plugin then has no effect on the engine.
func (p *Plugin) Commit() error {
	p.mu.Lock()
	if p.st != loading {
		p.mu.Unlock()
		return errors.New("the plugin is already committed")
	}
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	for _, e := range pending {
		p.mu.Lock()
		dropped := e.dropped
		s := p.scope(e.agent)
		p.mu.Unlock()
		if dropped {
			continue
		}
		d, err := e.apply(s)
		if err != nil {
			p.rollback()
			return &Diagnostic{File: p.file, Line: e.site.Line, Col: e.site.Col, Message: err.Error(), Err: err}
		}
		p.mu.Lock()
		e.dispose = d
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.st = live
	for _, e := range pending {
		if !e.dropped {
			p.committed = append(p.committed, Effect{Kind: e.kind, Name: e.name, Agent: e.agent, Site: e.site})
		}
	}
	p.mu.Unlock()
	return nil
}

// rollback removes what a failed commit applied.
func (p *Plugin) rollback() {
	p.mu.Lock()
	scopes := p.scopes
	p.scopes = map[*engine.Agent]*engine.Scope{}
	p.mu.Unlock()
	for _, s := range scopes {
		s.Dispose()
	}
}

// Enter marks a call into the plugin's code as in flight; exit must be
// called when it settles. ok is false once the plugin is disposed: the call
// must not run.
func (p *Plugin) Enter() (exit func(), ok bool) {
	if !p.Acquire() {
		return nil, false
	}
	var once sync.Once
	return func() { once.Do(p.Release) }, true
}

// Acquire is Enter without a closure, for hot paths: it reports whether the
// call may run, and then Release must be called exactly once when it settles.
func (p *Plugin) Acquire() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st == disposed {
		return false
	}
	p.inflight++
	return true
}

// Release ends a call Acquire let in.
func (p *Plugin) Release() {
	p.mu.Lock()
	p.inflight--
	done := p.st == disposed && p.inflight == 0
	var hooks []func()
	if done {
		hooks, p.onClose = p.onClose, nil
		if p.drained != nil {
			close(p.drained)
		}
	}
	p.mu.Unlock()
	for _, f := range hooks {
		f()
	}
}

// Retire removes the plugin's effects from the engine but keeps its
// interpreters for the calls still running: a hot reload retires the old
// version inside engine.Service.Swap (so a failed swap gives the effects
// back), then disposes it once the calls that began before the swap
// drained. Effects the plugin makes later are removed at once.
func (p *Plugin) Retire() {
	p.mu.Lock()
	scopes := make([]*engine.Scope, 0, len(p.scopes))
	for _, s := range p.scopes {
		scopes = append(scopes, s)
	}
	p.mu.Unlock()
	for _, s := range scopes {
		s.Dispose()
	}
}

// Dispose removes every effect of the plugin from the engine, then waits for
// its in-flight calls to settle, at most until ctx is done, and runs its
// close hooks. It reports ctx's error when calls were still in flight; their
// interpreters are closed when they settle. Dispose is idempotent.
func (p *Plugin) Dispose(ctx context.Context) error {
	p.mu.Lock()
	if p.st == disposed {
		p.mu.Unlock()
		return nil
	}
	p.st = disposed
	scopes := p.scopes
	p.scopes = map[*engine.Agent]*engine.Scope{}
	p.pending = nil
	var wait chan struct{}
	var hooks []func()
	if p.inflight > 0 {
		p.drained = make(chan struct{})
		wait = p.drained
	} else {
		hooks, p.onClose = p.onClose, nil
	}
	p.mu.Unlock()
	for _, s := range scopes {
		s.Dispose()
	}
	for _, f := range hooks {
		f()
	}
	if wait == nil {
		return nil
	}
	select {
	case <-wait:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("plugin %s: calls still in flight at disposal: %w", p.file, ctx.Err())
	}
}
