package ptc

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Prompt sections (§0.1, §7).
const (
	// CodeOnlySectionID is the section saying run_code is the only tool the
	// model calls directly; its text is empty with Direct.
	CodeOnlySectionID    = "tools:code-only"
	CodeOnlySectionOrder = 99
	// SDKSectionID is the section declaring the tools a program calls.
	SDKSectionID    = "tools:sdk"
	SDKSectionOrder = 150
)

// codeOnlyInstruction is the tools:code-only text (upstream's literal).
const codeOnlyInstruction = "`" + ToolName + "` is the only tool you can call directly — a tool call naming any other tool fails. Reach every tool the SDK declares below from inside the program."

// Options configures an Executor.
type Options struct {
	// Direct also presents the visible native tools, callable directly
	// beside run_code (upstream's "both").
	Direct bool
	// MaxParallelSubCalls bounds the sub-calls of one run in flight; 0 means
	// DefaultMaxParallelSubCalls.
	MaxParallelSubCalls int
	// MaxSubCalls bounds the tool calls one run makes; past it a call
	// rejects with "run_code sub-call limit reached: a run may make at most
	// <n> tool calls" and is not dispatched. A call refused before it is
	// queued (lossy arguments, or any of the caps here) does not count. 0
	// means DefaultMaxSubCalls; a negative value is refused. Sub-calls do
	// not count against the engine's nested-call budget
	// (engine.WithNestedCallBudget): each is the root of its own, for the
	// calls nested under it.
	MaxSubCalls int
	// MaxArgumentBytes bounds the size of one sub-call's arguments: their
	// compact JSON size as JSON.stringify writes them (strings measured as
	// JSONStringSize says). Past it the call rejects with "run_code
	// argument size limit reached: a tool call's arguments may be at most
	// <n> bytes" and is not dispatched. The size is measured before the
	// arguments are copied, reading them only up to the cap. 0 means
	// DefaultMaxArgumentBytes; a negative value is refused.
	MaxArgumentBytes int
	// MaxArgumentDepth bounds the nesting of one sub-call's arguments, the
	// root array or object at depth 1. Past it the call rejects with
	// "run_code argument depth limit reached: a tool call's arguments may
	// nest at most <n> levels" and is not dispatched. 0 means
	// DefaultMaxArgumentDepth; a negative value is refused.
	MaxArgumentDepth int
	// MaxQueuedCalls bounds a run's calls waiting in the scheduler's queue
	// (submitted, not yet started). A call that finds the queue full
	// rejects at once with "run_code queue limit reached: at most <n> tool
	// calls may wait to start" and is not dispatched; the calls already
	// queued are unaffected, and once the queue drains calls are accepted
	// again. 0 means DefaultMaxQueuedCalls; a negative value is refused.
	MaxQueuedCalls int
	// MaxParallelToolCalls bounds a step's root calls in flight, as the
	// native executor's cap does; 0 means 10.
	MaxParallelToolCalls int
}

// describe is what the executor shows the model for the visible
// definitions (§0.1): [run_code], or with direct the native schemas then
// run_code, and the two prompt sections over the visible tools minus
// run_code.
func describe(lang Language, direct bool, transport *engine.Definition, defs []*engine.Definition) (engine.Description, error) {
	var d engine.Description
	var natives []*engine.Definition
	for _, def := range defs {
		if def.Name != ToolName {
			natives = append(natives, def)
		}
	}
	if direct {
		native, err := (&engine.NativeExecutor{}).Describe(natives)
		if err != nil {
			return engine.Description{}, err
		}
		d = native
	}
	rc, err := (&engine.NativeExecutor{}).Describe([]*engine.Definition{transport})
	if err != nil {
		return engine.Description{}, err
	}
	d.Schemas = append(d.Schemas, rc.Schemas...)
	d.Names = append(d.Names, rc.Names...)
	codeOnly := codeOnlyInstruction
	if direct {
		codeOnly = ""
	}
	sdk, err := renderSDK(lang, natives)
	if err != nil {
		return engine.Description{}, err
	}
	d.Sections = []engine.Section{
		{ID: CodeOnlySectionID, Order: CodeOnlySectionOrder, Text: codeOnly},
		{ID: SDKSectionID, Order: SDKSectionOrder, Text: sdk},
	}
	return d, nil
}

