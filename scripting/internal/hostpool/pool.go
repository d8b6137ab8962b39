package hostpool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dsh-go/dsh/scripting"
)

// FirstDynamicKey is where the keys of callbacks registered after the top
// level (from a call) start; smaller keys are the top level's, the same on
// every instance.
const FirstDynamicKey = 1 << 40

// Defaults of [Options].
const (
	DefaultCloseWait = 100 * time.Millisecond
	DefaultReapWait  = 30 * time.Second
)

var (
	// ErrGone is a call for a callback registered from a call on an
	// instance that was since replaced (or a key never pinned).
	ErrGone = errors.New("the script callback is gone (it was registered from a call on an instance that was since replaced)")
	// ErrNoInstance is a call that found no healthy instance, every fresh
	// instance it waited for having failed to start.
	ErrNoInstance = errors.New("the plugin has no instance able to serve (its fresh instances failed to start)")
)

// Instance is what the pool needs of a host's interpreter instance. It is
// a pointer type in practice (instances are compared).
type Instance interface {
	comparable
	// Broken reports whether the instance was interrupted or faulted: it
	// never serves a call again and is replaced.
	Broken() bool
	// Abandon stops the instance without waiting: its running script code is
	// interrupted and its host work cancelled. It returns a channel closed
	// once every goroutine of the instance has exited. Abandon must not
	// block; it may be called more than once, from any goroutine (the
	// instance's own included) and with the pool's lock held.
	Abandon() <-chan struct{}
	// Effects is the number of effects (registrations) the instance's top
	// level made: a replay must make as many as the first instance did.
	Effects() int
}

// Breaker is an Instance that tells when it breaks, so that the pool
// retires it at once rather than at the plugin's next call (a broken
// instance holds its memory until then).
type Breaker interface {
	// Breaks returns a channel closed when the instance breaks (or stops).
	Breaks() <-chan struct{}
}

// Options configures a [Pool].
type Options[I Instance] struct {
	// Start starts a fresh instance that replays the plugin's top level
	// under ctx. The pool calls it outside its lock, at load time on the
	// loading goroutine and later on a goroutine of its own.
	Start func(ctx context.Context) (I, error)
	// StartTimeout bounds one Start; scripting.DefaultLoadTimeout when zero.
	StartTimeout time.Duration
	// CloseWait is how long Close waits for the instances' goroutines to
	// exit before leaving them to the reaper; DefaultCloseWait when zero.
	CloseWait time.Duration
	// ReapWait is how long an abandoned instance's goroutines may take to
	// exit before the pool logs that they are left behind; DefaultReapWait
	// when zero.
	ReapWait time.Duration
	// Logger receives the pool's warnings; discarded when nil.
	Logger *slog.Logger
}

// entry is an instance in the pool.
type entry[I Instance] struct {
	inst I
	busy int  // calls in flight (under Pool.mu)
	gone bool // abandoned (under Pool.mu)
}

// slot holds one of the plugin's instances, or none while its replacement
// starts (or after it failed to).
type slot[I Instance] struct {
	cur      *entry[I]
	starting bool
}

// Pool holds a plugin's instances. All methods are safe for concurrent use.
type Pool[I Instance] struct {
	opts    Options[I]
	log     *slog.Logger
	ctx     context.Context // cancelled by Close: stops replacements under way
	cancel  context.CancelFunc
	effects int // the first instance's effects

	mu      sync.Mutex
	slots   []*slot[I]
	entries map[I]*entry[I] // the instances in slots
	pins    map[int]*entry[I]
	nextPin int
	closed  bool
	changed chan struct{} // closed (and replaced) when a replacement ends, and at Close
	filled  bool
	// replacing counts the replacements under way and the watchers of
	// breaking instances; Close waits for them (within CloseWait), so none
	// outlives the pool.
	replacing sync.WaitGroup
}

// New returns an empty pool; [Pool.Fill] gives it its instances.
func New[I Instance](opts Options[I]) *Pool[I] {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = scripting.DefaultLoadTimeout
	}
	if opts.CloseWait <= 0 {
		opts.CloseWait = DefaultCloseWait
	}
	if opts.ReapWait <= 0 {
		opts.ReapWait = DefaultReapWait
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool[I]{
		opts: opts, log: log, ctx: ctx, cancel: cancel,
		entries: map[I]*entry[I]{}, nextPin: FirstDynamicKey, changed: make(chan struct{}),
	}
}

