package js

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/warmpool"
	"github.com/dsh-go/dsh/scripting/js/internal/eventloop"
	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
	"github.com/dsh-go/dsh/scripting/js/internal/jsrewrite"
	"github.com/dsh-go/dsh/scripting/js/internal/jsvalue"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// ProgramBackend is the name of the goja program runtime in its errors
// ("goja: run() after disposal").
const ProgramBackend = "goja"

// computePoll is the longest interval between two reads of a run's busy
// time (§3.2: sampled every 25 ms); a check falls due sooner when the
// budget's remainder is shorter.
const computePoll = 25 * time.Millisecond

// programPath is the name programs are transformed and compiled under: stack
// frames and syntax errors name it.
const programPath = "program.ts"

// mainName is the wrapper function around a program; the name is reserved
// as a binding global (§3.5), so no parameter can shadow it.
const mainName = "__dsh_main__"

// preludeName names the prelude in stack frames, which are dropped.
const preludeName = "<dsh-prelude>"

// maxCachedPrograms bounds the compiled-program cache.
const maxCachedPrograms = 256

// Messages a program's binding call rejects with.
const (
	msgArgsAbsent      = "tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)"
	msgArgsLossyPrefix = "tool arguments must be lossless JSON: "
	msgResolutionLossy = "binding resolution must be lossless JSON"
	// msgRunOverFormat is a call made after the program settled: the
	// message the sub-call scheduler gives a call it abandons at the run's
	// end (run_code spec §2.6), since the run is over for it too.
	msgRunOverFormat    = "run_code run is over (run_code settled); %s tool call abandoned"
	consoleMethodsCount = 5
)

// consoleMethods are the five methods of a program's console (§3.4).
var consoleMethods = [consoleMethodsCount]string{"log", "info", "warn", "error", "debug"}

// ProgramOptions configures a [ProgramRuntime].
type ProgramOptions struct {
	// Budgets are the runs' limits (§3.2); the zero value means
	// ptc.DefaultBudgets(). They are validated by NewProgramRuntime.
	Budgets ptc.Budgets
	// Logger receives what belongs to no run's result (an unhandled
	// rejection left by a program); nil discards it.
	Logger *slog.Logger
	// Memory, when set, stops a run whose program runs while the heap
	// passes the guard's limit: the run fails as worker-exit with
	// "worker exceeded its memory limit (<n> MiB)". In-process this is a
	// sampled bound, not a hard one (process isolation gives that); nil
	// turns it off.
	Memory *scripting.MemoryGuard
	// WarmRuntimes is how many base runtimes (a loop with jsguard and the
	// prelude, nothing of any run) are kept built ahead of need by a
	// background goroutine; 0 means DefaultWarmRuntimes, a negative value
	// none (each run then builds its own).
	WarmRuntimes int
	// ContainedByProcess is only for a process that is its own guard: the
	// run_code child of process isolation, memory-capped, killed whole,
	// with its Go stack capped low, where a Go stack overflow ends that
	// child alone (the run fails as worker-exit). Its runtimes keep every
	// part of jsguard that decides what a program sees (its JSON, join,
	// regular expressions and their time limit, the allocation and BigInt
	// caps, the source checks) and leave to goja the builtins jsguard
	// would only count for native re-entry, which are most of the cost
	// of building a runtime. The memory guard and the interrupts (the
	// compute budget, the wall-clock ceiling) are unchanged. In-process
	// runtimes must leave it false.
	ContainedByProcess bool
}

// DefaultWarmRuntimes is the number of base runtimes a ProgramRuntime keeps
// built ahead of need when ProgramOptions.WarmRuntimes is 0.
const DefaultWarmRuntimes = 2

// ProgramRuntime runs run_code programs written in TypeScript or JavaScript
// in goja, in-process (docs/run-code.md). Each run gets a fresh
// goja runtime with jsguard installed (contained in a process-isolation
// child: ProgramOptions.ContainedByProcess) and nothing else but the program's
// parameters: its namespaces, their error classes and console. There are no
// timers, no require, no process. Programs are type-stripped by esbuild and
// compiled once per content. A call of a name a namespace lacks
// (tools.nope({})) rejects with the namespace's error class, `unknown tool
// "nope"` and the closest bound names, while reading the name still gives
// undefined (see callSites).
//
// The part of a runtime that is the same for every run (the loop, the
// value boundary, the captured intrinsics, the prelude and jsguard) is built
// ahead of need by a background goroutine (see ProgramOptions.WarmRuntimes);
// a run takes one, installs its own parameters in it before the program's
// first instruction, and disposes of it at its end: a runtime that ran a
// program is never used again (§0.3).
//
// A run ends by its completion, its compute budget (the interpreter's busy
// time), its wall-clock ceiling, the end of its context, or Close; every end
// but the completion interrupts the interpreter, which no try/finally can
// catch, and Run returns only once it has stopped. Binding calls still in
// flight then see their context cancelled; their late outcomes are dropped.
type ProgramRuntime struct {
	budgets ptc.Budgets
	log     *slog.Logger
	memory  *scripting.MemoryGuard
	// contained is ProgramOptions.ContainedByProcess.
	contained bool

	runs ptc.Runs[*programRun]

	cmu   sync.Mutex
	cache map[*tsbuild.Output]compiledProgram

	pool *warmpool.Pool[*programBase]
}

