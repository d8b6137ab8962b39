package engine

import (
	"context"

	"github.com/dsh-go/dsh/dsl"
)

// Event is one durable session event.
type Event struct {
	Type  string      // tool/call, tool/result, tool/ptc-dispatch-start, tool/ptc-dispatch
	Agent *Agent      // the session owner
	Data  *dsl.Object // the event's payload, in the design's shape
}

// EventLog is a durable session log. Append returns the event's id, which
// later events cite (a tool/result cites its tool/call).
type EventLog interface {
	Append(ctx context.Context, e Event) (id string, err error)
}
