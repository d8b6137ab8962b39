package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/display"
)

// TransportName is the reserved name of the programmatic tool-calling transport.
const TransportName = "run_code"

// registration is one registered tool in one layer.
type registration struct {
	def   *Definition
	out   *dsl.Schema // the compiled output schema
	when  WhenFunc
	layer *Agent // nil: the global layer
}

// restriction is one restrict() filter of a layer.
type restriction struct {
	allow map[string]bool // nil when the filter has no allow list
	deny  map[string]bool
}

func (r *restriction) admits(name string) bool {
	if r.allow != nil && !r.allow[name] {
		return false
	}
	return !r.deny[name]
}

type guardEntry struct {
	fn     GuardFunc
	source string // see Source
}

// layer is the global layer or one agent's.
type layer struct {
	tools        []*registration // registration order
	byName       map[string]*registration
	restrictions []*restriction
	guards       []*guardEntry
}

func newLayer() *layer { return &layer{byName: map[string]*registration{}} }

// clone copies a layer for a change.
func (l *layer) clone() *layer {
	c := &layer{
		tools:        slices.Clone(l.tools),
		byName:       make(map[string]*registration, len(l.byName)),
		restrictions: slices.Clone(l.restrictions),
		guards:       slices.Clone(l.guards),
	}
	for k, v := range l.byName {
		c.byName[k] = v
	}
	return c
}

// regState is the registry at one moment: the global layer and the agents'.
// A published state is never changed: a change copies it (copy on write),
// so reading takes no lock, and a call that began before a swap keeps
// reading the registry of its epoch.
type regState struct {
	global *layer
	layers map[*Agent]*layer
}

func newRegState() *regState { return &regState{global: newLayer(), layers: map[*Agent]*layer{}} }

// clone copies st for a change.
func (st *regState) clone() *regState {
	c := &regState{global: st.global.clone(), layers: make(map[*Agent]*layer, len(st.layers))}
	for a, l := range st.layers {
		c.layers[a] = l.clone()
	}
	return c
}

// reg returns the current registry.
func (s *Service) reg() *regState { return s.epoch.Load().reg.Load() }

// mutate applies f to the registry: to the open swap's copy, or to a copy of
// the current registry that f's result true publishes.
func (s *Service) mutate(f func(st *regState) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tx := s.tx.Load(); tx != nil {
		f(tx.reg)
		return
	}
	e := s.epoch.Load()
	st := e.reg.Load().clone()
	if f(st) {
		e.reg.Store(st)
	}
}

func (l *layer) empty() bool {
	return len(l.tools) == 0 && len(l.restrictions) == 0 && len(l.guards) == 0
}

// WhenFunc is a step-time activation condition of a registration.
type WhenFunc func(ctx context.Context, w WhenContext) (bool, error)

// WhenContext is what an activation condition sees.
type WhenContext struct {
	Agent          *Agent
	ModelSelection any
}

// RegisterOption configures a registration.
type RegisterOption func(*registration)

// When makes a registration conditional: it is usable only in steps whose
// resolved tool set admitted it.
func When(cond WhenFunc) RegisterOption { return func(r *registration) { r.when = cond } }

// ListenerOption configures a listener registration.
type ListenerOption func(*listenerConfig)

type listenerConfig struct {
	prepend bool
	source  string
}

// Prepend makes the listener outermost (before every listener registered so far).
func Prepend() ListenerOption { return func(c *listenerConfig) { c.prepend = true } }

// Source names the plugin that registers the listener or guard (a script
// host gives its plugin's file): the policy spans and the decisions metric
// name it as dsh.plugin (see [WithTracerProvider]).
func Source(plugin string) ListenerOption { return func(c *listenerConfig) { c.source = plugin } }

