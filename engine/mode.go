package engine

// Mode is how the scheduler runs a call: in parallel with its neighbours or
// alone, as a barrier.
type Mode string

// The execution modes.
const (
	Parallel  Mode = "parallel"
	Exclusive Mode = "exclusive"
)

// executionMode classifies a call (§2.6): parallel only when its definition's
// classifier returns exactly true for the raw arguments.
func (s *Service) executionMode(in Input) Mode {
	if in.Parent == nil && in.Name != TransportName && s.collapsed(in.Agent) {
		return Exclusive
	}
	r := s.resolve(in.Name, in.Agent, in.ToolSet)
	if r == nil || r.def.IsConcurrencySafe == nil {
		return Exclusive
	}
	if classify(r.def.IsConcurrencySafe, in.Arguments) {
		return Parallel
	}
	return Exclusive
}

func classify(f func(any) bool, args any) (safe bool) {
	defer func() {
		if recover() != nil {
			safe = false
		}
	}()
	return f(args)
}

// ExecutionMode classifies a call as the scheduler would.
func (c *Scope) ExecutionMode(in Input) Mode {
	if in.Agent == nil {
		in.Agent = c.agent
	}
	return c.svc.executionMode(in)
}