var _ ptc.Runtime = (*ProgramRuntime)(nil)

// NewProgramRuntime validates opts' budgets and returns a runtime.
func NewProgramRuntime(opts ProgramOptions) (*ProgramRuntime, error) {
	b := opts.Budgets
	if b == (ptc.Budgets{}) {
		b = ptc.DefaultBudgets()
	}
	if err := b.Validate(ProgramBackend); err != nil {
		return nil, err
	}
	if _, err := programPrelude(); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := &ProgramRuntime{
		budgets:   b,
		log:       log,
		memory:    opts.Memory,
		contained: opts.ContainedByProcess,
		cache:     make(map[*tsbuild.Output]compiledProgram),
	}
	warm := opts.WarmRuntimes
	if warm == 0 {
		warm = DefaultWarmRuntimes
	}
	p.pool = warmpool.New(max(warm, 0), p.newBase, (*programBase).dispose,
		func(b *programBase) bool { return !b.loop.Broken() })
	return p, nil
}

// Language is ptc.TypeScript.
func (p *ProgramRuntime) Language() ptc.Language { return ptc.TypeScript }

// Isolation is ptc.InProcess.
func (p *ProgramRuntime) Isolation() ptc.Isolation { return ptc.InProcess }

// Close fails the runs in flight as {abort, "runtime disposed"}, waits for
// their interpreters to stop, stops building base runtimes and disposes of
// the idle ones, and makes later runs fail with ptc.RunAfterDisposal. It is
// idempotent.
func (p *ProgramRuntime) Close() error {
	p.runs.Close(func(r *programRun) { r.stop(ptc.DisposedFailure()) })
	p.pool.Close()
	return nil
}

