package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// Agent is a scope key: an agent, with an optional parent. Agents compare by
// identity; the parent is fixed at creation, so chains cannot be cyclic.
type Agent struct {
	id     string
	parent *Agent
}

// NewAgent returns an agent with the given id and parent (nil for none).
func NewAgent(id string, parent *Agent) *Agent { return &Agent{id: id, parent: parent} }

// ID returns the agent's id.
func (a *Agent) ID() string { return a.id }

// Parent returns the agent's parent, or nil.
func (a *Agent) Parent() *Agent { return a.parent }

// chain returns the agent's layers from the farthest ancestor to itself.
func (a *Agent) chain() []*Agent {
	var c []*Agent
	for x := a; x != nil; x = x.parent {
		c = append(c, x)
	}
	for i, j := 0, len(c)-1; i < j; i, j = i+1, j-1 {
		c[i], c[j] = c[j], c[i]
	}
	return c
}

// isOrDescends reports whether a is anc or one of its descendants.
func (a *Agent) isOrDescends(anc *Agent) bool {
	for x := a; x != nil; x = x.parent {
		if x == anc {
			return true
		}
	}
	return false
}

// Token is the opaque identity of one execution. Tokens compare by pointer
// and never cross a log, model or process boundary.
type Token struct {
	depth int       // calls on the chain from the root to this one, itself included
	tree  *callTree // shared by every call nested under the same root
}

// callTree is what the calls nested under one root call share: the root's
// id and how many nested calls have begun under it (see WithNestedCallBudget).
type callTree struct {
	rootID string
	nested atomic.Int64
}

// Input is what a caller hands the pipeline for one call.
type Input struct {
	CallID     string
	RootCallID string // defaults to CallID
	Name       string
	Arguments  any // parsed arguments; snapshotted by the pipeline
	Agent      *Agent
	Parent     *Token   // the calling execution, for nested calls
	Schema     any      // binding-time schema of a PTC sub-call; never logged
	ToolSet    *ToolSet // the step's resolved tool set, if any
	// Log is where the call's nested work writes its durable events (a PTC
	// run's tool/ptc-dispatch-start and tool/ptc-dispatch); the native
	// executor sets it for the calls of a batch that logs. Nil: none.
	Log EventLog
	// OwnBudget makes a nested call the root of its own nested-call budget
	// (see WithNestedCallBudget): it does not count against its parent's
	// root, and the calls nested under it count against a fresh budget. Its
	// depth still counts from the root. A PTC sub-call sets it: ptc bounds
	// the sub-calls of a run itself (ptc.Options.MaxSubCalls).
	OwnBudget bool
}

// Execution is one call as listeners, guards and observers see it. It is
// read-only: Arguments is a detached snapshot that must not be modified.
type Execution struct {
	callID, rootCallID, name string
	arguments                any
	agent                    *Agent
	parent, token            *Token
	schema                   any
	toolSet                  *ToolSet
	def                      *Definition
	log                      EventLog

	epoch Epoch // the call's (see Service.Swap)

	// The running pre-execute or post-execute chain's end (see
	// EndPreChain), while one runs; the two never overlap.
	endPre, endPost atomic.Pointer[func() bool]
}

// CallID returns the call's id.
func (e *Execution) CallID() string { return e.callID }

// Log returns where the call's nested work writes its durable events, or nil
// (see Input.Log).
func (e *Execution) Log() EventLog { return e.log }

// RootCallID returns the id of the outermost call (CallID when not nested).
func (e *Execution) RootCallID() string { return e.rootCallID }

// Name returns the tool name the call asked for.
func (e *Execution) Name() string { return e.name }

// Arguments returns the frozen snapshot of the call's arguments, or
// dsl.Undefined{} when the arguments were not lossless JSON.
func (e *Execution) Arguments() any { return e.arguments }

// Agent returns the agent the call runs as, or nil.
func (e *Execution) Agent() *Agent { return e.agent }

// Parent returns the calling execution's token, or nil for a model-direct call.
func (e *Execution) Parent() *Token { return e.parent }

// Token returns this execution's identity.
func (e *Execution) Token() *Token { return e.token }

// Schema returns the binding-time schema of a PTC sub-call, or nil.
func (e *Execution) Schema() any { return e.schema }

// ToolSet returns the step's resolved tool set, or nil.
func (e *Execution) ToolSet() *ToolSet { return e.toolSet }

// Definition returns the definition visible when the call was created, or nil.
func (e *Execution) Definition() *Definition { return e.def }

// Run is the execution as a tool body sees it: the Execution plus the means
// to defer context messages and conclude the turn. It is safe for concurrent use.
type Run struct {
	*Execution
	caller    context.Context
	mu        sync.Mutex
	deferred  []Message
	deferredN int // the bytes of deferred, as deferredBytes counts them
	concluded bool
}

