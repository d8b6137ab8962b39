package lua

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
	"github.com/dsh-go/dsh/scripting/lua/internal/sandbox"
)

// Defaults of the host's deadlines.
const (
	DefaultListenerTimeout = hostapi.DefaultListenerTimeout
	DefaultGrace           = hostapi.DefaultGrace
)

// MaxInstances bounds a plugin's instances.
const MaxInstances = hostapi.MaxInstances

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
	// Memory, when set, stops the calls (and top levels) whose scripts run
	// while the heap passes its limit: they fail with its error and their
	// instances are replaced. Nil turns the bound off. While it is set, every
	// call's state checks its context at each instruction, as under a
	// deadline.
	Memory *scripting.MemoryGuard
}

// Extensions returns .lua.
func (h *Host) Extensions() []string { return []string{".lua"} }

func (h *Host) logger() *slog.Logger { return hostapi.Logger(h.Logger) }

func (h *Host) listenerTimeout() time.Duration { return hostapi.ListenerTimeout(h.ListenerTimeout) }

func (h *Host) grace() time.Duration { return hostapi.Grace(h.Grace) }

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
	pl.instances = hostpool.New(hostpool.Options[*instance]{
		Start:     func(ctx context.Context) (*instance, error) { return pl.newInstance(ctx, true) },
		CloseWait: h.grace(),
		Logger:    pl.log,
	})
	first := func(ctx context.Context) (*instance, error) { return pl.newInstance(ctx, false) }
	if err := hostapi.Fill(ctx, p, src.Rel, pl.instances, first, func(i *instance) int { return i.wantInstances }); err != nil {
		return nil, err
	}
	return pl, nil
}

// pool is a plugin's instances (see package hostpool): calls go to the
// least busy one, and an interrupted instance is replaced by a fresh one that
// replays the top level.
type pool struct {
	host      *Host
	plugin    *scripting.Plugin
	src       scripting.Source
	log       *slog.Logger
	instances *hostpool.Pool[*instance]
}

// pin returns a new dynamic key served by inst only.
func (pl *pool) pin(inst *instance) int { return pl.instances.Pin(inst) }

// unpin forgets a dynamic key's instance.
func (pl *pool) unpin(k int) { pl.instances.Unpin(k) }

// errGone is a callback whose instance was replaced.
var errGone = hostpool.ErrGone

// newInstance starts an instance's goroutine, which makes its state and
// installs the dsh module, and runs the top level there. A replay records the
// script's callbacks without making effects on the engine again.
func (pl *pool) newInstance(ctx context.Context, replay bool) (*instance, error) {
	inst, err := startInstance(pl, replay)
	if err != nil {
		return nil, fmt.Errorf("starting a Lua instance: %w", err)
	}
	_, err = inst.do(ctx, callSpec{what: "the top level", body: true}, func(i *instance, L *glua.LState, f *frame) (any, error) {
		f.logCtx = nil // no call's: its log lines are made under the background
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
		return nil, inst.diagnostic(ctx, err)
	}
	return inst, nil
}

// Broken reports whether the instance was interrupted or closed.
func (i *instance) Broken() bool { return i.broken() }

// Breaks returns a channel closed when the instance is interrupted or
// stopped (hostpool.Breaker).
func (i *instance) Breaks() <-chan struct{} { return i.kill.Done() }

// Abandon stops the instance without waiting; the channel closes once its
// goroutine has exited.
func (i *instance) Abandon() <-chan struct{} {
	i.close()
	return i.dead
}

// Effects is the number of effects the top level made.
func (i *instance) Effects() int { return i.seq }