// Fill puts first (the instance that loaded the plugin) in the pool and
// starts n-1 more that replay the top level, one after the other under ctx
// (each also bounded by StartTimeout). If one fails, the pool is closed and
// the error names which instance failed. Fill is called once, before the
// pool serves calls.
func (p *Pool[I]) Fill(ctx context.Context, first I, n int) error {
	p.mu.Lock()
	if p.filled {
		p.mu.Unlock()
		return errors.New("hostpool: Fill called twice")
	}
	p.filled = true
	p.effects = first.Effects()
	p.addLocked(first)
	p.mu.Unlock()
	for k := 1; k < n; k++ {
		inst, err := p.start(context.WithoutCancel(ctx))
		if err != nil {
			p.Close()
			return fmt.Errorf("instance %d of %d: %w", k+1, n, err)
		}
		p.mu.Lock()
		closed := p.closed
		if !closed {
			p.addLocked(inst)
		}
		p.mu.Unlock()
		if closed {
			p.reap(inst.Abandon())
			return scripting.ErrDisposed
		}
	}
	return nil
}

func (p *Pool[I]) addLocked(inst I) {
	e := &entry[I]{inst: inst}
	p.entries[inst] = e
	p.slots = append(p.slots, &slot[I]{cur: e})
	p.watchLocked(e)
}

// watchLocked retires e as soon as it breaks, when its instance says so.
func (p *Pool[I]) watchLocked(e *entry[I]) {
	b, ok := any(e.inst).(Breaker)
	if !ok {
		return
	}
	p.replacing.Add(1)
	go func() {
		defer p.replacing.Done()
		select {
		case <-b.Breaks():
		case <-p.ctx.Done():
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if e.gone || p.closed || !e.inst.Broken() {
			return
		}
		for _, s := range p.slots {
			if s.cur == e {
				p.retireLocked(s)
				return
			}
		}
	}()
}

// start starts one replaying instance and checks it made the registrations
// the first did.
func (p *Pool[I]) start(ctx context.Context) (I, error) {
	var zero I
	ctx, cancel := scripting.WithLoadDeadline(ctx, p.opts.StartTimeout)
	defer cancel()
	inst, err := p.opts.Start(ctx)
	if err != nil {
		return zero, err
	}
	if got := inst.Effects(); got != p.effects {
		p.reap(inst.Abandon())
		return zero, fmt.Errorf("the instance made %d registrations at top level, not %d as the first did", got, p.effects)
	}
	return inst, nil
}

// Get returns the instance to serve a call of the callback at key, and the
// function to call when the call ends. A key from [FirstDynamicKey] on goes
// to the instance it is pinned to ([ErrGone] when that one was replaced);
// any other key to the least busy healthy instance. Broken instances found
// on the way are abandoned and replaced in the background. When no instance
// is healthy, Get waits for a replacement until ctx is done.
//
// Get fails with [scripting.ErrDisposed] once the pool is closed.
func (p *Pool[I]) Get(ctx context.Context, key int) (I, func(), error) {
	var zero I
	if key >= FirstDynamicKey {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			return zero, nil, scripting.ErrDisposed
		}
		e := p.pins[key]
		if e == nil || e.gone || e.inst.Broken() {
			return zero, nil, ErrGone
		}
		e.busy++
		return e.inst, p.releaser(e), nil
	}
	var tried map[*slot[I]]bool // the slots whose replacement this call saw start
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return zero, nil, scripting.ErrDisposed
		}
		var best *entry[I]
		waiting := false
		for _, s := range p.slots {
			if s.cur != nil && s.cur.inst.Broken() {
				p.retireLocked(s)
			}
			switch {
			case s.cur != nil:
				if best == nil || s.cur.busy < best.busy {
					best = s.cur
				}
			case s.starting:
				waiting = true
				if tried == nil {
					tried = map[*slot[I]]bool{}
				}
				tried[s] = true
			case !tried[s]:
				// Emptied by an earlier failure: try once more for this call.
				if tried == nil {
					tried = map[*slot[I]]bool{}
				}
				tried[s] = true
				p.replaceLocked(s)
				waiting = true
			}
		}
		if best != nil {
			best.busy++
			p.mu.Unlock()
			return best.inst, p.releaser(best), nil
		}
		ch := p.changed
		p.mu.Unlock()
		if !waiting {
			return zero, nil, ErrNoInstance
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return zero, nil, fmt.Errorf("waiting for a fresh instance of the plugin: %w", context.Cause(ctx))
		}
	}
}

// releaser returns the function that ends a call on e: a call that leaves
// its instance broken starts its replacement at once.
func (p *Pool[I]) releaser(e *entry[I]) func() {
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		e.busy--
		if e.gone || p.closed || !e.inst.Broken() {
			return
		}
		for _, s := range p.slots {
			if s.cur == e {
				p.retireLocked(s)
				if !s.starting {
					p.replaceLocked(s)
				}
				return
			}
		}
	}
}