// Run runs one program (see ptc.Runtime). Its error is for contract misuse
// only: a request whose bindings ptc.ValidateBindingsFor refuses, or a run
// after Close.
func (p *ProgramRuntime) Run(ctx context.Context, req ptc.Request) (ptc.Result, error) {
	if err := ptc.ValidateBindingsFor(ptc.TypeScript, ProgramBackend, req.Bindings); err != nil {
		return ptc.Result{}, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	r := &programRun{rt: p, ctx: ctx, req: req, ledger: ptc.NewLedger(int64(p.budgets.MaxOutputBytes))}
	r.calls, r.endCalls = context.WithCancelCause(ctx)
	defer r.endCalls(errRunStopped)
	if !p.runs.Join(r) {
		return ptc.Result{}, ptc.RunAfterDisposal(ProgramBackend)
	}
	defer p.runs.Leave(r)
	if ctx.Err() != nil { // pre-aborted: no interpreter is made
		return r.ledger.Finish(ptc.Result{Err: ptc.AbortFailure(ptc.CauseText(ctx))}), nil
	}
	prog, fail := p.compile(req)
	if fail != nil {
		return r.ledger.Finish(ptc.Result{Err: fail}), nil
	}
	r.prog = prog
	res := r.run()
	if req.OnCompute != nil {
		req.OnCompute(float64(r.busyNow()) / float64(time.Millisecond))
	}
	return r.ledger.Finish(res), nil
}

// header is the wrapper's head for a request: the async function whose
// parameters are the namespaces, the error classes and console (§2.2).
func header(req ptc.Request) string {
	var b strings.Builder
	b.WriteString("async function " + mainName + "(")
	for _, ns := range req.Bindings {
		b.WriteString(ns.Global + ", ")
	}
	for _, ns := range req.Bindings {
		if ns.ErrorClass != "" {
			b.WriteString(ns.ErrorClass + ", ")
		}
	}
	b.WriteString("console) {")
	return b.String()
}

// compiledProgram is a compiled program and its call sites.
type compiledProgram struct {
	prog  *goja.Program
	calls callSites
}

// compile type-strips and compiles a request's program, or returns the
// exception failure of its syntax error. The header shares the program's
// first line, so lines are the program's own.
func (p *ProgramRuntime) compile(req ptc.Request) (compiledProgram, *ptc.Failure) {
	head := header(req)
	src := head + req.Program + "\n}"
	out, err := tsbuild.Transform(programPath, []byte(src))
	if err != nil {
		return compiledProgram{}, syntaxFailure(err, len(head))
	}
	p.cmu.Lock()
	cp, ok := p.cache[out]
	p.cmu.Unlock()
	if ok {
		return cp, nil
	}
	code := "(function () {" + string(out.Code) + "\nreturn " + mainName + ";\n})"
	file, err := parser.ParseFile(nil, programPath, code, 0)
	if err != nil {
		return compiledProgram{}, ptc.ExceptionFailure("SyntaxError: " + err.Error())
	}
	if !wellWrapped(file) {
		return compiledProgram{}, ptc.ExceptionFailure("SyntaxError: the program closes its enclosing function (unbalanced \"}\")")
	}
	calls := collectCallSites(file)
	if jsrewrite.MayNeed(out.Code) {
		// BigInt operators become calls of jsguard's capped helpers.
		if _, err := jsrewrite.Operators(file); err != nil {
			return compiledProgram{}, ptc.ExceptionFailure("SyntaxError: " + err.Error())
		}
	}
	prog, err := goja.CompileAST(file, false)
	if err != nil {
		// An early error esbuild let through (a strict-mode delete, say):
		// goja names its class and the position in the transformed code,
		// which the source map takes back to the program's line.
		msg := err.Error()
		if !strings.HasPrefix(msg, "SyntaxError: ") && !strings.HasPrefix(msg, "ReferenceError: ") {
			msg = "SyntaxError: " + msg
		}
		return compiledProgram{}, ptc.ExceptionFailure(firstLineColumns(tsbuild.MapStack(msg, out), len(head)))
	}
	cp = compiledProgram{prog: prog, calls: calls}
	p.cmu.Lock()
	if len(p.cache) >= maxCachedPrograms {
		clear(p.cache)
	}
	p.cache[out] = cp
	p.cmu.Unlock()
	return cp, nil
}

// syntaxFailure is the exception of a program esbuild refused: its message
// and the program's line (and column, less the header on line 1).
func syntaxFailure(err error, headLen int) *ptc.Failure {
	var d *scripting.Diagnostic
	if !errors.As(err, &d) {
		return ptc.ExceptionFailure("SyntaxError: " + err.Error())
	}
	col := d.Col
	if d.Line == 1 && col > headLen {
		col -= headLen
	}
	msg := "SyntaxError: " + d.Message
	if d.Line > 0 {
		msg += fmt.Sprintf(" (line %d, column %d)", d.Line, col)
	}
	return ptc.ExceptionFailure(msg)
}

// wellWrapped reports whether a compiled wrapper still has the shape it was
// given: its function's body ends with the wrapped function's declaration
// (the only one of its name) and the return of it. A program that closes the
// function early to reach the wrapper's scope breaks that shape.
func wellWrapped(file *ast.Program) bool {
	if len(file.Body) != 1 {
		return false
	}
	es, ok := file.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	fn, ok := es.Expression.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil {
		return false
	}
	list := fn.Body.List
	if len(list) < 2 {
		return false
	}
	if _, ok := list[len(list)-1].(*ast.ReturnStatement); !ok {
		return false
	}
	count := 0
	for i, st := range list {
		if d, ok := st.(*ast.FunctionDeclaration); ok && d.Function.Name != nil && d.Function.Name.Name == mainName {
			if i != len(list)-2 {
				return false
			}
			count++
		}
	}
	return count == 1
}

// preludeSrc is compiled once and run first in every runtime, before any
// program code: what it returns only calls the intrinsics it was given.
const preludeSrc = `(function (CapturedError, create, defineProperty, setPrototypeOf, apply) {
  'use strict';
  function field(e, k, v) {
    const a = create(null);
    a.enumerable = true;
    a.value = v;
    defineProperty(e, k, a);
  }
  return [
    function errorClass(name, member) {
      const C = class BindingCallError extends CapturedError {
        constructor(memberName, message) {
          super(message);
          field(this, 'name', name);
          field(this, member, memberName);
        }
      };
      const proto = C.prototype;
      return [C, function (memberName, message) {
        const e = new CapturedError(message);
        setPrototypeOf(e, proto);
        field(e, 'name', name);
        field(e, member, memberName);
        return e;
      }];
    },
    function plainError(message) { return new CapturedError(message); },
    async function run(box, fn, args, settled) {
      try {
        box.value = await apply(fn, undefined, args);
      } catch (e) {
        box.threw = true;
        box.error = e;
      }
      settled();
    }
  ];
})`

var programPrelude = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile(preludeName, preludeSrc, true)
})

// programRun is one run: its request, its ledger, its loop and how it ended.
type programRun struct {
	rt  *ProgramRuntime
	ctx context.Context
	// calls is the binding calls' context: ctx, also ended when the run
	// stops (a budget, Close), so that a wait for a call ends with it.
	calls    context.Context
	endCalls context.CancelCauseFunc
	req      ptc.Request
	prog     compiledProgram
	ledger   *ptc.Ledger

	mu       sync.Mutex
	loop     *eventloop.Loop
	fail     *ptc.Failure // why it was stopped, first reason wins
	finished bool

	// Busy time: ns spent in entries so far, and when the current entry
	// began (ns since base, +1; 0 outside entries).
	base    time.Time
	busy    atomic.Int64
	entered atomic.Int64
	ctimer  *time.Timer
	cmu     sync.Mutex
	cdone   bool

	// Loop-owned, set up before any program code: the base's, then the
	// run's own parameters.
	*programBase
	box     *goja.Object // the outcome, written by shell
	args    []goja.Value // namespaces, error classes, console
	makeErr []goja.Callable
	// settled is set once the program has returned or thrown: a call its
	// leftover code makes later (an async function still running) is
	// refused and never reaches the bridge.
	settled bool
}

