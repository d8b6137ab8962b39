package engine

import (
	"context"
	"errors"

	"github.com/dsh-go/dsh/dsl"
)

// defaultMaxParallel is the executor's cap on bodies in flight.
const defaultMaxParallel = 10

// Executor runs an assistant step's tool calls: the native executor, or the
// PTC executor that collapses a scope's surface to run_code.
type Executor interface {
	// Describe returns what the model is shown for the visible definitions.
	Describe(defs []*Definition) (Description, error)
	// Execute runs a batch; tool failures are results, an error means the
	// batch itself failed (a *BatchError).
	Execute(ctx context.Context, b Batch) (*BatchResult, error)
}

// TransportExecutor is an executor that provides the reserved run_code
// transport. Unless Direct, it collapses its scopes' surface to the transport.
type TransportExecutor interface {
	Executor
	Transport() *Definition
	Direct() bool
}

// Description is an executor's view of the tools for the model.
type Description struct {
	Schemas []ToolSchema
	Names   []string // the names the model may call
	// Sections are the system-prompt sections the executor contributes,
	// sorted by Order (the PTC executor's tools:code-only and tools:sdk).
	Sections []Section
}

// Section is a system-prompt section: an id, its place among the prompt's
// sections (lower first) and its text.
type Section struct {
	ID    string
	Order int
	Text  string
}

// JSON returns {id, order, text}.
func (s Section) JSON() *dsl.Object {
	return dsl.NewObject(dsl.Member{Key: "id", Value: s.ID}, dsl.Member{Key: "order", Value: float64(s.Order)},
		dsl.Member{Key: "text", Value: s.Text})
}

// Batch is one assistant step's tool calls, in model order.
type Batch struct {
	Calls []ToolCallBlock
	Agent *Agent
	// MaxParallelToolCalls overrides the executor's cap for this batch's root
	// calls when positive; zero keeps the executor's; negative is an error.
	MaxParallelToolCalls int
	ToolSet              *ToolSet
	// Log is where durable events go; they are written only when it is set
	// and the batch has an agent.
	Log EventLog
}

// CallResult is one call's committed result.
type CallResult struct {
	CallID string
	Result *Result
}

// BatchResult is what a batch hands back: one result per call in input
// order (skipped calls included), the contexts to deliver with the next step,
// and whether a result concluded the turn.
type BatchResult struct {
	Results            []CallResult
	AdditionalContexts []Message
	Concluded          bool
}

// JSON is the batch result in the design's shape: {"results": [{"callId",
// "result"}], "additionalContexts": [...], "concluded"}, each result as
// [Result.JSON] writes it.
func (br *BatchResult) JSON() any {
	results := make([]any, 0, len(br.Results))
	for _, cr := range br.Results {
		results = append(results, dsl.NewObject(
			dsl.Member{Key: "callId", Value: cr.CallID},
			dsl.Member{Key: "result", Value: cr.Result.JSON()},
		))
	}
	contexts := make([]any, 0, len(br.AdditionalContexts))
	for _, m := range br.AdditionalContexts {
		contexts = append(contexts, m.JSON())
	}
	return dsl.NewObject(
		dsl.Member{Key: "results", Value: results},
		dsl.Member{Key: "additionalContexts", Value: contexts},
		dsl.Member{Key: "concluded", Value: br.Concluded},
	)
}

// BatchError is an internal scheduler failure (not a tool failure). It
// preserves what was committed before it.
type BatchError struct {
	Err       error
	Committed *BatchResult
}

func (e *BatchError) Error() string { return "tool batch execution failed: " + e.Err.Error() }

// Unwrap returns the first failure.
func (e *BatchError) Unwrap() error { return e.Err }

// Name returns ToolBatchExecutionError.
func (e *BatchError) Name() string { return "ToolBatchExecutionError" }

// Code returns UNKNOWN.
func (e *BatchError) Code() string { return "UNKNOWN" }

var errInvalidCap = errors.New("maxParallelToolCalls must be a positive integer")
