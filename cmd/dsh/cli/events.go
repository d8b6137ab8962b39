package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
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
	// cut is the size its whole line would have had when the log wrote it
	// cut to fit engine.MaxLogLine (engine.LogCutKey); 0 when it is whole.
	cut int
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

	// drop keeps no records: with --json no card is drawn, so the run
	// keeps only what the --log file needs (issue 29: the records of a
	// long batch were live heap the collector scanned for nothing).
	drop bool

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
	if r.drop {
		return id, nil
	}
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

// len returns the number of records appended so far.
func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}

// maxLogLine bounds one line of a session log read by replay: the longest
// line the log writes.
const maxLogLine = engine.MaxLogLine

// errNotSessionLog is what a file that holds no session log is.
var errNotSessionLog = errors.New("not a session log")

// logReading is a session log as readRecords read it.
type logReading struct {
	recs []record
	// cutOff is the number of the last line when it was cut off (the
	// writer stopped in the middle of it, so its JSON ends too soon) and
	// left out; 0 when it was not.
	cutOff int
	// shortened are the lines the log wrote cut to fit its line bound
	// (each event is read as written, with strings cut and marked).
	shortened []shortenedLine
	// skipped are the lines over maxLogLine, left out.
	skipped []longLineError
}

// shortenedLine is a line the log wrote cut to fit engine.MaxLogLine.
type shortenedLine struct {
	line  int
	rec   record
	bytes int // the size its whole line would have had
}

// readRecords reads a JSONL session log. Blank lines are skipped; every
// other line must be a JSON object with string "id" and "type". A last line
// that was cut off is left out (logReading.cutOff says so) when complete
// events come before it. A file whose first line is no event, or that holds
// no tool/… event, is not a session log: the error wraps errNotSessionLog
// and reads "<name>: not a session log: ...". Any other error names the
// line: "<name>:<line>: ...". A line over maxLogLine, which the log never
// writes, is read through and left out (logReading.skipped); a line the log
// wrote cut to fit is read as written (logReading.shortened).
func readRecords(r io.Reader, name string) (logReading, error) {
	in := newBoundedLines(r, maxLogLine)
	var out logReading
	var cut error // a line cut off, if it is the last
	for {
		raw, err := in.next()
		if err == io.EOF {
			break
		}
		n := in.n
		var long *longLineError
		switch {
		case errors.As(err, &long):
			// No dsh wrote it (the log cuts its lines to maxLogLine): it
			// is read through and left out, and the rest is replayed.
			out.skipped = append(out.skipped, *long)
			continue
		case err != nil:
			return logReading{}, fmt.Errorf("%s: %w", name, err)
		}
		line := bytes.TrimSpace(raw)
		if len(line) == 0 {
			continue
		}
		if cut != nil {
			return logReading{}, fmt.Errorf("%s:%d: %w", name, out.cutOff, cut)
		}
		rec, err := parseRecord(line)
		switch {
		case err == nil:
			out.recs = append(out.recs, rec)
			if rec.cut > 0 {
				out.shortened = append(out.shortened, shortenedLine{line: n, rec: rec, bytes: rec.cut})
			}
		case len(out.recs) == 0:
			return logReading{}, fmt.Errorf("%s: %w: line %d: %v", name, errNotSessionLog, n, err)
		case endsTooSoon(err, line):
			cut, out.cutOff = err, n
		default:
			return logReading{}, fmt.Errorf("%s:%d: %w", name, n, err)
		}
	}
	if len(out.recs) > 0 && !slices.ContainsFunc(out.recs, func(r record) bool { return strings.HasPrefix(r.typ, "tool/") }) {
		return logReading{}, fmt.Errorf("%s: %w: no tool/call or tool/result event", name, errNotSessionLog)
	}
	return out, nil
}

// endsTooSoon reports whether err is the JSON syntax error of a line that
// stops in the middle of its value: a line cut off.
func endsTooSoon(err error, line []byte) bool {
	var se *dsl.SyntaxError
	return errors.As(err, &se) && se.Offset >= int64(len(line))
}

// parseRecord reads one line of a session log.
func parseRecord(line []byte) (record, error) {
	v, err := dsl.Unmarshal(line)
	if err != nil {
		return record{}, err
	}
	o, ok := v.(*dsl.Object)
	if !ok {
		return record{}, fmt.Errorf("an event must be a JSON object, not %s", jsonKind(v))
	}
	rec := record{data: dsl.NewObject()}
	for k, v := range o.All() {
		switch k {
		case "id", "type", "agent":
			s, ok := v.(string)
			if !ok {
				return record{}, fmt.Errorf("%q must be a string", k)
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
		case engine.LogCutKey:
			f, ok := v.(float64)
			if !ok || f < 1 || f != float64(int(f)) {
				return record{}, fmt.Errorf("%q must be a positive integer", k)
			}
			rec.cut = int(f)
		default:
			rec.data.Set(k, v)
		}
	}
	if rec.id == "" || rec.typ == "" {
		return record{}, errors.New(`an event needs an "id" and a "type"`)
	}
	return rec, nil
}

// splitBatches splits the records of a session log into its batches, as a
// log appended to by several runs holds them. The log marks no batch, so a
// batch ends where a tool/call repeats a call id of the batch (the ids of
// one batch are unique; "dsh run" refuses a calls file that repeats one) or
// names another agent than the batch's calls (a run gives each agent's
// consecutive calls a batch of their own). Other records stay with the
// batch they follow.
func splitBatches(recs []record) [][]record {
	var out [][]record
	start := 0
	ids := map[string]bool{}
	agent := ""
	for i, r := range recs {
		if r.typ != engine.EventToolCall {
			continue
		}
		id := r.str("callId")
		if len(ids) > 0 && (ids[id] || r.agent != agent) {
			out = append(out, recs[start:i])
			start = i
			clear(ids)
		}
		ids[id] = true
		agent = r.agent
	}
	return append(out, recs[start:])
}