// errRunStopped is the cause of a Break: the run's failure says why.
var errRunStopped = errors.New("program run stopped")

// stop ends the run for f unless it already ended: the interpreter is
// interrupted (uncatchably) and the run reports f.
func (r *programRun) stop(f *ptc.Failure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail != nil || r.finished {
		return
	}
	r.fail = f
	r.endCalls(errRunStopped)
	if r.loop != nil {
		r.loop.Break(errRunStopped)
	}
}

// run runs the compiled program to its result (before the ledger's Finish).
func (r *programRun) run() (res ptc.Result) {
	b := r.rt.budgets
	base, err := r.rt.pool.Take()
	if err != nil {
		return ptc.Result{Err: ptc.CrashFailure(err.Error())}
	}
	r.programBase = base
	base.taker.Store(r)
	loop := base.loop
	defer func() {
		loop.Abandon()
		<-loop.Done() // the interpreter has stopped
		r.rt.pool.Refill()
	}()
	r.mu.Lock()
	r.loop = loop
	if r.fail != nil {
		loop.Break(errRunStopped)
	}
	r.mu.Unlock()

	stopAbort := context.AfterFunc(r.ctx, func() { r.stop(ptc.AbortFailure(ptc.CauseText(r.ctx))) })
	wall := time.AfterFunc(msDuration(b.MaxWallMs), func() { r.stop(ptc.WallCeilingFailure(b.MaxWallMs)) })
	r.base = time.Now()
	r.busy.Store(0)
	r.armCompute(msDuration(b.ComputeMs))

	v, err := loop.Run(context.Background(), r.start, nil, r.done)

	stopAbort()
	wall.Stop()
	r.cmu.Lock()
	r.cdone = true
	r.ctimer.Stop()
	r.cmu.Unlock()
	r.mu.Lock()
	r.finished = true
	if r.fail == nil && r.ctx.Err() != nil { // ended before its result was taken
		r.fail = ptc.AbortFailure(ptc.CauseText(r.ctx))
	}
	fail := r.fail
	r.mu.Unlock()

	switch {
	case fail != nil:
		return ptc.Result{Err: fail}
	case err != nil:
		var pe *eventloop.PanicError
		var je *eventloop.JSError
		if mle, ok := memoryLimit(err); ok {
			return ptc.Result{Err: ptc.MemoryLimitFailure(float64(mle.Limit / scripting.MiB))}
		}
		switch {
		case errors.As(err, &pe):
			return ptc.Result{Err: ptc.CrashFailure(fmt.Sprint(pe.Value))}
		case errors.As(err, &je):
			return ptc.Result{Err: ptc.ExceptionFailure(r.mapStack(je.Stack))}
		}
		return ptc.Result{Err: ptc.CrashFailure(err.Error())}
	}
	out, _ := v.(ptc.Result)
	return out
}

// msDuration converts a validated budget in ms.
func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// enter accounts the busy time of each entry into the interpreter.
func (r *programRun) enter(*eventloop.Loop) func() {
	start := int64(time.Since(r.base)) + 1
	r.entered.Store(start)
	return func() {
		r.entered.Store(0)
		r.busy.Add(int64(time.Since(r.base)) + 1 - start)
	}
}

// busyNow is the busy time so far, the current entry included.
func (r *programRun) busyNow() time.Duration {
	n := r.busy.Load()
	if s := r.entered.Load(); s != 0 {
		n += int64(time.Since(r.base)) + 1 - s
	}
	return time.Duration(n)
}

// armCompute checks the compute budget every computePoll, or when the rest
// of the budget could run out if sooner.
func (r *programRun) armCompute(budget time.Duration) {
	var check func()
	next := func() time.Duration {
		return max(min(computePoll, budget-r.busyNow()), time.Millisecond)
	}
	check = func() {
		if r.busyNow() >= budget {
			r.stop(ptc.ComputeBudgetFailure(r.rt.budgets.ComputeMs))
			return
		}
		r.cmu.Lock()
		defer r.cmu.Unlock()
		if !r.cdone {
			r.ctimer.Reset(next())
		}
	}
	r.cmu.Lock()
	r.ctimer = time.AfterFunc(next(), check)
	r.cmu.Unlock()
}