// Caller returns the ctx of the call's caller. Unlike the ctx Execute
// receives, no tools/execute wrapper's cancellation reaches it: it is done
// only when the caller itself gave up on the call (or, for a nested call,
// its calling execution's signal aborted). The pipeline awaits a started
// body after either (§3.3 D2d); a script host bounds the wait for a script
// that ignores the abort (see the scripting packages' deadlines): while the
// caller still waits for the result, a script that is merely waiting is
// awaited; once the caller gave up, it is left behind after its grace.
// A Run made outside the pipeline has the background ctx.
func (r *Run) Caller() context.Context {
	if r.caller == nil {
		return context.Background()
	}
	return r.caller
}

// DeferContext attaches a message to the call's result, delivered to the
// model with the next step. A call defers at most [MaxDeferredMessages]
// messages of at most [MaxDeferredBytes] in all: past either, it returns
// an error naming the limit and attaches nothing.
func (r *Run) DeferContext(m Message) error {
	n := deferredBytes(m, MaxDeferredBytes+1)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := deferredLimit(len(r.deferred), r.deferredN, n); err != nil {
		return err
	}
	r.deferred = append(r.deferred, m)
	r.deferredN += n
	return nil
}

// ConcludeTurn asks that the turn end after this step; only a success built
// for this execution carries it.
func (r *Run) ConcludeTurn() {
	r.mu.Lock()
	r.concluded = true
	r.mu.Unlock()
}

func (r *Run) state() ([]Message, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Message(nil), r.deferred...), r.concluded
}

// Definition is a registered tool: its model-facing schema, its mandatory
// output contract and its body. Optional callbacks are nil when absent.
// Registration borrows the definition; it must not be changed afterwards.
type Definition struct {
	Name        string
	Description string
	Parameters  any // raw JSON Schema of the arguments (projected by Schemas)
	Output      Output
	// Execute runs the call and returns its canonical JSON value. ctx is the
	// caller's cancellation fused with any a tools/execute wrapper chose.
	Execute func(ctx context.Context, args any, run *Run) (any, error)
	// FinalizeContent may rewrite the content of every outcome, exactly once;
	// nil keeps it. It must be total.
	FinalizeContent func(exec *Execution, r *Result) ([]Block, error)
	// ProjectContent may replace the content of an outcome entering
	// post-execute; nil keeps it.
	ProjectContent func(exec *Execution, r *Result) ([]Block, error)
	// Timeout, when positive, is enforced by the timeout policy wrapper.
	Timeout time.Duration
	// IsConcurrencySafe classifies a call: only true runs it in parallel.
	IsConcurrencySafe func(args any) bool
	PresentCall       func(args any) *CallView
	PresentResult     func(args any, r ResultSummary) *ResultView
	// ValidateArgs, when set, returns the violations Execute reports for
	// arguments that fail the parameter schema (an [ArgsError]), or none.
	// Execute still validates; the pipeline asks only when a pre-execute
	// listener or a guard, which see the arguments unvalidated, failed:
	// the call then reports its invalid arguments, not the policy's error
	// on them. [DefineTool] sets it, as do the script hosts' defineTool.
	ValidateArgs func(args any) []string
	// Title, when set, is a human-readable name of the tool for clients
	// (MCP's tool title). The engine does not read it.
	Title string
	// Annotations, when not nil, is a JSON object of hints about the tool
	// for clients (MCP's tool annotations: readOnlyHint, destructiveHint,
	// idempotentHint, openWorldHint), kept as given: the engine does not
	// read it.
	Annotations any
}

// Output is a tool's output contract.
type Output struct {
	Schema any // raw JSON Schema of the value (the enforced subset)
	// Render turns the value into the content the model sees.
	Render func(args, value any) ([]Block, error)
	// PresentationMeta, when set, projects the value into the result's meta.
	PresentationMeta func(args, value any) (any, error)
	// Declared, when not nil, is the output schema as the tool's author
	// declared it, in full JSON Schema, where Schema is what the enforced
	// subset checks of it (an imported MCP tool's outputSchema, kept
	// unchanged for its clients). The engine does not read it.
	Declared any
}

// DeclaredSchema is the output schema as declared: Declared when set, else
// Schema.
func (o Output) DeclaredSchema() any {
	if o.Declared != nil {
		return o.Declared
	}
	return o.Schema
}

// ResultSummary is what result presenters receive.
type ResultSummary struct {
	Content []Block
	IsError bool
	Meta    any
	HasMeta bool
}

// ToolSchema is the model-facing wire form of a tool.
type ToolSchema struct {
	Name        string
	Description string
	Parameters  any
}

// JSON returns {name, description, parameters}.
func (s ToolSchema) JSON() *dsl.Object {
	return dsl.NewObject(dsl.Member{Key: "name", Value: s.Name}, dsl.Member{Key: "description", Value: s.Description},
		dsl.Member{Key: "parameters", Value: s.Parameters})
}