func listenerOpts(opts []ListenerOption) listenerConfig {
	var c listenerConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// ValidateDefinition runs the checks registration makes before it looks at
// the layer: the name's form ([CheckToolName]), then §2.2 steps 1–4: the
// output contract, the output schema, the timeout and the reserved name. A script host calls it to report a bad
// definition where the script registers it.
func ValidateDefinition(def *Definition) error {
	_, err := checkDefinition(def)
	return err
}

func checkDefinition(def *Definition) (*dsl.Schema, error) {
	if def == nil {
		return nil, errors.New("tools.register: the definition is nil")
	}
	name := def.Name
	// The name first: every later message quotes it.
	if err := CheckToolName(name); err != nil {
		return nil, err
	}
	if def.Output.Render == nil {
		return nil, fmt.Errorf("tool %q must declare output { schema, render, presentationMeta? }", name)
	}
	out, err := dsl.Compile(def.Output.Schema)
	if err != nil {
		return nil, SchemaError(name, "output.schema", err)
	}
	if def.Timeout < 0 {
		return nil, fmt.Errorf("tool %q timeoutMs must be a positive finite number", name)
	}
	if name == TransportName {
		return nil, errors.New(`tool name "run_code" is reserved for the PTC transport and cannot be registered or shadowed`)
	}
	return out, nil
}

// ValidateFilter runs the checks restrict makes that do not depend on the
// registry (§2.3 steps 1–3) for a restriction of agent's scope.
func ValidateFilter(agent *Agent, f Filter) error {
	if agent == nil {
		return errors.New("tools.restrict() requires a scoped context (agent.ctx): a context-global restriction would mask every agent — deny the tool for the intended agent instead")
	}
	if f.Allow == nil && f.Deny == nil {
		return errors.New("tools.restrict({}) is a no-op: pass `allow` and/or `deny` (an empty filter is almost always a materialized-empty-config bug)")
	}
	if slices.Contains(f.Allow, TransportName) || slices.Contains(f.Deny, TransportName) {
		return errors.New(`tools.restrict() cannot name reserved PTC transport "run_code"; restrict end-capability tools instead`)
	}
	return nil
}

// register validates and adds a definition to agent's layer (§2.2).
func (s *Service) register(agent *Agent, def *Definition, opts []RegisterOption) (Disposer, error) {
	out, err := checkDefinition(def)
	if err != nil {
		return nil, err
	}
	name := def.Name
	reg := &registration{def: def, out: out, layer: agent}
	for _, o := range opts {
		o(reg)
	}

	var dup error
	s.mutate(func(st *regState) bool {
		l := st.layerFor(agent, true)
		if _, ok := l.byName[name]; ok {
			if agent == nil {
				dup = fmt.Errorf("tool %q is already registered (for a per-agent variant, register through that agent's scope, `tools.scope(id)`, instead)", name)
			} else {
				dup = fmt.Errorf("tool %q is already registered in this scope", name)
			}
			return false
		}
		l.tools = append(l.tools, reg)
		l.byName[name] = reg
		return true
	})
	if dup != nil {
		return nil, dup
	}

	if err := s.emitChange(Change{Kind: ChangeRegister, Agent: agent, Name: name}, true); err != nil {
		s.unregister(reg)
		return nil, err
	}
	// Idempotent without a sync.Once: unregister finds reg or not, and a
	// disposer run inside a swap that failed must work again later.
	return func() {
		if s.unregister(reg) {
			_ = s.emitChange(Change{Kind: ChangeDispose, Agent: agent, Name: name}, false)
		}
	}, nil
}

// unregister removes reg; it reports whether reg was still registered.
func (s *Service) unregister(reg *registration) bool {
	found := false
	s.mutate(func(st *regState) bool {
		l := st.layerFor(reg.layer, false)
		if l == nil || l.byName[reg.def.Name] != reg {
			return false
		}
		delete(l.byName, reg.def.Name)
		l.tools = slices.DeleteFunc(l.tools, func(r *registration) bool { return r == reg })
		st.dropIfEmpty(reg.layer, l)
		found = true
		return true
	})
	return found
}

// layerFor returns agent's layer (the global one for nil), creating it when
// create is set.
func (st *regState) layerFor(agent *Agent, create bool) *layer {
	if agent == nil {
		return st.global
	}
	l := st.layers[agent]
	if l == nil && create {
		l = newLayer()
		st.layers[agent] = l
	}
	return l
}

// dropIfEmpty forgets an agent's layer once nothing is left in it.
func (st *regState) dropIfEmpty(agent *Agent, l *layer) {
	if agent != nil && l.empty() {
		delete(st.layers, agent)
	}
}

// emitChange tells every tools/change listener. During a registration
// (propagate) the first failure is returned; otherwise failures are logged.
func (s *Service) emitChange(c Change, propagate bool) error {
	if s.change.empty() || s.openSwap() != nil {
		return nil // a swap's changes are told as one, when it commits
	}
	it := s.change.iter(s.Epoch())
	for l := it.next(nil); l != nil; l = it.next(nil) {
		err := callObserver(func() error { return l.fn(c) })
		if err == nil {
			continue
		}
		if propagate {
			return err
		}
		s.logger.Warn("tools/change listener failed: "+errorText(err), "kind", string(c.Kind), "tool", c.Name)
	}
	return nil
}

// callObserver runs an observer, turning a panic into an error.
func callObserver(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	return f()
}

// panicError carries a recovered panic value as an error.
type panicError struct{ v any }

func (p panicError) Error() string { return errorText(p.v) }

// Unwrap returns the panic value when it is an error, so a coded error
// raised by panic keeps its name and code.
func (p panicError) Unwrap() error {
	err, _ := p.v.(error)
	return err
}

// Filter is a restriction: Allow keeps only the listed inherited tools (an
// empty, non-nil Allow hides them all); Deny removes the listed ones.
type Filter struct {
	Allow []string
	Deny  []string
}

// maxQuotedUnknown is how many unknown names a restrict error lists.
const maxQuotedUnknown = 10

// restrict adds a filter to agent's layer (§2.3).
func (s *Service) restrict(agent *Agent, f Filter) (Disposer, error) {
	if err := ValidateFilter(agent, f); err != nil {
		return nil, err
	}
	names := append(append([]string(nil), f.Allow...), f.Deny...)
	r := &restriction{deny: map[string]bool{}}
	if f.Allow != nil {
		r.allow = map[string]bool{}
		for _, n := range f.Allow {
			r.allow[n] = true
		}
	}
	for _, n := range f.Deny {
		r.deny[n] = true
	}

	var unknown []string
	var inherited map[string]bool
	s.mutate(func(st *regState) bool {
		inherited = st.inheritedNames(agent)
		seen := map[string]bool{}
		for _, n := range names {
			if !inherited[n] && !seen[n] {
				seen[n] = true
				unknown = append(unknown, n)
			}
		}
		if len(unknown) > 0 {
			return false
		}
		l := st.layerFor(agent, true)
		l.restrictions = append(l.restrictions, r)
		return true
	})
	if len(unknown) > 0 {
		known := make([]string, 0, len(inherited))
		for n := range inherited {
			known = append(known, n)
		}
		slices.Sort(known)
		list := "(none)"
		if len(known) > 0 {
			list = strings.Join(known, ", ")
		}
		// A script chooses the names: each is quoted bounded, and at most
		// maxQuotedUnknown of them are listed.
		quoted := make([]string, 0, min(len(unknown), maxQuotedUnknown))
		for _, n := range unknown[:min(len(unknown), maxQuotedUnknown)] {
			quoted = append(quoted, display.Quote(n))
		}
		if more := len(unknown) - len(quoted); more > 0 {
			quoted = append(quoted, fmt.Sprintf("and %d more", more))
		}
		noun := "tool"
		if len(unknown) > 1 {
			noun = "tools"
		}
		return nil, fmt.Errorf("tools.restrict() names unknown global %s %s; known global tools: %s", noun, strings.Join(quoted, ", "), list)
	}
	_ = s.emitChange(Change{Kind: ChangeRestrict, Agent: agent}, false)

	return func() {
		lifted := false
		s.mutate(func(st *regState) bool {
			l := st.layerFor(agent, false)
			if l == nil || !slices.Contains(l.restrictions, r) {
				return false
			}
			l.restrictions = slices.DeleteFunc(l.restrictions, func(x *restriction) bool { return x == r })
			st.dropIfEmpty(agent, l)
			lifted = true
			return true
		})
		if lifted {
			_ = s.emitChange(Change{Kind: ChangeLift, Agent: agent}, false)
		}
	}, nil
}

// inheritedNames returns the names agent inherits: the global layer's and its
// ancestors', not its own.
func (st *regState) inheritedNames(agent *Agent) map[string]bool {
	names := map[string]bool{}
	for n := range st.global.byName {
		names[n] = true
	}
	for a := agent.parent; a != nil; a = a.parent {
		if l := st.layers[a]; l != nil {
			for n := range l.byName {
				names[n] = true
			}
		}
	}
	return names
}

// guard adds a deny-only guard to agent's layer (§2.5); no tools/change.
func (s *Service) guard(agent *Agent, fn GuardFunc, source string) Disposer {
	g := &guardEntry{fn: fn, source: source}
	s.mutate(func(st *regState) bool {
		l := st.layerFor(agent, true)
		l.guards = append(l.guards, g)
		return true
	})
	return func() {
		s.mutate(func(st *regState) bool {
			l := st.layerFor(agent, false)
			if l == nil || !slices.Contains(l.guards, g) {
				return false
			}
			l.guards = slices.DeleteFunc(l.guards, func(x *guardEntry) bool { return x == g })
			st.dropIfEmpty(agent, l)
			return true
		})
	}
}

// guardsFor returns the guards that judge a call made as agent, in
// evaluation order: global ones, then each chain layer from the farthest
// ancestor.
func (st *regState) guardsFor(agent *Agent) []*guardEntry {
	var out []*guardEntry
	out = append(out, st.global.guards...)
	if agent != nil {
		for _, a := range agent.chain() {
			if l := st.layers[a]; l != nil {
				out = append(out, l.guards...)
			}
		}
	}
	return out
}

// checkGuards runs the guards of registry st; the first non-empty reason is
// the denial.
func (s *Service) checkGuards(ctx context.Context, st *regState, exec *Execution) (reason string, err error) {
	for _, g := range st.guardsFor(exec.agent) {
		ss := s.tel.startStage(ctx, stageGuard, g.source)
		r, err := callGuard(ctx, g.fn, exec)
		ss.end(guardDecision(r), false, err)
		if err != nil {
			return "", err
		}
		if r != "" {
			return r, nil
		}
	}
	return "", nil
}

func callGuard(ctx context.Context, g GuardFunc, exec *Execution) (reason string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	return g(ctx, exec)
}

// lookup resolves the visible registration of name for agent (§2.4), ignoring
// activation conditions.
func (st *regState) lookup(name string, agent *Agent) *registration {
	if agent == nil {
		return st.global.byName[name]
	}
	if l := st.layers[agent]; l != nil {
		if r := l.byName[name]; r != nil {
			return r
		}
	}
	var r *registration
	for a := agent.parent; a != nil && r == nil; a = a.parent {
		if l := st.layers[a]; l != nil {
			r = l.byName[name]
		}
	}
	if r == nil {
		r = st.global.byName[name]
	}
	if r == nil || !st.admitted(name, agent) {
		return nil
	}
	return r
}

// admitted reports whether every restriction of agent's chain admits an
// inherited name.
func (st *regState) admitted(name string, agent *Agent) bool {
	for a := agent; a != nil; a = a.parent {
		if l := st.layers[a]; l != nil {
			for _, r := range l.restrictions {
				if !r.admits(name) {
					return false
				}
			}
		}
	}
	return true
}

// usable applies a step's tool set. An unconditional registration is usable
// whenever it is visible, with a set or without, so that what an earlier call
// of a step registered or replaced serves the later ones; a conditional one
// only with a set that admitted that very registration (its condition is
// evaluated once per step, and a conditional registration made since waits
// for the next step).
func usable(r *registration, set *ToolSet) bool {
	if r == nil {
		return false
	}
	if r.when == nil {
		return true
	}
	return set != nil && set.admitted[r]
}

// resolve returns the usable registration of name for agent, including the
// reserved transport for scopes whose executor provides it.
func (s *Service) resolve(name string, agent *Agent, set *ToolSet) *registration {
	return s.resolveIn(s.reg(), name, agent, set)
}

// resolveIn is resolve in registry st.
func (s *Service) resolveIn(st *regState, name string, agent *Agent, set *ToolSet) *registration {
	if name == TransportName {
		return s.transportFor(agent)
	}
	r := st.lookup(name, agent)
	if !usable(r, set) {
		return nil
	}
	return r
}

// visible returns agent's visible registrations in presentation order (§2.4),
// conditional ones included, the transport excluded.
func (st *regState) visible(agent *Agent) []*registration {
	var order []*registration
	pos := map[string]int{}
	add := func(r *registration) {
		if i, ok := pos[r.def.Name]; ok {
			order[i] = r
			return
		}
		pos[r.def.Name] = len(order)
		order = append(order, r)
	}
	for _, r := range st.global.tools {
		add(r)
	}
	if agent == nil {
		return order
	}
	chain := agent.chain()
	for _, a := range chain[:len(chain)-1] {
		if l := st.layers[a]; l != nil {
			for _, r := range l.tools {
				add(r)
			}
		}
	}
	kept := order[:0:0]
	kpos := map[string]int{}
	for _, r := range order {
		if st.admitted(r.def.Name, agent) {
			kpos[r.def.Name] = len(kept)
			kept = append(kept, r)
		}
	}
	if l := st.layers[agent]; l != nil {
		for _, r := range l.tools {
			if i, ok := kpos[r.def.Name]; ok {
				kept[i] = r
				continue
			}
			if i, ok := pos[r.def.Name]; ok {
				// Shadowing a restricted-away name: it keeps that name's place.
				kept = insertAt(kept, kpos, r, i, pos)
				continue
			}
			kpos[r.def.Name] = len(kept)
			kept = append(kept, r)
		}
	}
	return kept
}

// insertAt puts r where its name stood in the unrestricted order.
func insertAt(kept []*registration, kpos map[string]int, r *registration, orig int, pos map[string]int) []*registration {
	at := len(kept)
	for i, k := range kept {
		if pos[k.def.Name] > orig {
			at = i
			break
		}
	}
	kept = slices.Insert(kept, at, r)
	for i := at; i < len(kept); i++ {
		kpos[kept[i].def.Name] = i
	}
	return kept
}

// ToolSet is one step's resolved tool set: the outcome of its activation
// conditions, the conditional registrations admitted for it. Unconditional
// registrations are usable whenever they are visible: the set does not pin
// them (see Service.Call on when a call resolves its tool).
type ToolSet struct {
	agent    *Agent
	admitted map[*registration]bool
}

// resolveSet evaluates the activation conditions of agent's visible tools.
// A failing condition rejects the whole resolution.
func (s *Service) resolveSet(ctx context.Context, agent *Agent, modelSelection any) (*ToolSet, error) {
	set := &ToolSet{agent: agent, admitted: map[*registration]bool{}}
	for _, r := range s.reg().visible(agent) {
		if r.when == nil {
			set.admitted[r] = true
			continue
		}
		ok, err := callWhen(ctx, r.when, WhenContext{Agent: agent, ModelSelection: modelSelection})
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if ok {
			set.admitted[r] = true
		}
	}
	return set, nil
}

func callWhen(ctx context.Context, f WhenFunc, w WhenContext) (ok bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = panicError{v}
		}
	}()
	return f(ctx, w)
}

// definitions returns the usable visible definitions.
func (s *Service) definitions(agent *Agent, set *ToolSet) []*Definition {
	var out []*Definition
	for _, r := range s.reg().visible(agent) {
		if usable(r, set) {
			out = append(out, r.def)
		}
	}
	return out
}

// schemas projects the visible tools to the model-facing wire form.
func (s *Service) schemas(agent *Agent, set *ToolSet) ([]ToolSchema, error) {
	defs := s.definitions(agent, set)
	out := make([]ToolSchema, 0, len(defs))
	for _, d := range defs {
		ts, err := projectSchema(d)
		if err != nil {
			return nil, err
		}
		out = append(out, ts)
	}
	return out, nil
}

// projectSchema is a definition's wire form, its parameters a fresh snapshot.
func projectSchema(d *Definition) (ToolSchema, error) {
	params, err := dsl.Snapshot(d.Parameters)
	if err != nil {
		return ToolSchema{}, fmt.Errorf("tool %q parameters must be lossless JSON before schema projection", d.Name)
	}
	return ToolSchema{Name: d.Name, Description: d.Description, Parameters: params}, nil
}