// retireLocked abandons s's broken instance, forgets the keys pinned to it,
// and starts the slot's replacement.
func (p *Pool[I]) retireLocked(s *slot[I]) {
	e := s.cur
	s.cur = nil
	e.gone = true
	delete(p.entries, e.inst)
	for k, pe := range p.pins {
		if pe == e {
			delete(p.pins, k)
		}
	}
	p.log.Info("plugin instance was interrupted; starting a fresh one")
	p.reap(e.inst.Abandon())
	if !s.starting {
		p.replaceLocked(s)
	}
}

// replaceLocked starts a fresh instance for the empty slot s on a goroutine
// of its own.
func (p *Pool[I]) replaceLocked(s *slot[I]) {
	s.starting = true
	p.replacing.Add(1)
	go func() {
		defer p.replacing.Done()
		inst, err := p.start(p.ctx)
		p.mu.Lock()
		s.starting = false
		closed := p.closed
		if err == nil && !closed {
			e := &entry[I]{inst: inst}
			s.cur = e
			p.entries[inst] = e
			p.watchLocked(e)
		}
		if !closed {
			close(p.changed)
			p.changed = make(chan struct{})
		}
		p.mu.Unlock()
		switch {
		case err != nil && !closed:
			p.log.Error("the plugin's fresh instance failed to start", "error", err)
		case err == nil && closed:
			// Started as the pool closed: stop it, and let Close wait for it.
			done := inst.Abandon()
			t := time.NewTimer(p.opts.CloseWait)
			defer t.Stop()
			select {
			case <-done:
			case <-t.C:
				p.reap(done)
			}
		}
	}()
}

// reap watches an abandoned instance's goroutines in the background and
// logs them if they do not exit within ReapWait.
func (p *Pool[I]) reap(done <-chan struct{}) {
	select {
	case <-done:
		return
	default:
	}
	go func() {
		t := time.NewTimer(p.opts.ReapWait)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			p.log.Warn(fmt.Sprintf("an abandoned plugin instance has not stopped %v after it was abandoned; it is left behind (stuck in Go code?)", p.opts.ReapWait))
		}
	}()
}

// Pin returns a new dynamic key served by inst only (see [Pool.Get]).
func (p *Pool[I]) Pin(inst I) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.nextPin
	p.nextPin++
	if e := p.entries[inst]; e != nil && !p.closed {
		if p.pins == nil {
			p.pins = map[int]*entry[I]{}
		}
		p.pins[k] = e
	}
	return k
}

// Unpin forgets a dynamic key.
func (p *Pool[I]) Unpin(key int) {
	p.mu.Lock()
	delete(p.pins, key)
	p.mu.Unlock()
}

// Pins returns how many dynamic keys are pinned.
func (p *Pool[I]) Pins() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pins)
}

// Instances returns the healthy instances, in slot order.
func (p *Pool[I]) Instances() []I {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []I
	for _, s := range p.slots {
		if s.cur != nil && !s.cur.inst.Broken() {
			out = append(out, s.cur.inst)
		}
	}
	return out
}

// Close abandons every instance, stops the replacements under way and makes
// later calls fail with [scripting.ErrDisposed]. It waits at most CloseWait
// for the instances' goroutines to exit (those still running are left to the
// reaper), so it may be called from any goroutine, one of an instance's
// own included. Close is idempotent.
func (p *Pool[I]) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.cancel()
	var all []*entry[I]
	seen := map[*entry[I]]bool{}
	add := func(e *entry[I]) {
		if e != nil && !seen[e] {
			seen[e] = true
			e.gone = true
			all = append(all, e)
		}
	}
	for _, s := range p.slots {
		add(s.cur)
		s.cur = nil
	}
	for _, e := range p.pins {
		add(e)
	}
	p.slots, p.pins, p.entries = nil, nil, nil
	close(p.changed)
	p.mu.Unlock()

	dones := make([]<-chan struct{}, len(all), len(all)+1)
	for k, e := range all {
		dones[k] = e.inst.Abandon()
	}
	replaced := make(chan struct{})
	go func() {
		p.replacing.Wait()
		close(replaced)
	}()
	dones = append(dones, replaced)
	t := time.NewTimer(p.opts.CloseWait)
	defer t.Stop()
	for k, done := range dones {
		select {
		case <-done:
		case <-t.C:
			for _, d := range dones[k:] {
				p.reap(d)
			}
			return
		}
	}
}
