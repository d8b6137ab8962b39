package lua

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// Defaults of the host's deadlines.
const (
	DefaultListenerTimeout = 5 * time.Second
	DefaultGrace           = 100 * time.Millisecond
)

// MaxInstances bounds a plugin's instances.
const MaxInstances = 64

// Host runs plugins written in Lua with gopher-lua. Its zero value is ready
// to use.
type Host struct {
	Logger *slog.Logger // discards when nil
	// ListenerTimeout bounds every script call that is not a tool body:
	// listeners, guards, renderers, classifiers, presenters.
	ListenerTimeout time.Duration
	// Grace is how long a script may run after its call was cancelled (or
	// its deadline passed) before it is interrupted.
	Grace time.Duration
	// Modules are the host modules plugins use as dsh.<name> (or
	// require("dsh.<name>")): the capability modules fs, process, http and
	// path, or any other. Their functions block the calling Lua code.
	Modules []scripting.Module
}

// Extensions returns .lua.
func (h *Host) Extensions() []string { return []string{".lua"} }

func (h *Host) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.New(slog.DiscardHandler)
}

func (h *Host) listenerTimeout() time.Duration {
	if h.ListenerTimeout > 0 {
		return h.ListenerTimeout
	}
	return DefaultListenerTimeout
}

func (h *Host) grace() time.Duration {
	if h.Grace > 0 {
		return h.Grace
	}
	return DefaultGrace
}

// Load evaluates a plugin's top level in a fresh instance; its effects go to
// p, which the loader commits. A plugin that calls dsh.instances(N) gets N-1
// more instances, each replaying the top level, for CPU-parallel
// concurrency-safe tools.
func (h *Host) Load(ctx context.Context, p *scripting.Plugin, src scripting.Source) error {
	_, err := h.load(ctx, p, src)
	return err
}

// load is Load returning the plugin's pool.
func (h *Host) load(ctx context.Context, p *scripting.Plugin, src scripting.Source) (*pool, error) {
	pl := &pool{host: h, plugin: p, src: src, log: h.logger().With("plugin", src.Rel)}
	first, err := pl.newInstance(ctx, false)
	if err != nil {
		return nil, err
	}
	pl.effects = first.seq
	pl.slots = []*instance{first}
	for n := 1; n < first.wantInstances; n++ {
		inst, err := pl.replayInstance(ctx)
		if err != nil {
			pl.close()
			return nil, &scripting.Diagnostic{File: src.Rel, Message: fmt.Sprintf("instance %d of %d: %v", n+1, first.wantInstances, err), Err: err}
		}
		pl.slots = append(pl.slots, inst)
	}
	p.OnClose(pl.close)
	return pl, nil
}

// pool holds a plugin's instances: calls go to the least busy one, and an
// interrupted instance is replaced by a fresh one that replays the top level.
type pool struct {
	host   *Host
	plugin *scripting.Plugin
	src    scripting.Source
	log    *slog.Logger

	mu      sync.Mutex
	slots   []*instance // nil entries are instances that failed to restart
	closed  bool
	effects int // the number of top-level effects: a replay must make as many
	pins    map[int]*instance
	nextPin int
}

// firstDynamicKey is where the keys of effects made after the top level start.
const firstDynamicKey = 1 << 40

// pin returns a new dynamic key served by inst only.
func (pl *pool) pin(inst *instance) int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.pins == nil {
		pl.pins = map[int]*instance{}
		pl.nextPin = firstDynamicKey
	}
	k := pl.nextPin
	pl.nextPin++
	pl.pins[k] = inst
	return k
}

// unpin forgets a dynamic key's instance.
func (pl *pool) unpin(k int) {
	pl.mu.Lock()
	delete(pl.pins, k)
	pl.mu.Unlock()
}

// errGone is a callback whose instance was replaced.
var errGone = errors.New("the script callback is gone (it was registered from a call on an instance that was since replaced)")