// intrinsics are the builtins a run reads values through, captured before
// any program code (and before jsguard wraps them).
type intrinsics struct {
	gopd        goja.Callable // Object.getOwnPropertyDescriptor
	objectProto *goja.Object
	arrayProto  *goja.Object
	errorProto  *goja.Object
	toString    goja.Value // Object.prototype.toString
	arrToString goja.Value // Array.prototype.toString
	join        goja.Value // Array.prototype.join

	// What the console reads Maps, RegExps and weak collections with:
	// natives that read internal slots and call nothing.
	mapSize     goja.Callable // get Map.prototype.size
	mapEntries  goja.Callable // Map.prototype.entries
	mapIterNext goja.Callable // %MapIteratorPrototype%.next
	reSource    goja.Callable // get RegExp.prototype.source
	reFlags     []regexpFlag  // the flag getters, in node's order
	weakMapHas  goja.Callable // WeakMap.prototype.has
	weakSetHas  goja.Callable // WeakSet.prototype.has
}

// regexpFlag is one flag of a regular expression and its getter.
type regexpFlag struct {
	letter byte
	get    goja.Callable
}

// programBase is a runtime built ahead of need: its loop, the value
// boundary, the intrinsics, no timers, the prelude and jsguard, and nothing
// of any run. One run takes it and disposes of it.
type programBase struct {
	loop       *eventloop.Loop
	vm         *goja.Runtime
	realm      *jsvalue.Realm
	intr       intrinsics
	errorClass goja.Callable // the prelude's errorClass
	plainErr   goja.Callable
	shell      goja.Callable // the prelude's run
	console    *goja.Object  // logs to the taker's ledger
	// The error class run_code's namespace asks for, made ahead (a class
	// and its maker); the first namespace that asks for it takes it.
	warmClass goja.Value
	warmMake  goja.Callable

	taker atomic.Pointer[programRun] // the run that took it
}

// newBase builds a base runtime.
func (p *ProgramRuntime) newBase() (*programBase, error) {
	b := &programBase{}
	loop, err := eventloop.New(eventloop.Options{
		Grace:        -1,
		OrphanBudget: -1,
		Guard:        jsguard.Options{Contained: p.contained},
		// A thrown text longer than the output cap fails the run as
		// output-limit (cut, it is still longer): only that much crosses.
		MaxErrorText: int(p.budgets.MaxOutputBytes),
		Setup:        b.setup,
		OnError: func(err error) {
			if !eventloop.IsInterrupt(err) {
				p.log.Debug("program: " + err.Error())
			}
		},
		Enter: b.onEnter,
	})
	if err != nil {
		return nil, err
	}
	b.loop = loop
	return b, nil
}

// dispose stops an unused base's loop.
func (b *programBase) dispose() { b.loop.Close() }

func nothing() {}

// onEnter accounts busy time to the run that took the base, if any, and
// has the memory guard watch the entry.
func (b *programBase) onEnter(l *eventloop.Loop) func() {
	r := b.taker.Load()
	if r == nil {
		return nothing
	}
	leave := r.enter(l)
	if g := r.rt.memory; g != nil {
		unwatch := g.Enter(loopVictim{l})
		return func() { unwatch(); leave() }
	}
	return leave
}

// setup prepares a fresh runtime: the value boundary, the intrinsics, no
// timers, the prelude (jsguard goes in after it).
func (b *programBase) setup(vm *goja.Runtime) error {
	b.vm = vm
	realm, err := jsvalue.Prepare(vm)
	if err != nil {
		return err
	}
	b.realm = realm
	global := vm.GlobalObject()
	for _, name := range []string{"setTimeout", "clearTimeout", "queueMicrotask"} {
		if err := global.Delete(name); err != nil {
			return err
		}
	}
	object := global.Get("Object").ToObject(vm)
	var ok bool
	if b.intr.gopd, ok = goja.AssertFunction(object.Get("getOwnPropertyDescriptor")); !ok {
		return errors.New("program: Object.getOwnPropertyDescriptor is not a function")
	}
	b.intr.objectProto = object.Get("prototype").ToObject(vm)
	b.intr.arrayProto = global.Get("Array").ToObject(vm).Get("prototype").ToObject(vm)
	errCtor := global.Get("Error").ToObject(vm)
	b.intr.errorProto = errCtor.Get("prototype").ToObject(vm)

	if err := b.intr.captureConsole(vm); err != nil {
		return err
	}

	pre, err := programPrelude()
	if err != nil {
		return err
	}
	fv, err := vm.RunProgram(pre)
	if err != nil {
		return err
	}
	mk, _ := goja.AssertFunction(fv)
	reflectObj := global.Get("Reflect").ToObject(vm)
	fns, err := mk(goja.Undefined(), errCtor, object.Get("create"), object.Get("defineProperty"),
		object.Get("setPrototypeOf"), reflectObj.Get("apply"))
	if err != nil {
		return err
	}
	arr := fns.ToObject(vm)
	b.errorClass, _ = goja.AssertFunction(arr.Get("0"))
	b.plainErr, _ = goja.AssertFunction(arr.Get("1"))
	b.shell, _ = goja.AssertFunction(arr.Get("2"))
	if b.warmClass, b.warmMake, err = b.newErrorClass(vm, warmErrorClass, warmErrorMember); err != nil {
		return err
	}
	b.console = b.newConsole(vm)
	return nil
}