// noSDKRenderer is the error for a runtime language without an SDK
// renderer (§6 7).
func noSDKRenderer(lang Language) error {
	return fmt.Errorf("ptc: no SDK renderer registered for runtime language %q", lang)
}

// renderSDK renders the tools:sdk section for lang over defs.
func renderSDK(lang Language, defs []*engine.Definition) (string, error) {
	tools := make([]SDKTool, len(defs))
	for i, def := range defs {
		tools[i] = SDKTool{Name: def.Name, Description: def.Description, Parameters: def.Parameters, Output: def.Output.DeclaredSchema()}
	}
	switch lang {
	case TypeScript:
		return TypeScriptSDK(tools), nil
	case Lua:
		return LuaSDK(tools), nil
	default:
		return "", noSDKRenderer(lang)
	}
}

// Executor is the PTC executor (§0.1): it presents run_code (with Direct,
// beside the visible native tools) and runs a step's batch as the native
// executor does; run_code's body runs the program on the Runtime, each of
// its tool calls a sub-call through the full pipeline, ordered by the
// sub-call scheduler (§2.6). Select it for a scope with Scope.SetExecutor;
// agents below inherit it.
type Executor struct {
	svc       *engine.Service
	rt        Runtime
	tel       *runTelemetry // nil: runs are not recorded
	direct    bool
	parallel  int
	subCalls  int
	argBytes  int         // MaxArgumentBytes
	argDepth  int         // MaxArgumentDepth
	queued    int         // MaxQueuedCalls
	params    *dsl.Schema // run_code's parameters, compiled
	native    *engine.NativeExecutor
	transport *engine.Definition
}

var _ engine.TransportExecutor = (*Executor)(nil)

// NewExecutor returns the PTC executor running programs on rt, as
// sql.OpenDB takes a connector.
func NewExecutor(svc *engine.Service, rt Runtime, opts Options) (*Executor, error) {
	if rt == nil {
		return nil, errors.New("ptc: run_code requires a code runtime")
	}
	lang := rt.Language()
	if lang != TypeScript && lang != Lua {
		return nil, noSDKRenderer(lang)
	}
	parallel := opts.MaxParallelSubCalls
	if parallel == 0 {
		parallel = DefaultMaxParallelSubCalls
	}
	if err := ValidateMaxParallelSubCalls(float64(parallel)); err != nil {
		return nil, err
	}
	subCalls, err := positiveOr("MaxSubCalls", opts.MaxSubCalls, DefaultMaxSubCalls)
	if err != nil {
		return nil, err
	}
	argBytes, err := positiveOr("MaxArgumentBytes", opts.MaxArgumentBytes, DefaultMaxArgumentBytes)
	if err != nil {
		return nil, err
	}
	argDepth, err := positiveOr("MaxArgumentDepth", opts.MaxArgumentDepth, DefaultMaxArgumentDepth)
	if err != nil {
		return nil, err
	}
	queued, err := positiveOr("MaxQueuedCalls", opts.MaxQueuedCalls, DefaultMaxQueuedCalls)
	if err != nil {
		return nil, err
	}
	roots := opts.MaxParallelToolCalls
	if roots == 0 {
		roots = 10
	}
	native, err := engine.NewNativeExecutor(svc, roots)
	if err != nil {
		return nil, err
	}
	params, err := dsl.Compile(Parameters(lang))
	if err != nil {
		return nil, fmt.Errorf("ptc: run_code's parameters: %w", err)
	}
	e := &Executor{
		svc: svc, rt: rt, direct: opts.Direct, parallel: parallel, subCalls: subCalls,
		argBytes: argBytes, argDepth: argDepth, queued: queued, params: params, native: native,
		tel: newRunTelemetry(svc.TracerProvider(), svc.MeterProvider(), lang, rt.Isolation()),
	}
	e.transport = &engine.Definition{
		Name:        ToolName,
		Description: Description(lang),
		Parameters:  Parameters(lang),
		Output: engine.Output{
			Schema: OutputSchema(),
			Render: func(_, value any) ([]engine.Block, error) { return RenderOutput(value), nil },
		},
		Execute:     e.execute,
		PresentCall: PresentCall,
	}
	return e, nil
}

