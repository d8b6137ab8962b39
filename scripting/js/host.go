package js

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// Defaults of the host's deadlines.
const (
	DefaultListenerTimeout = 5 * time.Second
	DefaultGrace           = 100 * time.Millisecond
)

//go:embed prelude.js
var preludeSource string

// prelude is compiled once and run in every instance, as k6 shares programs.
var prelude = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("dsh:prelude", preludeSource, true)
})

// Host runs plugins written in JavaScript and TypeScript with goja. Its zero
// value is ready to use.
type Host struct {
	Logger *slog.Logger // discards when nil
	// ListenerTimeout bounds every script call that is not a tool body:
	// listeners, guards, renderers, classifiers, presenters.
	ListenerTimeout time.Duration
	// Grace is how long a script may run after its call was cancelled before
	// it is interrupted.
	Grace time.Duration
}

// Extensions returns .js, .mjs and .ts.
func (h *Host) Extensions() []string { return []string{".js", ".mjs", ".ts"} }

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
// p, which the loader commits.
func (h *Host) Load(ctx context.Context, p *scripting.Plugin, src scripting.Source) error {
	out, err := tsbuild.Transform(src.Rel, src.Code)
	if err != nil {
		return asDiagnostic(src.Rel, err)
	}
	pl := &pool{host: h, plugin: p, src: src, main: out, log: h.logger().With("plugin", src.Rel)}
	inst, err := pl.newInstance(ctx, false)
	if err != nil {
		return err
	}
	pl.setCurrent(inst)
	p.OnClose(pl.close)
	return nil
}

// pool holds a plugin's live instance and replaces an interrupted one with a
// fresh instance that replays the top level.
type pool struct {
	host   *Host
	plugin *scripting.Plugin
	src    scripting.Source
	main   *tsbuild.Output
	log    *slog.Logger

	mu      sync.Mutex
	current *instance
	closed  bool
	effects int // the number of top-level effects: a replay must make as many
}

func (pl *pool) setCurrent(i *instance) {
	pl.mu.Lock()
	pl.current = i
	if !i.replay {
		pl.effects = i.seq
	}
	pl.mu.Unlock()
}

// instance returns the instance to serve a call, replacing a broken one.
func (pl *pool) instance(ctx context.Context) (*instance, error) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		return nil, errors.New("the plugin has been disposed")
	}
	if pl.current != nil && !pl.current.loop.Broken() {
		return pl.current, nil
	}
	if pl.current != nil {
		pl.log.Warn("plugin instance was interrupted; starting a fresh one")
		pl.current.close()
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scripting.DefaultLoadTimeout)
	defer cancel()
	inst, err := pl.newInstance(lctx, true)
	if err != nil {
		pl.current = nil
		return nil, fmt.Errorf("the plugin's fresh instance failed to start: %w", err)
	}
	if inst.seq != pl.effects {
		inst.close()
		pl.current = nil
		return nil, fmt.Errorf("the plugin's fresh instance made %d registrations at top level, not %d as its first did", inst.seq, pl.effects)
	}
	pl.current = inst
	return inst, nil
}

func (pl *pool) close() {
	pl.mu.Lock()
	cur := pl.current
	pl.closed, pl.current = true, nil
	pl.mu.Unlock()
	if cur != nil {
		cur.close()
	}
}

// newInstance starts a loop, installs the prelude and the dsh module, and runs
// the top level. A replay records the script's callbacks without making
// effects on the engine again.
func (pl *pool) newInstance(ctx context.Context, replay bool) (*instance, error) {
	prog, err := prelude()
	if err != nil {
		return nil, fmt.Errorf("dsh prelude: %w", err)
	}
	inst := &instance{pool: pl, replay: replay, callbacks: map[int]*goja.Object{}, modules: map[string]*goja.Object{},
		tokens: map[*engine.Token]*goja.Object{}, defined: map[*goja.Object]*defined{}}
	inst.loop, err = eventloop.New(eventloop.Options{
		Grace: pl.host.grace(),
		Setup: func(vm *goja.Runtime) error {
			inst.vm = vm
			return inst.setup(vm, prog)
		},
		OnError:     func(err error) { pl.log.Warn("uncaught script error: " + err.Error()) },
		ThrownValue: thrownValue,
	})
	if err != nil {
		return nil, fmt.Errorf("starting a JavaScript instance: %w", err)
	}
	_, err = inst.loop.Run(ctx, func(vm *goja.Runtime) (goja.Value, error) {
		return inst.runModule(vm, pl.src.Rel, pl.main)
	}, nil, func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
		return nil, err
	})
	if err != nil {
		inst.close()
		return nil, inst.diagnostic(pl.src.Rel, err)
	}
	return inst, nil
}

// instance is one goja runtime running one plugin, owned by its loop. Every
// field but pool, loop and replay is touched only on the loop.
type instance struct {
	pool   *pool
	loop   *eventloop.Loop
	replay bool

	vm        *goja.Runtime
	abort     *goja.Object // the prelude's host side
	seq       int          // effects made so far, in order; their key
	callbacks map[int]*goja.Object
	modules   map[string]*goja.Object // module cache by resolved path
	tokens    map[*engine.Token]*goja.Object
	defined   map[*goja.Object]*defined // defineTool results
	dsh       *goja.Object              // the dsh module
	live      map[*goja.Object]*liveExec
	// preventExtensions is the intrinsic, captured before any script ran.
	preventExtensions goja.Callable
	results           map[*goja.Object]*engine.Result
}

// moduleHead wraps a CommonJS module's code; it is on the code's first line,
// so only that line's columns shift.
const moduleHead = "(function (exports, require, module, __filename, __dirname) {"

func (i *instance) close() { i.loop.Close() }

// runModule runs one CommonJS module (the plugin or a module it requires).
func (i *instance) runModule(vm *goja.Runtime, rel string, out *tsbuild.Output) (goja.Value, error) {
	prog, err := goja.Compile(rel, moduleHead+string(out.Code)+"\n})", false)
	if err != nil {
		return nil, err
	}
	fnv, err := vm.RunProgram(prog)
	if err != nil {
		return nil, err
	}
	fn, _ := goja.AssertFunction(fnv)
	module := vm.NewObject()
	exports := vm.NewObject()
	_ = module.Set("exports", exports)
	i.modules[rel] = module
	req := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return i.require(vm, rel, call.Argument(0).String())
	})
	if _, err := fn(goja.Undefined(), exports, req, module, vm.ToValue(rel), vm.ToValue(path.Dir(rel))); err != nil {
		return nil, err
	}
	return module.Get("exports"), nil
}

// require resolves a module by the rules of scripting.md: "dsh" and "dsh/…"
// are host modules, relative paths resolve inside the scripts directory.
func (i *instance) require(vm *goja.Runtime, from, spec string) goja.Value {
	if spec == "dsh" {
		return i.dsh
	}
	res, err := tsbuild.Resolve(i.pool.src.Root, from, spec)
	if err != nil {
		panic(vm.NewGoError(err))
	}
	if res.Host != "" {
		panic(vm.NewGoError(fmt.Errorf("cannot import %q: no such host module", spec)))
	}
	if m, ok := i.modules[res.Rel]; ok {
		return m.Get("exports")
	}
	code, err := readModule(i.pool.src.Root, res.Rel)
	if err != nil {
		panic(vm.NewGoError(err))
	}
	out, err := tsbuild.Transform(res.Rel, code)
	if err != nil {
		panic(vm.NewGoError(err))
	}
	v, err := i.runModule(vm, res.Rel, out)
	if err != nil {
		panic(err)
	}
	return v
}