// PreKind is the kind of a pre-execute decision.
type PreKind string

// The pre-execute decision kinds.
const (
	PreAllow  PreKind = "allow"
	PreDeny   PreKind = "deny"
	PreAsk    PreKind = "ask"
	PreCancel PreKind = "cancel"
)

// PreDecision is what a tools/pre-execute listener decides.
type PreDecision struct {
	Kind          PreKind
	Reason        string     // deny: required; ask: optional ("" = none)
	Info          *ErrorInfo // deny only: becomes the failure's info
	DisplayReason string     // ask only
}

// Allow lets the call proceed to guards and dispatch.
func Allow() PreDecision { return PreDecision{Kind: PreAllow} }

// Deny refuses the call with reason as its failure message.
func Deny(reason string) PreDecision { return PreDecision{Kind: PreDeny, Reason: reason} }

// Ask routes the call to the approval service; reason may be empty.
func Ask(reason string) PreDecision { return PreDecision{Kind: PreAsk, Reason: reason} }

// Cancel cancels the call before dispatch.
func Cancel() PreDecision { return PreDecision{Kind: PreCancel} }

// PostKind is the kind of a post-execute decision.
type PostKind string

// The post-execute decision kinds.
const (
	PostAccept PostKind = "accept"
	PostBlock  PostKind = "block"
)

// PostDecision is what a tools/post-execute listener decides: accept (with an
// optional content or value replacement) or block with feedback.
type PostDecision struct {
	Kind               PostKind
	Content            []Block // accept: replacement content, when HasContent
	HasContent         bool
	Value              any // accept: replacement value, when HasValue
	HasValue           bool
	Feedback           []Block // block
	AdditionalContexts []Message
}

// Accept keeps the result.
func Accept(contexts ...Message) PostDecision {
	return PostDecision{Kind: PostAccept, AdditionalContexts: contexts}
}

// AcceptContent replaces the result's content only.
func AcceptContent(content []Block, contexts ...Message) PostDecision {
	return PostDecision{Kind: PostAccept, Content: content, HasContent: true, AdditionalContexts: contexts}
}

// AcceptValue replaces a success's value; the content is rendered again.
func AcceptValue(value any, contexts ...Message) PostDecision {
	return PostDecision{Kind: PostAccept, Value: value, HasValue: true, AdditionalContexts: contexts}
}

// BlockResult turns the result into a failure whose content is feedback.
func BlockResult(feedback []Block, contexts ...Message) PostDecision {
	return PostDecision{Kind: PostBlock, Feedback: feedback, AdditionalContexts: contexts}
}

// PreExecuteFunc is a tools/pre-execute listener. It decides, or returns
// next() to ask the listeners after it (the default, with none, is allow).
type PreExecuteFunc func(ctx context.Context, exec *Execution, next func() (PreDecision, error)) (PreDecision, error)

// ExecuteFunc is a tools/execute wrapper around dispatch. next runs the rest
// of the chain and the body with the ctx it is given (a replacement ctx is
// fused with the caller's for the body); it never fails, its failures are
// results. A wrapper may also return a result without calling next.
type ExecuteFunc func(ctx context.Context, exec *Execution, next func(ctx context.Context) *Result) (*Result, error)

// PostExecuteFunc is a tools/post-execute listener; r is read-only. The
// default decision is a plain accept.
type PostExecuteFunc func(ctx context.Context, exec *Execution, r *Result, next func() (PostDecision, error)) (PostDecision, error)

// ResultObserver is a tools/result observer. Its errors and panics are
// contained and logged; it cannot alter the result.
type ResultObserver func(exec *Execution, r *Result) error

// ResultContextObserver is a [ResultObserver] that is given the call's
// context: its values (the call's execute_tool span, so that a log line
// written with it carries the call's trace and span ids) without its
// cancellation or deadline, since observers run after the call, whatever
// ended it.
type ResultContextObserver func(ctx context.Context, exec *Execution, r *Result) error

// GuardFunc is a deny-only guard: a non-empty reason denies the call.
type GuardFunc func(ctx context.Context, exec *Execution) (string, error)

// ChangeKind says what a tools/change event reports.
type ChangeKind string

// The tools/change kinds.
const (
	ChangeRegister ChangeKind = "register"
	ChangeDispose  ChangeKind = "dispose"
	ChangeRestrict ChangeKind = "restrict"
	ChangeLift     ChangeKind = "lift"
)

// Change is one tools/change event.
type Change struct {
	Kind  ChangeKind
	Agent *Agent // the scope, or nil for the global layer
	Name  string // the tool, for register and dispose
}

// ChangeObserver is a tools/change listener. An error (or panic) during a
// registration rolls the registration back and is returned to the registrant.
type ChangeObserver func(c Change) error

// Disposer removes what a registration added. It is idempotent.
type Disposer func()