// Describe returns [run_code] (with Direct, the native schemas then
// run_code) and the tools:code-only and tools:sdk sections.
func (e *Executor) Describe(defs []*engine.Definition) (engine.Description, error) {
	return describe(e.rt.Language(), e.direct, e.transport, defs)
}

// Execute runs a batch as the native executor does.
func (e *Executor) Execute(ctx context.Context, b engine.Batch) (*engine.BatchResult, error) {
	return e.native.Execute(ctx, b)
}

// Transport returns the run_code definition.
func (e *Executor) Transport() *engine.Definition { return e.transport }

// Direct reports whether the native tools stay callable directly.
func (e *Executor) Direct() bool { return e.direct }

// Runtime returns the runtime programs run on.
func (e *Executor) Runtime() Runtime { return e.rt }

// settledReason ends a run's sub-calls when its program has settled (§7).
const settledReason = "run_code settled"

// execute is run_code's body (§2.1).
func (e *Executor) execute(ctx context.Context, args any, run *engine.Run) (any, error) {
	// The normal defineTool path first (§1.2): a missing or non-string
	// argument is INVALID_ARGS.
	if vs := e.params.ValidateArgs(args); vs != nil {
		return nil, &engine.ArgsError{Violations: vs}
	}
	if err := CheckDescription(args); err != nil {
		return nil, err
	}
	code, _ := stringArg(args, "code")
	outer := run.Execution
	// A caller that shows progress (an MCP client, say) sees the count of
	// committed sub-calls; the sub-calls' own reports are not relayed, as
	// they would not increase with it.
	onCommit := func(_ string, r *engine.Result) { forward(run, r) }
	ctx, rs := e.tel.start(ctx) // the run's span: its sub-calls' parent
	subCtx := ctx
	if engine.HasProgress(ctx) {
		subCtx = engine.WithProgress(ctx, nil)
		committed := 0 // the scheduler commits on one goroutine
		onCommit = func(_ string, r *engine.Result) {
			forward(run, r)
			committed++
			msg := "1 tool call done"
			if committed > 1 {
				msg = strconv.Itoa(committed) + " tool calls done"
			}
			engine.ReportProgress(ctx, engine.Progress{Progress: float64(committed), Message: msg})
		}
	}
	sched, err := newScheduler(subCtx, e.svc, schedulerOptions{
		MaxParallel: e.parallel,
		MaxSubCalls: e.subCalls,
		MaxQueued:   e.queued,
		Outer:       outer,
		Log:         outer.Log(),
		OnCommit:    onCommit,
	})
	if err != nil {
		rs.end(Result{}, err, nil, 0)
		return nil, err
	}
	ns := Namespace{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName"}
	for _, def := range e.svc.Scope(outer.Agent()).Definitions(outer.ToolSet()) {
		if def.Name == ToolName {
			continue
		}
		name, schema := def.Name, def.Parameters
		submission := func(args any) (subCall, error) {
			dispatched, logged, err := snapshotArguments(args, e.argDepth, e.argBytes)
			return subCall{Name: name, Arguments: dispatched, Logged: logged, Schema: schema}, err
		}
		ns.Bindings = append(ns.Bindings, Binding{Name: name,
			Start: func(_ context.Context, args any) (func(context.Context) (any, error), error) {
				c, err := submission(args)
				if err != nil {
					return nil, err
				}
				return sched.Enqueue(c), nil
			},
			// Call is Start and its wait, without making the wait a func.
			Call: func(ctx context.Context, args any) (any, error) {
				c, err := submission(args)
				if err != nil {
					return nil, err
				}
				return sched.Submit(ctx, c)
			}})
	}
	res, runErr := e.rt.Run(ctx, Request{Program: code, Bindings: []Namespace{ns}, OnCompute: rs.onCompute()})
	// Whatever happened, the run is over: queued sub-calls are abandoned,
	// those in flight are awaited, and every event is appended (§2.1 step 5).
	closeErr := sched.Close(settledReason)
	rs.end(res, runErr, closeErr, sched.subCalls())
	if runErr != nil {
		return nil, runErr
	}
	if closeErr != nil {
		return nil, closeErr
	}
	return OutputValue(res)
}

// snapshotArguments checks a sub-call's arguments and returns what to
// dispatch and what to log (§2.5 step 2: independent of each other, which
// the engine's own snapshot of the dispatched value ensures). The checks
// come in this order: lossless JSON, then nesting within
// maxDepth, then size within maxBytes. Arguments in dsl's form (what
// runtimes hand over) are measured before anything is copied, and only up
// to the first cap passed; other Go values are measured as their first
// snapshot.
func snapshotArguments(args any, maxDepth, maxBytes int) (dispatched, logged any, err error) {
	if args == nil {
		return nil, nil, errors.New("tool arguments must be lossless JSON (call the tool with an arguments object, e.g. `{}`)")
	}
	st := measureArguments(args, maxDepth, int64(maxBytes))
	if st == argForeign {
		if args, err = dsl.Snapshot(args); err != nil {
			return nil, nil, losslessError(err)
		}
		st = measureArguments(args, maxDepth, int64(maxBytes))
	}
	if st != argFits {
		// A lossy value is refused as lossy whatever its size, and a deep
		// one as deep: the walk stopped at the first cap it passed.
		if err := dsl.CheckLossless(args); err != nil {
			return nil, nil, losslessError(err)
		}
		if st == argTooDeep || measureArguments(args, maxDepth, -1) == argTooDeep {
			return nil, nil, fmt.Errorf("run_code argument depth limit reached: a tool call's arguments may nest at most %d levels", maxDepth)
		}
		return nil, nil, fmt.Errorf("run_code argument size limit reached: a tool call's arguments may be at most %d bytes", maxBytes)
	}
	// One value serves both: it is the runtime's own, converted for this
	// call and never touched again (Binding's contract), the engine takes
	// its own snapshot of what it dispatches before any policy sees it
	// (pipeline C4), and the log only reads it. So the log cannot see a
	// policy's change, as two snapshots here would ensure, at no copy.
	if err := dsl.CheckLossless(args); err != nil {
		return nil, nil, losslessError(err)
	}
	return args, args, nil
}

// losslessError is the bridge's message for arguments that are not lossless
// JSON (§2.5 step 2).
func losslessError(err error) error {
	return fmt.Errorf("tool arguments must be lossless JSON: %s", err.Error())
}

// imageSource is where a sub-call's image-bearing content is deferred from
// (§2.9, §7).
func imageSource() *dsl.Object {
	return dsl.NewObject(dsl.Member{Key: "kind", Value: "plugin"}, dsl.Member{Key: "plugin", Value: "tools-ptc"})
}

// forward carries a committed sub-result's contexts, images and
// concludesTurn onto the outer call (§2.9). The outer call's deferred
// messages are bounded (engine.MaxDeferredMessages and MaxDeferredBytes):
// once it holds all it may, what its sub-calls deferred beyond that is
// dropped, as a program's own deferContext would be refused.
func forward(run *engine.Run, r *engine.Result) {
	for _, m := range r.AdditionalContexts {
		if run.DeferContext(m) != nil {
			break
		}
	}
	if r.IsError {
		return
	}
	for _, b := range r.Content {
		if b.BlockType() == "image" {
			_ = run.DeferContext(engine.NewUserMessage(r.Content, imageSource())) // dropped past the bound, as above
			break
		}
	}
	if r.ConcludesTurn {
		run.ConcludeTurn()
	}
}
