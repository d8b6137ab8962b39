package hostapi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/scripting"
)

// The listener events of on(event, listener).
const (
	PreExecute  = "tools/pre-execute"
	Execute     = "tools/execute"
	PostExecute = "tools/post-execute"
	Result      = "tools/result"
	Change      = "tools/change"
	DispatchLog = "tools/ptc-dispatch-log"
)

// Events lists the listener events in the order messages name them.
var Events = []string{PreExecute, Execute, PostExecute, Result, Change, DispatchLog}

// ErrUnknownEvent is the error of on() with an event that is not one of
// [Events].
var ErrUnknownEvent = errors.New("unknown event")

// Adapters turn the callback stored at a key into the engine's listener
// of each kind; a host makes them from its pool.
type Adapters struct {
	PreExecute  func(key int) engine.PreExecuteFunc
	Execute     func(key int) engine.ExecuteFunc
	PostExecute func(key int) engine.PostExecuteFunc
	Result      func(key int) engine.ResultContextObserver
	Change      func(key int) engine.ChangeObserver
	DispatchLog func(key int) engine.DispatchLogFunc
}

// On registers the script listener stored at key for event through p. A
// replaying instance (replay) only checks the event: its callbacks were
// registered by the first instance. An unknown event is an error matching
// [ErrUnknownEvent] whose text names the events.
func On(p *scripting.Plugin, a Adapters, replay bool, site scripting.Site, agent *engine.Agent, event string, key int, opts ...engine.ListenerOption) (engine.Disposer, error) {
	var register func() (engine.Disposer, error)
	switch event {
	case PreExecute:
		register = func() (engine.Disposer, error) { return p.OnPreExecute(site, agent, a.PreExecute(key), opts...) }
	case Execute:
		register = func() (engine.Disposer, error) { return p.OnExecute(site, agent, a.Execute(key), opts...) }
	case PostExecute:
		register = func() (engine.Disposer, error) { return p.OnPostExecute(site, agent, a.PostExecute(key), opts...) }
	case Result:
		register = func() (engine.Disposer, error) { return p.OnResult(site, agent, a.Result(key), opts...) }
	case Change:
		register = func() (engine.Disposer, error) { return p.OnChange(site, a.Change(key)) }
	case DispatchLog:
		register = func() (engine.Disposer, error) { return p.OnDispatchLog(site, agent, a.DispatchLog(key), opts...) }
	default:
		return nil, fmt.Errorf("on(): %w %s (%s)", ErrUnknownEvent, display.Quote(event), strings.Join(Events, ", "))
	}
	if replay {
		return nil, nil
	}
	return register()
}

// InvalidDecision is the error of a tools/pre-execute or tools/post-execute
// listener (event) whose decision could not be read: the listener then
// fails closed.
func InvalidDecision(event string, why error) error {
	return fmt.Errorf("%s listener returned an invalid decision: %w", event, why)
}