// instanceFor picks the instance for a callback key: the pinned one for a
// dynamic key, the least busy otherwise.
func (pl *pool) instanceFor(ctx context.Context, key int) (*instance, error) {
	if key < firstDynamicKey {
		return pl.instance(ctx)
	}
	pl.mu.Lock()
	inst := pl.pins[key]
	pl.mu.Unlock()
	if inst == nil || inst.broken() {
		return nil, errGone
	}
	return inst, nil
}

// instance picks the instance to serve a call, replacing a broken one.
func (pl *pool) instance(ctx context.Context) (*instance, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil, errDisposed
	}
	if len(pl.slots) == 1 && pl.slots[0] != nil && !pl.slots[0].broken() {
		return pl.slots[0], nil
	}
	best := -1
	for k, inst := range pl.slots {
		if inst == nil || inst.broken() {
			if inst != nil {
				pl.log.Warn("plugin instance was interrupted; starting a fresh one")
				inst.close()
			}
			fresh, err := pl.replayInstance(ctx)
			if err != nil {
				pl.slots[k] = nil
				pl.log.Error("the plugin's fresh instance failed to start", "error", err)
				continue
			}
			pl.slots[k] = fresh
			inst = fresh
		}
		if best < 0 || inst.busy.Load() < pl.slots[best].busy.Load() {
			best = k
		}
	}
	if best < 0 {
		return nil, errors.New("the plugin has no instance able to serve (its fresh instances failed to start)")
	}
	return pl.slots[best], nil
}

// errDisposed is a call into a plugin that was disposed.
var errDisposed = errors.New("the plugin has been disposed")

// replayInstance starts an instance that replays the top level and checks it
// made the same registrations as the first.
func (pl *pool) replayInstance(ctx context.Context) (*instance, error) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scripting.DefaultLoadTimeout)
	defer cancel()
	inst, err := pl.newInstance(lctx, true)
	if err != nil {
		return nil, err
	}
	if inst.seq != pl.effects {
		inst.close()
		return nil, fmt.Errorf("the instance made %d registrations at top level, not %d as the first did", inst.seq, pl.effects)
	}
	return inst, nil
}

func (pl *pool) close() {
	pl.mu.Lock()
	slots := pl.slots
	pins := pl.pins
	pl.closed, pl.slots, pl.pins = true, nil, nil
	pl.mu.Unlock()
	var all []*instance
	for _, inst := range slots {
		if inst != nil {
			all = append(all, inst)
		}
	}
	for _, inst := range pins {
		all = append(all, inst) // pinned instances may have been replaced
	}
	for _, inst := range all {
		inst.close()
	}
	// The goroutines exit once their current call unwinds: at once, as the
	// plugin's calls have drained, unless one is stuck in Go code.
	t := time.NewTimer(pl.host.grace())
	defer t.Stop()
	for _, inst := range all {
		select {
		case <-inst.dead:
		case <-t.C:
			return
		}
	}
}

// newInstance starts an instance's goroutine, which makes its state and
// installs the dsh module, and runs the top level there. A replay records the
// script's callbacks without making effects on the engine again.
func (pl *pool) newInstance(ctx context.Context, replay bool) (*instance, error) {
	inst, err := startInstance(pl, replay)
	if err != nil {
		return nil, fmt.Errorf("starting a Lua instance: %w", err)
	}
	_, err = inst.do(ctx, callSpec{what: "the top level", body: true}, func(i *instance, L *glua.LState, f *frame) (any, error) {
		fn, err := sandbox.Load(L, string(pl.src.Code), pl.src.Rel, 0)
		if err != nil {
			return nil, syntaxDiagnostic(pl.src.Rel, pl.src.Code, err)
		}
		L.Push(fn)
		if err := sandbox.Call(L, 0, 0); err != nil {
			return nil, i.topLevelDiagnostic(err)
		}
		if i.wantInstances == 0 {
			i.wantInstances = 1
		}
		i.topDone = true
		return nil, nil
	})
	if err != nil {
		inst.close()
		return nil, inst.diagnostic(err)
	}
	return inst, nil
}