// captureConsole captures the natives the console inspects Maps, RegExps
// and weak collections with, before any program code can replace them.
func (in *intrinsics) captureConsole(vm *goja.Runtime) error {
	global := vm.GlobalObject()
	proto := func(ctor string) (*goja.Object, error) {
		c, ok := global.Get(ctor).(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("program: %s is not a constructor", ctor)
		}
		p, ok := c.Get("prototype").(*goja.Object)
		if !ok {
			return nil, fmt.Errorf("program: %s.prototype is not an object", ctor)
		}
		return p, nil
	}
	method := func(o *goja.Object, name string) goja.Callable {
		f, _ := goja.AssertFunction(o.Get(name))
		return f
	}
	getter := func(o *goja.Object, name string) goja.Callable {
		d, err := in.gopd(goja.Undefined(), o, vm.ToValue(name))
		if err != nil {
			return nil
		}
		do, ok := d.(*goja.Object)
		if !ok {
			return nil
		}
		f, _ := goja.AssertFunction(do.Get("get"))
		return f
	}
	mp, err := proto("Map")
	if err != nil {
		return err
	}
	in.mapSize, in.mapEntries = getter(mp, "size"), method(mp, "entries")
	if in.mapEntries != nil {
		ctor, _ := global.Get("Map").(*goja.Object)
		m, err := vm.New(ctor)
		if err != nil {
			return err
		}
		it, err := in.mapEntries(m)
		if err != nil {
			return err
		}
		if io, ok := it.(*goja.Object); ok && io.Prototype() != nil {
			in.mapIterNext = method(io.Prototype(), "next")
		}
	}
	rp, err := proto("RegExp")
	if err != nil {
		return err
	}
	in.reSource = getter(rp, "source")
	for _, f := range []struct {
		letter byte
		name   string
	}{{'d', "hasIndices"}, {'g', "global"}, {'i', "ignoreCase"}, {'m', "multiline"}, {'s', "dotAll"},
		{'u', "unicode"}, {'v', "unicodeSets"}, {'y', "sticky"}} {
		if g := getter(rp, f.name); g != nil {
			in.reFlags = append(in.reFlags, regexpFlag{f.letter, g})
		}
	}
	for _, w := range []struct {
		ctor string
		dst  *goja.Callable
	}{{"WeakMap", &in.weakMapHas}, {"WeakSet", &in.weakSetHas}} {
		p, err := proto(w.ctor)
		if err != nil {
			return err
		}
		*w.dst = method(p, "has")
	}
	if in.mapSize == nil || in.mapEntries == nil || in.mapIterNext == nil || in.reSource == nil ||
		in.weakMapHas == nil || in.weakSetHas == nil {
		return errors.New("program: an intrinsic the console reads with is missing")
	}
	return nil
}

// The error class of run_code's namespace (ptc.NewExecutor's "tools"),
// which a base makes ahead of need.
const (
	warmErrorClass  = "ToolCallError"
	warmErrorMember = "toolName"
)

// newErrorClass makes an error class and its maker (§2.4).
func (b *programBase) newErrorClass(vm *goja.Runtime, name, member string) (goja.Value, goja.Callable, error) {
	pair, err := b.errorClass(goja.Undefined(), vm.ToValue(name), vm.ToValue(member))
	if err != nil {
		return nil, nil, err
	}
	po := pair.ToObject(vm)
	mk, _ := goja.AssertFunction(po.Get("1"))
	return po.Get("0"), mk, nil
}

// bind installs a run's parameters in its base, before any of its code:
// the namespaces, their error classes and console. They are made Go-side
// or by the prelude's functions, which only call intrinsics captured before
// jsguard, as they were before this runtime ran anything else.
func (r *programRun) bind(vm *goja.Runtime) error {
	nsCount := len(r.req.Bindings)
	r.args = make([]goja.Value, 0, nsCount*2+1)
	r.makeErr = make([]goja.Callable, nsCount)
	var classes []goja.Value
	warm := true
	for i, ns := range r.req.Bindings {
		switch {
		case ns.ErrorClass == "":
		case warm && ns.ErrorClass == warmErrorClass && ns.ErrorMember == warmErrorMember:
			warm = false
			classes = append(classes, r.warmClass)
			r.makeErr[i] = r.warmMake
		default:
			class, mk, err := r.newErrorClass(vm, ns.ErrorClass, ns.ErrorMember)
			if err != nil {
				return err
			}
			classes = append(classes, class)
			r.makeErr[i] = mk
		}
		obj, err := r.namespace(vm, i, ns)
		if err != nil {
			return err
		}
		r.args = append(r.args, obj)
	}
	r.args = append(r.args, classes...)
	r.args = append(r.args, r.programBase.console)
	return nil
}

