package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestReadRecords(t *testing.T) {
	const (
		call   = `{"id":"e1","type":"tool/call","agent":"main","callId":"c1","name":"a","arguments":{}}`
		result = `{"id":"e2","type":"tool/result","agent":"main","callId":"c1","content":[],"isError":false,"callEvent":"e1"}`
	)
	for _, tc := range []struct {
		name, text string
		events     int
		cutOff     int
		err        string
		notLog     bool
	}{
		{name: "a complete log", text: call + "\n" + result + "\n", events: 2},
		{name: "a last line without its newline is complete", text: call + "\n" + result, events: 2},
		{name: "a cut-off last line is left out", text: call + "\n" + result[:40], events: 1, cutOff: 2},
		{name: "a cut-off last line followed by blank lines is left out", text: call + "\n" + result[:40] + "\n\n", events: 1, cutOff: 2},
		{name: "a cut-off line before another is an error", text: call + "\n" + result[:40] + "\n" + result + "\n",
			err: `log:2: json: unexpected end of JSON input at offset 40`},
		{name: "a broken last line that is not cut off is an error", text: call + "\n{nope}\n",
			err: `log:2: json: invalid character 'n' looking for beginning of object key string at offset 1`},
		{name: "a cut-off first line is not a session log", text: result[:40],
			err: `log: not a session log: line 1: json: unexpected end of JSON input at offset 40`, notLog: true},
		{name: "text is not a session log", text: "# notes\n",
			err: `log: not a session log: line 1: json: invalid character '#' looking for beginning of value at offset 0`, notLog: true},
		{name: "events of no tool are not a session log", text: `{"id":"1","type":"message"}` + "\n",
			err: `log: not a session log: no tool/call or tool/result event`, notLog: true},
		{name: "an empty file is an empty log", text: "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, err := readRecords(strings.NewReader(tc.text), "log")
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %s", err, tc.err)
				}
				if got := errors.Is(err, errNotSessionLog); got != tc.notLog {
					t.Errorf("errors.Is(err, errNotSessionLog) = %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(log.recs) != tc.events || log.cutOff != tc.cutOff {
				t.Errorf("%d events, cut off at %d; want %d, %d", len(log.recs), log.cutOff, tc.events, tc.cutOff)
			}
		})
	}
}

func TestSplitBatches(t *testing.T) {
	// rec is a tool/call of callID as agent, or a tool/result when
	// callID starts with "=".
	rec := func(agent, callID string) record {
		if id, ok := strings.CutPrefix(callID, "="); ok {
			return record{typ: engine.EventToolResult, agent: agent, data: objectOf("callId", id)}
		}
		return record{typ: engine.EventToolCall, agent: agent, data: objectOf("callId", callID)}
	}
	for _, tc := range []struct {
		name string
		recs []record
		want string
	}{
		{"no records: one empty batch", nil, ""},
		{"one run", []record{rec("m", "c1"), rec("m", "c2"), rec("m", "=c1"), rec("m", "=c2")}, "c1 c2 =c1 =c2"},
		{"a repeated id starts a batch", []record{rec("m", "c1"), rec("m", "=c1"), rec("m", "c1"), rec("m", "=c1")}, "c1 =c1 | c1 =c1"},
		{"another agent starts a batch", []record{rec("m", "a"), rec("m", "=a"), rec("w", "b"), rec("w", "=b")}, "a =a | b =b"},
		{"other events stay with the batch they follow", []record{rec("m", "c1"), {typ: "tool/ptc-dispatch-start", agent: "m", data: objectOf()}, rec("m", "=c1")}, "c1 ? =c1"},
		{"three runs", []record{rec("m", "c1"), rec("m", "=c1"), rec("m", "c1"), rec("m", "=c1"), rec("m", "c1"), rec("m", "=c1")}, "c1 =c1 | c1 =c1 | c1 =c1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []string
			for _, b := range splitBatches(tc.recs) {
				var ids []string
				for _, r := range b {
					switch r.typ {
					case engine.EventToolCall:
						ids = append(ids, r.str("callId"))
					case engine.EventToolResult:
						ids = append(ids, "="+r.str("callId"))
					default:
						ids = append(ids, "?")
					}
				}
				parts = append(parts, strings.Join(ids, " "))
			}
			if got := strings.Join(parts, " | "); got != tc.want {
				t.Errorf("batches %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseCallsRefusesADuplicateID(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"two given ids", `[{"id":"a","name":"x"},{"id":"b","name":"x"},{"id":"a","name":"x"}]`, `call 3: duplicate id "a" (call 1 has it too)`},
		{"a given id equal to a defaulted one", `[{"name":"x"},{"id":"c1","name":"x"}]`, `call 2: duplicate id "c1" (call 1 has it too)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCalls(mustJSON(t, tc.text))
			if err == nil || err.Error() != tc.want {
				t.Errorf("err = %v, want %s", err, tc.want)
			}
		})
	}
}

// objectOf builds an object of key, value pairs.
func objectOf(kv ...any) *dsl.Object {
	o := dsl.NewObject()
	for i := 0; i+1 < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// mustJSON parses JSON text.
func mustJSON(t *testing.T, text string) any {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
