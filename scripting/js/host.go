package js

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"
	"weak"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// Defaults of the host's deadlines.
const (
	DefaultListenerTimeout = hostapi.DefaultListenerTimeout
	DefaultGrace           = hostapi.DefaultGrace
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
	// Modules are the host modules plugins import as "dsh/<name>".
	Modules []Module
	// Memory, when set, stops the calls (and top levels) whose scripts run
	// while the heap passes its limit: they fail with its error and their
	// instances are replaced. Nil turns the bound off.
	Memory *scripting.MemoryGuard

	// transform is tsbuild.Transform, or a test's stand-in.
	transform func(rel string, code []byte) (*tsbuild.Output, error)
}

// Extensions returns .js, .mjs and .ts.
func (h *Host) Extensions() []string { return []string{".js", ".mjs", ".ts"} }

func (h *Host) logger() *slog.Logger { return hostapi.Logger(h.Logger) }

func (h *Host) listenerTimeout() time.Duration { return hostapi.ListenerTimeout(h.ListenerTimeout) }

func (h *Host) grace() time.Duration { return hostapi.Grace(h.Grace) }

// Load evaluates a plugin's top level in a fresh instance; its effects go to
// p, which the loader commits. A plugin that exports `instances = N` (or
// calls dsh.instances(N)) gets N-1 more instances, each replaying the top
// level, for CPU-parallel concurrency-safe tools.
func (h *Host) Load(ctx context.Context, p *scripting.Plugin, src scripting.Source) error {
	_, err := h.load(ctx, p, src)
	return err
}