// native is a Go function as a JS function with a name and a length.
func native(vm *goja.Runtime, name string, length int, f func(goja.FunctionCall) goja.Value) *goja.Object {
	obj := vm.ToValue(f).(*goja.Object)
	_ = obj.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	_ = obj.DefineDataProperty("length", vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj
}

// namespace builds a namespace object (§2.3): null prototype, each binding
// an own enumerable, non-writable, non-configurable function of one
// argument that returns a promise. It is a Proxy of that object whose only
// trap, get, is Go: a name the object lacks is undefined, but at a call
// site (tools.nope({})) a function rejecting as an unknown tool (see
// callSites). Every other operation is the object's own.
func (r *programRun) namespace(vm *goja.Runtime, i int, ns ptc.Namespace) (*goja.Object, error) {
	obj := vm.NewObject()
	if err := obj.SetPrototype(nil); err != nil {
		return nil, err
	}
	for _, b := range ns.Bindings {
		fn := native(vm, b.Name, 1, func(call goja.FunctionCall) goja.Value {
			return vm.ToValue(r.call(vm, i, b, call.Argument(0)))
		})
		if err := obj.DefineDataProperty(b.Name, fn, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
			return nil, err
		}
	}
	px := vm.NewProxy(obj, &goja.ProxyTrapConfig{
		Get: func(target *goja.Object, name string, _ goja.Value) goja.Value {
			if v := target.Get(name); v != nil {
				return v
			}
			if r.prog.calls.fetches(vm, name) {
				return r.unknownBinding(vm, i, name)
			}
			return goja.Undefined()
		},
	})
	return vm.ToValue(px).(*goja.Object), nil
}

// call is one binding call: the argument converted Go-side (refused before
// any dispatch when it is not lossless JSON), the binding run off the loop,
// its outcome converted back or its error raised as the namespace's error.
func (r *programRun) call(vm *goja.Runtime, i int, b ptc.Binding, arg goja.Value) *goja.Promise {
	reject := func(msg string) *goja.Promise {
		p, _, rej := vm.NewPromise()
		_ = rej(r.bindingError(vm, i, b.Name, msg))
		return p
	}
	if r.settled {
		return reject(fmt.Sprintf(msgRunOverFormat, b.Name))
	}
	if arg == nil || goja.IsUndefined(arg) {
		return reject(msgArgsAbsent)
	}
	args, err := r.realm.ToGo(arg, "args", limits)
	if err != nil {
		return reject(msgArgsLossyPrefix + err.Error())
	}
	ctx := r.calls
	settle := func(vm *goja.Runtime, v any, err error) (goja.Value, error) {
		if err != nil {
			panic(r.bindingError(vm, i, b.Name, err.Error()))
		}
		jv, cerr := r.realm.ToJS(v)
		if cerr != nil {
			panic(r.bindingError(vm, i, b.Name, msgResolutionLossy))
		}
		return jv, nil
	}
	if b.Start != nil {
		// Submitted at once, in call order; the caller driving the run
		// waits for the outcome once the program's entry is over, so a
		// sub-call costs no goroutine of its own (eventloop GoInline).
		wait, err := b.Start(ctx, args)
		if err != nil {
			return reject(err.Error())
		}
		return r.loop.GoInline(vm, ctx, wait, settle)
	}
	return r.loop.Go(vm, ctx, func(ctx context.Context) (any, error) {
		return b.Call(ctx, args)
	}, settle)
}

// bindingError is the namespace's error for a failed call: an instance of
// its error class, or a plain Error without one (§2.4).
func (r *programRun) bindingError(vm *goja.Runtime, i int, name, msg string) goja.Value {
	var (
		v   goja.Value
		err error
	)
	if mk := r.makeErr[i]; mk != nil {
		v, err = mk(goja.Undefined(), vm.ToValue(name), vm.ToValue(msg))
	} else {
		v, err = r.plainErr(goja.Undefined(), vm.ToValue(msg))
	}
	if err != nil {
		panic(err) // an interrupt: let it unwind
	}
	return v
}

// newConsole is the five-method log shim (§3.4), logging to the run that
// took the base (only that run's program can reach it).
func (b *programBase) newConsole(vm *goja.Runtime) *goja.Object {
	obj := vm.NewObject()
	_ = obj.SetPrototype(nil)
	for _, m := range consoleMethods {
		_ = obj.Set(m, native(vm, m, 0, func(call goja.FunctionCall) goja.Value {
			r := b.taker.Load()
			if r == nil {
				return goja.Undefined()
			}
			entry := r.renderLog(call.Arguments)
			if r.req.OnLog != nil {
				r.req.OnLog(entry)
			}
			if !r.ledger.Log(entry) {
				r.stop(ptc.OutputLimitFailure(r.ledger.Cap()))
			}
			return goja.Undefined()
		}))
	}
	return obj
}

// start runs the program (the first entry): it instantiates the wrapper,
// then calls it through the prelude's run, which records the outcome in a
// null-prototype box that only Go reads.
func (r *programRun) start(vm *goja.Runtime) (goja.Value, error) {
	if err := r.bind(vm); err != nil {
		return nil, err
	}
	// The methods String() would call, as jsguard left them, before any
	// program code can replace them.
	r.intr.toString = r.intr.objectProto.Get("toString")
	r.intr.arrToString = r.intr.arrayProto.Get("toString")
	r.intr.join = r.intr.arrayProto.Get("join")
	fv, err := vm.RunProgram(r.prog.prog)
	if err != nil {
		return nil, err
	}
	wrapper, _ := goja.AssertFunction(fv)
	mainFn, err := wrapper(goja.Undefined())
	if err != nil {
		return nil, err
	}
	b := vm.NewObject()
	_ = b.SetPrototype(nil)
	r.box = b
	settled := native(vm, "settled", 0, func(goja.FunctionCall) goja.Value {
		r.settled = true
		return goja.Undefined()
	})
	return r.shell(goja.Undefined(), b, mainFn, vm.NewArray(anySlice(r.args)...), settled)
}

func anySlice(vs []goja.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// done turns the recorded outcome into the run's result, on the loop.
func (r *programRun) done(vm *goja.Runtime, _ goja.Value, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	b := r.box
	if t := b.Get("threw"); t != nil && t.ToBoolean() {
		msg, ok := r.thrownText(b.Get("error"))
		if !ok {
			return ptc.Result{Err: ptc.UnrenderableThrowFailure()}, nil
		}
		return ptc.Result{Err: ptc.ExceptionFailure(msg)}, nil
	}
	v := b.Get("value")
	if v == nil || goja.IsUndefined(v) {
		return ptc.Result{}, nil
	}
	// A completion is bounded by the ledger, not by the boundary's default
	// 64 MiB: whatever fits the output cap converts (values past the
	// boundary's other bounds, a million values or 100,000 levels, still
	// count as over the cap).
	lim := limits
	if c := r.ledger.Cap() + 1024; c > int64(dsl.DefaultMaxBytes) {
		lim.MaxBytes = int(c)
	}
	gv, cerr := r.realm.ToGo(v, "value", lim)
	if cerr != nil {
		if errors.Is(cerr, dsl.ErrLimit) {
			r.stop(ptc.OutputLimitFailure(r.ledger.Cap()))
			return ptc.Result{}, nil
		}
		return ptc.Result{Err: ptc.InvalidOutputFailure()}, nil
	}
	return ptc.Result{Value: gv, HasValue: true}, nil
}

// mapStack maps a stack's program positions back to the program's lines
// and drops the prelude's frames.
func (r *programRun) mapStack(stack string) string {
	if head, _, _ := strings.Cut(stack, "\n"); int64(len(head)) > r.ledger.Cap() {
		// Its first line alone passes the output cap: the run fails as
		// output-limit whatever the frames say, so none is mapped (each
		// step would copy the whole text again).
		return head
	}
	if strings.Contains(stack, preludeName) {
		lines := strings.Split(stack, "\n")
		kept := lines[:1]
		for _, l := range lines[1:] {
			if !strings.Contains(l, preludeName) {
				kept = append(kept, l)
			}
		}
		stack = strings.Join(kept, "\n")
	}
	// The last frame is the prelude's call of the program.
	stack = strings.TrimSuffix(stack, "\n\tat apply (native)")
	head := header(r.req)
	out, err := tsbuild.Transform(programPath, []byte(head+r.req.Program+"\n}"))
	if err != nil {
		return stack
	}
	return limitFrames(firstLineColumns(tsbuild.MapStack(stack, out), len(head)))
}

// maxStackFrames is how many frames an exception's stack keeps, as V8's
// default Error.stackTraceLimit: a runaway recursion reports its message and
// the top of its stack, not thousands of identical lines.
const maxStackFrames = 10

// limitFrames keeps the first maxStackFrames "\tat ..." lines of a stack.
func limitFrames(stack string) string {
	lines := strings.Split(stack, "\n")
	frames := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "\tat ") {
			if frames == maxStackFrames {
				return strings.Join(lines[:i], "\n")
			}
			frames++
		}
	}
	return stack
}

// firstLineColumns takes the header's length off the columns of positions
// on the program's first line, which the header shares.
func firstLineColumns(stack string, headLen int) string {
	const at = programPath + ":1:"
	var b strings.Builder
	for {
		i := strings.Index(stack, at)
		if i < 0 {
			b.WriteString(stack)
			return b.String()
		}
		i += len(at)
		b.WriteString(stack[:i])
		stack = stack[i:]
		n := 0
		for n < len(stack) && n < 9 && stack[n] >= '0' && stack[n] <= '9' {
			n++
		}
		if col, err := strconv.Atoi(stack[:n]); err == nil && col > headLen {
			b.WriteString(strconv.Itoa(col - headLen))
			stack = stack[n:]
		}
	}
}
