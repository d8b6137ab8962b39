package scripting

import (
	"sync"

	"github.com/dsh-go/dsh/engine"
)

// Agents is a directory of agents by id, for embedders whose agents are
// named by strings: Agent returns the same *engine.Agent for an id every time.
// It is safe for concurrent use.
type Agents struct {
	mu     sync.Mutex
	byID   map[string]*engine.Agent
	parent map[string]string
}

// NewAgents returns an empty directory.
func NewAgents() *Agents {
	return &Agents{byID: map[string]*engine.Agent{}, parent: map[string]string{}}
}

// SetParent declares that child's parent is parent; it must be called before
// either is first looked up.
func (a *Agents) SetParent(child, parent string) {
	a.mu.Lock()
	a.parent[child] = parent
	a.mu.Unlock()
}

// Agent returns the agent with the given id, creating it (and its parent
// chain) on first use. A parent cycle is cut where it would close.
func (a *Agents) Agent(id string) *engine.Agent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.agent(id, map[string]bool{})
}

func (a *Agents) agent(id string, seen map[string]bool) *engine.Agent {
	if ag, ok := a.byID[id]; ok {
		return ag
	}
	seen[id] = true
	var parent *engine.Agent
	if p, ok := a.parent[id]; ok && !seen[p] {
		parent = a.agent(p, seen)
	}
	ag := engine.NewAgent(id, parent)
	a.byID[id] = ag
	return ag
}