// load is Load, returning the plugin's pool.
func (h *Host) load(ctx context.Context, p *scripting.Plugin, src scripting.Source) (*pool, error) {
	out, err := h.transformWithin(ctx, src.Rel, src.Code)
	if err != nil {
		return nil, asDiagnostic(src.Rel, err)
	}
	pl := &pool{host: h, plugin: p, src: src, main: out, log: h.logger().With("plugin", src.Rel)}
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

// transformWithin transforms a plugin's file under the load deadline, ctx's:
// esbuild runs in Go, where no interrupt reaches it, so it runs on a
// goroutine of its own that is left behind when ctx ends first (it finishes
// on its own, its input bounded by the source size cap and
// tsbuild.CheckNesting, and its result goes to the transform cache, which
// a retry of the same file waits on). The modules a top level requires are
// transformed on its loop, which the deadline abandons the same way.
func (h *Host) transformWithin(ctx context.Context, rel string, code []byte) (*tsbuild.Output, error) {
	transform := h.transform
	if transform == nil {
		transform = tsbuild.Transform
	}
	type result struct {
		out *tsbuild.Output
		err error
	}
	interrupted := func() error {
		return &scripting.Diagnostic{File: rel, Message: transformInterrupted(ctx), Err: context.Cause(ctx)}
	}
	if ctx.Err() != nil {
		return nil, interrupted()
	}
	done := make(chan result, 1)
	go func() {
		out, err := transform(rel, code)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		// A deadline that passed meanwhile ends the load here, whichever
		// of the two select saw (a cached transform is ready at once).
		if ctx.Err() != nil {
			return nil, interrupted()
		}
		return r.out, r.err
	case <-ctx.Done():
		return nil, interrupted()
	}
}

// transformInterrupted is the message of a transform ctx ended: "the
// transform did not finish within the load deadline (5s)" when the load
// deadline passed.
func transformInterrupted(ctx context.Context) string {
	cause := context.Cause(ctx)
	var le *scripting.LoadDeadlineError
	if errors.As(cause, &le) {
		return "the transform did not finish within the load deadline (" + le.Timeout.String() + ")"
	}
	return "the transform was interrupted: " + cause.Error()
}

// MaxInstances bounds a plugin's instances.
const MaxInstances = hostapi.MaxInstances

// pool is a plugin's instances (see package hostpool): calls go to the
// least busy one, and an interrupted instance is replaced by a fresh one that
// replays the top level.
type pool struct {
	host      *Host
	plugin    *scripting.Plugin
	src       scripting.Source
	main      *tsbuild.Output
	log       *slog.Logger
	instances *hostpool.Pool[*instance]
}

// pin returns a new dynamic key served by inst only.
func (pl *pool) pin(inst *instance) int { return pl.instances.Pin(inst) }

// unpin forgets a dynamic key's instance.
func (pl *pool) unpin(k int) { pl.instances.Unpin(k) }

// newInstance starts a loop, installs the prelude and the dsh module, and runs
// the top level. A replay records the script's callbacks without making
// effects on the engine again.
func (pl *pool) newInstance(ctx context.Context, replay bool) (*instance, error) {
	prog, err := prelude()
	if err != nil {
		return nil, fmt.Errorf("dsh prelude: %w", err)
	}
	inst := &instance{pool: pl, replay: replay, callbacks: map[int]*goja.Object{}, modules: map[string]*goja.Object{},
		defined: map[weak.Pointer[goja.Object]]*defined{}, rethrown: map[weak.Pointer[goja.Object]]*hostapi.PolicyError{}}
	inst.loop, err = eventloop.New(eventloop.Options{
		Grace: pl.host.grace(),
		Setup: func(vm *goja.Runtime) error {
			inst.vm = vm
			return inst.setup(vm, prog)
		},
		OnError: func(err error) {
			if eventloop.IsInterrupt(err) { // a deadline, the orphan budget, the memory guard: dsh's doing
				pl.log.Info("instance interrupted: " + err.Error())
				return
			}
			pl.log.Warn("uncaught script error: " + err.Error())
		},
		ThrownValue:  inst.thrownValue,
		MaxErrorText: hostapi.MaxErrorText,
		Enter:        pl.host.watch(),
	})
	if err != nil {
		return nil, fmt.Errorf("starting a JavaScript instance: %w", err)
	}
	_, err = inst.loop.Run(topLevel{ctx}, func(vm *goja.Runtime) (goja.Value, error) {
		return inst.runModule(vm, pl.src.Rel, pl.main)
	}, nil, func(vm *goja.Runtime, v goja.Value, err error) (any, error) {
		if err == nil {
			err = inst.readInstances(vm, v)
		}
		inst.topDone = true
		return nil, err
	})
	if err != nil {
		inst.close()
		return nil, inst.diagnostic(ctx, pl.src.Rel, err)
	}
	return inst, nil
}

// instance is one goja runtime running one plugin, owned by its loop. Every
// field but pool, loop and replay is touched only on the loop.
type instance struct {
	pool          *pool
	loop          *eventloop.Loop
	replay        bool
	wantInstances int  // what the top level asked for (1 by default)
	topDone       bool // the top level finished: later effects are pinned (loop-owned)

	vm        *goja.Runtime
	abort     *goja.Object // the prelude's host side
	seq       int          // effects made so far, in order; their key
	callbacks map[int]*goja.Object
	modules   map[string]*goja.Object // module cache by resolved path
	// renders is the prerenders' deadline timer (loop-owned).
	renders   renderTimer
	tokens    hostapi.Tokens[*goja.Object]
	defined   map[weak.Pointer[goja.Object]]*defined   // defineTool results, forgotten with them (loop-owned)
	swept     int                                      // len(defined) after its last sweep
	settled   map[string]goja.Value                    // plainSettled's promises (loop-owned)
	caches    caches                                   // conversions calls share (loop-owned)
	args      map[weak.Pointer[goja.Object]]*argsEntry // listeners' lazy exec.arguments (loop-owned)
	argsSwept int
	dsh       *goja.Object // the dsh module
	live      map[*goja.Object]*liveExec
	hostMods  map[string]goja.Value
	outputs   []*tsbuild.Output // of every module run, for stack traces
	// lastArgs is the last arguments snapshot converted, and its JS object.
	lastArgs   *dsl.Object
	lastArgsJS goja.Value
	fns        *execFns
	// realm is the runtime's value boundary, prepared before any script ran.
	realm   *jsvalue.Realm
	results map[*goja.Object]*engine.Result
	// rethrown maps the errors rethrow made to the failures they stand for
	// (loop-owned).
	rethrown      map[weak.Pointer[goja.Object]]*hostapi.PolicyError
	rethrownSwept int
}

// moduleHead wraps a CommonJS module's code; it is on the code's first line,
// so only that line's columns shift.
const moduleHead = "(function (exports, require, module, __filename, __dirname) {"

// close stops the instance without waiting for its goroutines.
func (i *instance) close() { i.loop.Abandon() }

// Broken reports whether the instance was interrupted or faulted.
func (i *instance) Broken() bool { return i.loop.Broken() }

// Abandon stops the instance without waiting; the channel closes once its
// loop goroutine and host work have exited.
func (i *instance) Abandon() <-chan struct{} { return i.loop.Abandon() }

// Breaks returns a channel closed when the loop breaks (hostpool.Breaker).
func (i *instance) Breaks() <-chan struct{} { return i.loop.Interrupted() }

// Effects is the number of effects the top level made.
func (i *instance) Effects() int { return i.seq }

// readInstances reads the instance count the top level asked for: an
// `instances` export, or dsh.instances(n) (which wins).
func (i *instance) readInstances(vm *goja.Runtime, exports goja.Value) error {
	if i.wantInstances == 0 {
		i.wantInstances = 1
		if o, ok := exports.(*goja.Object); ok {
			if v := o.Get("instances"); v != nil && !goja.IsUndefined(v) {
				n, err := instanceCount(v)
				if err != nil {
					return err
				}
				i.wantInstances = n
			}
		}
	}
	return nil
}

func instanceCount(v goja.Value) (int, error) { return hostapi.InstanceCount(number(v)) }

// runModule runs one CommonJS module (the plugin or a module it requires).
func (i *instance) runModule(vm *goja.Runtime, rel string, out *tsbuild.Output) (goja.Value, error) {
	prog, err := compileModule(rel, out)
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
	i.outputs = append(i.outputs, out)
	req := vm.ToValue(func(call goja.FunctionCall) goja.Value {
		return i.require(vm, rel, call.Argument(0).String())
	})
	if _, err := fn(goja.Undefined(), exports, req, module, vm.ToValue(rel), vm.ToValue(path.Dir(rel))); err != nil {
		return nil, err
	}
	return module.Get("exports"), nil
}

// require resolves a module by the rules of docs/plugins.md: "dsh" and "dsh/…"
// are host modules, relative paths resolve inside the scripts directory.
func (i *instance) require(vm *goja.Runtime, from, spec string) goja.Value {
	if spec == "dsh" {
		return i.dsh
	}
	res, err := tsbuild.Resolve(i.pool.src.Root, from, spec)
	if err != nil {
		throw(vm, err)
	}
	if res.Host != "" {
		m, err := i.hostModule(vm, strings.TrimPrefix(res.Host, "dsh/"))
		if err != nil {
			throw(vm, err)
		}
		return m
	}
	if m, ok := i.modules[res.Rel]; ok {
		return m.Get("exports")
	}
	code, err := readModule(i.pool.src.Root, res.Rel)
	if err != nil {
		throw(vm, err)
	}
	out, err := tsbuild.Transform(res.Rel, code)
	if err != nil {
		throw(vm, err)
	}
	v, err := i.runModule(vm, res.Rel, out)
	if err != nil {
		panic(err)
	}
	return v
}
