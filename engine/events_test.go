package engine_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func evObj(kv ...any) *dsl.Object {
	o := dsl.NewObject()
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

func TestEventPayloadBuilders(t *testing.T) {
	agent := engine.NewAgent("main", nil)
	success := &engine.Result{Value: "one", Content: []engine.Block{engine.Text("echo:one")}}
	withMeta := &engine.Result{Value: "x", Content: []engine.Block{engine.Text("x")}, Meta: nil, HasMeta: true}
	coded := &engine.Result{IsError: true, Content: []engine.Block{engine.Text("Error: gone")},
		Error: &engine.Failure{Message: "gone", Info: &engine.ErrorInfo{Name: "ToolNotFoundError", Code: "UNKNOWN_TOOL", Reason: "why"}}}
	plain := &engine.Result{IsError: true, Content: []engine.Block{engine.Text("Error: exploded")}, Error: &engine.Failure{Message: "exploded"}}
	sub := engine.PTCDispatch{RootCallID: "call-1", ParentCallID: "call-1", SubCallID: "call-1:ptc:1", Name: "echo",
		Arguments: evObj("value", "one")}

	tests := []struct {
		name string
		e    engine.Event
		typ  string
		want string
	}{
		{
			name: "a tool/call carries the call id, the name and the parsed arguments",
			e:    engine.ToolCallEvent(agent, "c1", "echo", evObj("text", "hi")),
			typ:  "tool/call",
			want: `{"callId":"c1","name":"echo","arguments":{"text":"hi"}}`,
		},
		{
			name: "a successful tool/result has no error and cites its call event",
			e:    engine.ToolResultEvent(agent, "c1", "e1", success),
			typ:  "tool/result",
			want: `{"callId":"c1","content":[{"type":"text","text":"echo:one"}],"isError":false,"callEvent":"e1"}`,
		},
		{
			name: "a tool/result keeps a null meta when the tool has a projector",
			e:    engine.ToolResultEvent(agent, "c1", "e1", withMeta),
			typ:  "tool/result",
			want: `{"callId":"c1","content":[{"type":"text","text":"x"}],"isError":false,"meta":null,"callEvent":"e1"}`,
		},
		{
			name: "a coded failure's tool/result carries only the info as error",
			e:    engine.ToolResultEvent(agent, "c2", "e3", coded),
			typ:  "tool/result",
			want: `{"callId":"c2","content":[{"type":"text","text":"Error: gone"}],"isError":true,"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL","reason":"why"},"callEvent":"e3"}`,
		},
		{
			name: "an uncoded failure's tool/result has no error key",
			e:    engine.ToolResultEvent(agent, "c2", "e3", plain),
			typ:  "tool/result",
			want: `{"callId":"c2","content":[{"type":"text","text":"Error: exploded"}],"isError":true,"callEvent":"e3"}`,
		},
		{
			name: "a ptc dispatch start names the sub-call and its arguments",
			e:    engine.PTCDispatchStartEvent(agent, sub),
			typ:  "tool/ptc-dispatch-start",
			want: `{"rootCallId":"call-1","parentCallId":"call-1","subCallId":"call-1:ptc:1","name":"echo","arguments":{"value":"one"}}`,
		},
		{
			name: "a ptc dispatch settle matches the pinned example",
			e:    engine.PTCDispatchEvent(agent, sub, success, nil),
			typ:  "tool/ptc-dispatch",
			want: `{"rootCallId":"call-1","parentCallId":"call-1","subCallId":"call-1:ptc:1","name":"echo","arguments":{"value":"one"},"content":[{"type":"text","text":"echo:one"}],"isError":false}`,
		},
		{
			name: "a ptc dispatch settle logs the dispatch-log content and a coded error",
			e:    engine.PTCDispatchEvent(agent, sub, coded, []engine.Block{engine.Text("logged")}),
			typ:  "tool/ptc-dispatch",
			want: `{"rootCallId":"call-1","parentCallId":"call-1","subCallId":"call-1:ptc:1","name":"echo","arguments":{"value":"one"},"content":[{"type":"text","text":"logged"}],"isError":true,"error":{"name":"ToolNotFoundError","code":"UNKNOWN_TOOL","reason":"why"}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.e.Type != tc.typ || tc.e.Agent != agent {
				t.Fatalf("type %q agent %v", tc.e.Type, tc.e.Agent)
			}
			if got := schedJSON(t, tc.e.Data); got != tc.want {
				t.Fatalf("payload\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestTheSchedulerLogsCallsWhenTheyStartAndResultsWhenTheyCommit(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	g := scNewGates()
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) {
		g.hold(run.CallID())
		if run.CallID() == "c2" {
			return nil, engine.NewError("HarnessError", "BOOM", "kaboom")
		}
		return "read " + run.CallID(), nil
	})
	b := h.batch("c1:read", "c2:read", "c3:read")
	b.Calls[0].Arguments = `{"path":"a.txt"}`
	b.MaxParallelToolCalls = 2
	wait := h.start(context.Background(), b)
	g.awaitStarted(t, 2)
	g.release("c1")
	g.awaitStarted(t, 1)
	g.release("c2", "c3")
	if _, err := wait(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`tool/call {"callId":"c1","name":"read","arguments":{"path":"a.txt"}}`,
		`tool/call {"callId":"c2","name":"read","arguments":{}}`,
		`tool/result {"callId":"c1","content":[{"type":"text","text":"read c1"}],"isError":false,"callEvent":"ev1"}`,
		`tool/call {"callId":"c3","name":"read","arguments":{}}`,
		`tool/result {"callId":"c2","content":[{"type":"text","text":"Error: kaboom"}],"isError":true,"error":{"name":"HarnessError","code":"BOOM"},"callEvent":"ev2"}`,
		`tool/result {"callId":"c3","content":[{"type":"text","text":"read c3"}],"isError":false,"callEvent":"ev4"}`,
	}
	if got := h.log.lines(t); !scEqual(got, want) {
		t.Fatalf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, e := range h.log.events {
		if e.Agent != h.agent {
			t.Fatalf("%s has agent %v", e.Type, e.Agent)
		}
	}
}

var evLine = regexp.MustCompile(`^\{"id":"e(\d+)","type":"([^"]+)","agent":"main","time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",(.*)\}$`)

func TestJSONLLogWritesOneCanonicalLinePerEvent(t *testing.T) {
	agent := engine.NewAgent("main", nil)

	t.Run("lines carry id, type, agent and time before the payload", func(t *testing.T) {
		var buf bytes.Buffer
		log := engine.NewJSONLLog(&buf)
		ctx := context.Background()
		id1, err := log.Append(ctx, engine.ToolCallEvent(agent, "c1", "echo", evObj("text", "hi")))
		if err != nil {
			t.Fatal(err)
		}
		id2, err := log.Append(ctx, engine.ToolResultEvent(agent, "c1", id1, &engine.Result{Value: "hi", Content: []engine.Block{engine.Text("hi")}}))
		if err != nil {
			t.Fatal(err)
		}
		if id1 != "e1" || id2 != "e2" {
			t.Fatalf("ids %s %s", id1, id2)
		}
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		if len(lines) != 2 {
			t.Fatalf("%d lines: %q", len(lines), buf.String())
		}
		wantPayload := []string{
			`"callId":"c1","name":"echo","arguments":{"text":"hi"}`,
			`"callId":"c1","content":[{"type":"text","text":"hi"}],"isError":false,"callEvent":"e1"`,
		}
		wantType := []string{"tool/call", "tool/result"}
		for i, l := range lines {
			m := evLine.FindStringSubmatch(l)
			if m == nil || m[1] != strconv.Itoa(i+1) || m[2] != wantType[i] || m[3] != wantPayload[i] {
				t.Errorf("line %d: %s", i+1, l)
			}
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := log.Append(ctx, engine.ToolCallEvent(agent, "c2", "echo", evObj())); err == nil {
			t.Fatal("append after close succeeded")
		}
	})

	t.Run("an event without an agent has no agent key and payload keys cannot shadow the envelope", func(t *testing.T) {
		var buf bytes.Buffer
		log := engine.NewJSONLLog(&buf)
		if _, err := log.Append(context.Background(), engine.Event{Type: "x", Data: evObj("id", "mine", "time", 1, "k", true)}); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`^\{"id":"e1","type":"x","time":"[^"]+","k":true\}\n$`).MatchString(buf.String()) {
			t.Fatalf("line %q", buf.String())
		}
	})

	t.Run("a payload that is not lossless JSON is refused and consumes no id", func(t *testing.T) {
		var buf bytes.Buffer
		log := engine.NewJSONLLog(&buf)
		if _, err := log.Append(context.Background(), engine.Event{Type: "x", Data: evObj("f", func() {})}); err == nil {
			t.Fatal("no error")
		}
		id, err := log.Append(context.Background(), engine.Event{Type: "x", Data: evObj()})
		if err != nil || id != "e1" || buf.Len() == 0 || strings.Count(buf.String(), "\n") != 1 {
			t.Fatalf("%q %v %q", id, err, buf.String())
		}
	})

	t.Run("a failed write is an error", func(t *testing.T) {
		log := engine.NewJSONLLog(evFailingWriter{})
		if _, err := log.Append(context.Background(), engine.Event{Type: "x"}); err == nil || err.Error() != "no space" {
			t.Fatalf("err %v", err)
		}
	})

	t.Run("concurrent appends get distinct ids and whole lines", func(t *testing.T) {
		defer goleak.VerifyNone(t)
		var buf bytes.Buffer
		log := engine.NewJSONLLog(&buf)
		const n = 200
		var wg sync.WaitGroup
		ids := make([]string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				id, err := log.Append(context.Background(), engine.ToolCallEvent(agent, "c"+strconv.Itoa(i), "echo", evObj("i", float64(i))))
				if err != nil {
					t.Error(err)
				}
				ids[i] = id
			}()
		}
		wg.Wait()
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id] = true
		}
		if len(seen) != n {
			t.Fatalf("%d distinct ids", len(seen))
		}
		for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			m := evLine.FindStringSubmatch(l)
			if m == nil || m[1] != strconv.Itoa(i+1) {
				t.Fatalf("line %d: %s", i+1, l)
			}
			if _, err := dsl.Unmarshal([]byte(l)); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
		}
	})
}

