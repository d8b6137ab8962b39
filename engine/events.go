package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

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

// The durable event types.
const (
	EventToolCall          = "tool/call"
	EventToolResult        = "tool/result"
	EventPTCDispatchStart  = "tool/ptc-dispatch-start"
	EventPTCDispatchSettle = "tool/ptc-dispatch"
)

// ToolCallEvent builds the tool/call event the scheduler appends when it
// starts a model-emitted call: {callId, name, arguments}. arguments is the
// parsed value the call's input carries (§5.1: {} for empty text, the JSON
// value, or the raw text itself when it is not JSON), not the text; the raw
// text is already in the assistant message's tool-call block.
func ToolCallEvent(agent *Agent, callID, name string, arguments any) Event {
	return Event{Type: EventToolCall, Agent: agent, Data: dsl.NewObject(
		dsl.Member{Key: "callId", Value: callID},
		dsl.Member{Key: "name", Value: name},
		dsl.Member{Key: "arguments", Value: arguments},
	)}
}

// ToolResultEvent builds the tool/result event the scheduler appends when it
// commits a call: {callId, content, isError, error?, meta?, callEvent}.
// error is the failure's ErrorInfo only ({name, code, reason?}), present only
// for coded failures (the message is in content); meta is present only when
// the result has a projector; callEvent is the id of the call's tool/call.
func ToolResultEvent(agent *Agent, callID, callEvent string, r *Result) Event {
	o := dsl.NewObject(dsl.Member{Key: "callId", Value: callID})
	settleFields(o, r, nil)
	o.Set("callEvent", callEvent)
	return Event{Type: EventToolResult, Agent: agent, Data: o}
}

// PTCDispatch names one run_code sub-call in its durable events.
type PTCDispatch struct {
	RootCallID   string // the model-emitted call the program runs under
	ParentCallID string // the outer (run_code) call
	SubCallID    string // <parent>:ptc:<n>
	Name         string
	Arguments    any // the independent logged snapshot of the arguments
}

func (d PTCDispatch) object() *dsl.Object {
	return dsl.NewObject(
		dsl.Member{Key: "rootCallId", Value: d.RootCallID},
		dsl.Member{Key: "parentCallId", Value: d.ParentCallID},
		dsl.Member{Key: "subCallId", Value: d.SubCallID},
		dsl.Member{Key: "name", Value: d.Name},
		dsl.Member{Key: "arguments", Value: d.Arguments},
	)
}

// PTCDispatchStartEvent builds tool/ptc-dispatch-start:
// {rootCallId, parentCallId, subCallId, name, arguments}.
func PTCDispatchStartEvent(agent *Agent, d PTCDispatch) Event {
	return Event{Type: EventPTCDispatchStart, Agent: agent, Data: d.object()}
}

// PTCDispatchEvent builds the tool/ptc-dispatch settle event: the start's
// fields plus {isError, content, error?, meta?}, with error and meta as in
// [ToolResultEvent]. content is what the tools/ptc-dispatch-log waterfall
// returned; nil logs r.Content.
func PTCDispatchEvent(agent *Agent, d PTCDispatch, r *Result, content []Block) Event {
	o := d.object()
	settleFields(o, r, content)
	return Event{Type: EventPTCDispatchSettle, Agent: agent, Data: o}
}

// settleFields adds {content, isError, error?, meta?} for r to o.
func settleFields(o *dsl.Object, r *Result, content []Block) {
	if content == nil {
		content = r.Content
	}
	o.Set("content", ContentJSON(content))
	o.Set("isError", r.IsError)
	if r.IsError && r.Error != nil && r.Error.Info != nil {
		o.Set("error", r.Error.Info.JSON())
	}
	if r.HasMeta {
		o.Set("meta", r.Meta)
	}
}

// JSONLLog is an [EventLog] that writes one canonical-JSON line per event:
// {"id", "type", "agent", "time", ...payload}. id is "e1", "e2"… in append
// order; agent is the session owner's id (absent without one); time is the
// append time in UTC, RFC 3339 with milliseconds (JavaScript's toISOString).
// Payload keys that would shadow one of those four are not written. Each line
// is a single Write of at most [MaxLogLine] bytes (a longer event is written
// cut, see [LogCutKey]). It is safe for concurrent use.
type JSONLLog struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer // the file OpenJSONLLog opened; nil for NewJSONLLog
	seq    int
	closed bool
	now    func() time.Time
}

// NewJSONLLog returns a log writing to w. The caller keeps ownership of w:
// Close does not close it.
func NewJSONLLog(w io.Writer) *JSONLLog {
	return &JSONLLog{w: w, now: time.Now}
}

// OpenJSONLLog opens (creating it if needed) the JSONL file at path for
// appending. Ids continue after the highest "e<n>" id already in the file,
// so a reopened session log keeps its ids unique.
func OpenJSONLLog(path string) (*JSONLLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	seq, err := lastEventSeq(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading event log %s: %w", path, err)
	}
	l := NewJSONLLog(f)
	l.closer, l.seq = f, seq
	return l, nil
}

// lastEventSeq returns the highest n of the "e<n>" ids in a JSONL log.
// Lines that are not JSON objects, or carry other ids, are ignored.
func lastEventSeq(r io.Reader) (int, error) {
	br := bufio.NewReader(r)
	highest := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if v, uerr := dsl.Unmarshal(line); uerr == nil {
				if o, ok := v.(*dsl.Object); ok {
					if id, ok := o.Get("id"); ok {
						if s, ok := id.(string); ok && strings.HasPrefix(s, "e") {
							if n, cerr := strconv.Atoi(s[1:]); cerr == nil && n > highest {
								highest = n
							}
						}
					}
				}
			}
		}
		if err == io.EOF {
			return highest, nil
		}
		if err != nil {
			return 0, err
		}
	}
}

// errLogClosed is what Append returns after Close.
var errLogClosed = errors.New("event log is closed")

// Append writes e as one line and returns its id. A payload that is not
// lossless JSON, a closed log or a failed write is an error (and consumes no id).
func (l *JSONLLog) Append(_ context.Context, e Event) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return "", errLogClosed
	}
	id := "e" + strconv.Itoa(l.seq+1)
	o := dsl.NewObject(
		dsl.Member{Key: "id", Value: id},
		dsl.Member{Key: "type", Value: e.Type},
	)
	if e.Agent != nil {
		o.Set("agent", e.Agent.ID())
	}
	o.Set("time", l.now().UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	if e.Data != nil {
		for k, v := range e.Data.All() {
			switch k {
			case "id", "type", "agent", "time":
				continue
			}
			o.Set(k, v)
		}
	}
	// An event whose line would pass MaxLogLine is measured, not made, and
	// written cut.
	var line []byte
	var err error
	if size := lineSize(o, math.MaxInt-1); size+1 > MaxLogLine {
		line, err = cutLine(o, size+1)
	} else if line, err = dsl.Marshal(o); err == nil && len(line)+1 > MaxLogLine {
		line, err = cutLine(o, len(line)+1)
	}
	if err != nil {
		return "", fmt.Errorf("event %s: %w", e.Type, err)
	}
	line = append(line, '\n')
	if _, err := l.w.Write(line); err != nil {
		return "", err
	}
	l.seq++
	return id, nil
}

// Close stops the log; later appends fail. It closes the file OpenJSONLLog
// opened (a writer given to NewJSONLLog stays open). It is idempotent.
func (l *JSONLLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.closer != nil {
		return l.closer.Close()
	}
	return nil
}
