package engine

import "context"

// NativeExecutor runs batches in the engine's own scheduler (§5).
type NativeExecutor struct {
	svc         *Service
	maxParallel int
}

// NewNativeExecutor returns a native executor for svc with a cap on bodies in
// flight (maxParallelToolCalls), which must be a positive integer.
func NewNativeExecutor(svc *Service, maxParallel int) (*NativeExecutor, error) {
	if maxParallel <= 0 {
		return nil, errInvalidCap
	}
	return &NativeExecutor{svc: svc, maxParallel: maxParallel}, nil
}

// Describe returns the definitions' schemas and names.
func (e *NativeExecutor) Describe(defs []*Definition) (Description, error) {
	var d Description
	for _, def := range defs {
		s, err := projectSchema(def)
		if err != nil {
			return Description{}, err
		}
		d.Schemas = append(d.Schemas, s)
		d.Names = append(d.Names, def.Name)
	}
	return d, nil
}

// Execute runs the batch. TEMPORARY sequential version: the scheduler of §5
// replaces it.
func (e *NativeExecutor) Execute(ctx context.Context, b Batch) (*BatchResult, error) {
	out := &BatchResult{}
	for _, tc := range b.Calls {
		r := e.svc.Call(ctx, Input{CallID: tc.ID, Name: tc.Name, Arguments: parseArguments(tc.Arguments), Agent: b.Agent, ToolSet: b.ToolSet})
		out.Results = append(out.Results, CallResult{CallID: tc.ID, Result: r})
	}
	return out, nil
}