type evFailingWriter struct{}

func (evFailingWriter) Write([]byte) (int, error) { return 0, errors.New("no space") }

func TestOpenJSONLLogAppendsAndContinuesIds(t *testing.T) {
	agent := engine.NewAgent("main", nil)
	path := filepath.Join(t.TempDir(), "session.jsonl")
	ctx := context.Background()
	for round := range 2 {
		log, err := engine.OpenJSONLLog(path)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			id, err := log.Append(ctx, engine.ToolCallEvent(agent, "c", "echo", evObj()))
			if want := "e" + strconv.Itoa(round*2+i+1); err != nil || id != want {
				t.Fatalf("round %d: id %q (%v), want %s", round, id, err, want)
			}
		}
		if err := log.Close(); err != nil {
			t.Fatal(err)
		}
		if err := log.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Fatalf("%d lines", n)
	}
	if _, err := engine.OpenJSONLLog(filepath.Join(t.TempDir(), "missing", "x.jsonl")); err == nil {
		t.Fatal("opened a file in a missing directory")
	}
}

func TestABatchLogsToAJSONLFile(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := newSchedHarness(t)
	h.tool("read", true, func(_ context.Context, run *engine.Run) (any, error) { return "ok", nil })
	path := filepath.Join(t.TempDir(), "session.jsonl")
	log, err := engine.OpenJSONLLog(path)
	if err != nil {
		t.Fatal(err)
	}
	b := h.batch("c1:read", "c2:read")
	b.Log = log
	h.run(context.Background(), b)
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	var types []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		m := evLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %s", l)
		}
		types = append(types, m[2]+" "+m[1])
	}
	if want := []string{"tool/call 1", "tool/call 2", "tool/result 3", "tool/result 4"}; !scEqual(types, want) {
		t.Fatalf("lines %v, want %v", types, want)
	}
	if !strings.Contains(string(data), `"callId":"c2","content":[{"type":"text","text":"ok"}],"isError":false,"callEvent":"e2"}`) {
		t.Fatalf("c2's result does not cite e2:\n%s", data)
	}
}
