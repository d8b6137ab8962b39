package ptc

import "context"

// Language is the language a runtime's programs are written in; it picks the
// run_code flavor and the SDK renderer.
type Language string

// The languages of §0.3.
const (
	TypeScript Language = "typescript"
	Lua        Language = "lua"
)

// Isolation says where a runtime runs programs; a label, not a security
// claim (§0.4).
type Isolation string

// The isolation modes of §0.4.
const (
	InProcess Isolation = "in-process"
	Process   Isolation = "process"
)

// Kind classifies a failed run (§3.1). Kinds are orthogonal: each run that
// fails reports exactly one.
type Kind string

// The failure kinds of §3.1.
const (
	KindException     Kind = "exception"
	KindTimeout       Kind = "timeout"
	KindAbort         Kind = "abort"
	KindWorkerExit    Kind = "worker-exit"
	KindInvalidOutput Kind = "invalid-output"
	KindOutputLimit   Kind = "output-limit"
)

// Failure is a failed run's error field: its kind and its message.
type Failure struct {
	Kind    Kind
	Message string
}

// Result is what a run gives back (§3.1): the program's completion value
// (HasValue false when it completed with undefined or nothing), the log
// entries it wrote in order, and the failure when it failed. Program,
// budget, abort and substrate failures are Err, never a Go error.
type Result struct {
	Value    any // a lossless JSON value (dsl's representation)
	HasValue bool
	Logs     []string
	Err      *Failure
}

// Binding is one function a namespace offers the program. Call gets the
// arguments the program passed, already checked as lossless JSON and
// converted for this call alone (the runtime never touches them again, so
// the binding may keep them without a copy), and
// returns the value the program's call resolves with (lossless JSON) or an
// error whose message the program's error class carries.
type Binding struct {
	Name string
	Call func(ctx context.Context, args any) (any, error)
	// Start, when set, is Call in two steps, for a runtime that can take
	// the first on its interpreter's goroutine: it submits the call without
	// blocking (or fails at once) and returns the wait for its outcome. A
	// runtime may use it instead of Call, which stays set.
	Start func(ctx context.Context, args any) (wait func(ctx context.Context) (any, error), err error)
}

// Namespace is a global the program sees (tools) with its bound functions,
// and the error class its failed calls raise (ToolCallError) with the
// member naming the failed binding (toolName). ErrorClass "" declares none.
type Namespace struct {
	Global      string
	ErrorClass  string
	ErrorMember string
	Bindings    []Binding
}

// Request is one run: the program's source and the namespaces bound in it.
type Request struct {
	Program  string
	Bindings []Namespace
	// OnLog, when set, receives each log entry as the program writes it, in
	// order, before the run's ledger charges it (an entry the ledger refuses
	// included), so that a host repeating the ledger elsewhere reaches the
	// same result and keeps what was written before a kill (§3.3, §3.4). It
	// is called on the interpreter's goroutine and must not block for long.
	OnLog func(entry string)
	// OnCompute, when set, receives the compute time the run used, in ms,
	// once before Run returns, from a runtime that measures it: the
	// interpreter's busy time in process, the child's CPU time under
	// process isolation. The executor sets it only when it records runs.
	OnCompute func(ms float64)
}

// Runtime runs programs (§0.2). Run reports every program, budget, abort and
// substrate failure in the Result; its error is for contract misuse only
// (invalid binding declarations: see ValidateBindings; a run after Close).
// A run never shares state with another; ctx's end aborts the run. Close
// fails the runs in flight as aborted ("runtime disposed"), waits for them
// to stop, and makes later runs fail.
type Runtime interface {
	Run(ctx context.Context, req Request) (Result, error)
	Language() Language
	Isolation() Isolation
	Close() error
}
