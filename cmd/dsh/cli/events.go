package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// record is one durable session event as a session log line holds it:
// {"id", "type", "agent"?, "time", ...payload}. The cards of a run are
// drawn from its records, live or replayed, so both draw the same cards.
type record struct {
	id    string
	typ   string
	agent string // "" without one
	data  *dsl.Object
	// observed marks a record the CLI built for a call without an agent,
	// which the engine does not log: it carries no schedule.
	observed bool
}

// str returns the payload's string member key, or "".
func (r record) str(key string) string {
	v, _ := r.data.Get(key)
	s, _ := v.(string)
	return s
}

// recorder is the EventLog a run hands the engine: it appends each event
// to the --log file, when there is one, and keeps it as a record for the
// cards.
type recorder struct {
	file *engine.JSONLLog // nil without --log

	mu      sync.Mutex
	seq     int
	records []record
}

// Append implements engine.EventLog.
func (r *recorder) Append(ctx context.Context, e engine.Event) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var id string
	if r.file != nil {
		var err error
		if id, err = r.file.Append(ctx, e); err != nil {
			return "", err
		}
	} else {
		id = "e" + strconv.Itoa(r.seq+1)
	}
	r.seq++
	rec := record{id: id, typ: e.Type, data: e.Data}
	if e.Agent != nil {
		rec.agent = e.Agent.ID()
	}
	if rec.data == nil {
		rec.data = dsl.NewObject()
	}
	r.records = append(r.records, rec)
	return id, nil
}

// observe keeps a tool/call and tool/result pair for a call the engine
// does not log (one without an agent), built with the engine's event
// constructors; it is not written to the --log file.
func (r *recorder) observe(call engine.Event, result func(callEvent string) engine.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	add := func(e engine.Event) string {
		r.seq++
		id := "o" + strconv.Itoa(r.seq)
		r.records = append(r.records, record{id: id, typ: e.Type, data: e.Data, observed: true})
		return id
	}
	id := add(call)
	add(result(id))
}

// all returns the records appended so far.
func (r *recorder) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.records...)
}

// maxLogLine bounds one line of a session log read by replay.
const maxLogLine = 64 << 20

// readRecords reads a JSONL session log. Blank lines are skipped; every
// other line must be a JSON object with string "id" and "type". Errors
// name the line: "<name>:<line>: ...".
func readRecords(r io.Reader, name string) ([]record, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLogLine)
	var recs []record
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v, err := dsl.Unmarshal(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		o, ok := v.(*dsl.Object)
		if !ok {
			return nil, fmt.Errorf("%s:%d: an event must be a JSON object, not %s", name, n, jsonKind(v))
		}
		rec := record{data: dsl.NewObject()}
		for k, v := range o.All() {
			switch k {
			case "id", "type", "agent":
				s, ok := v.(string)
				if !ok {
					return nil, fmt.Errorf("%s:%d: %q must be a string", name, n, k)
				}
				switch k {
				case "id":
					rec.id = s
				case "type":
					rec.typ = s
				default:
					rec.agent = s
				}
			case "time":
			default:
				rec.data.Set(k, v)
			}
		}
		if rec.id == "" || rec.typ == "" {
			return nil, fmt.Errorf("%s:%d: an event needs an \"id\" and a \"type\"", name, n)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return recs, nil
}
