package ptc

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// This file holds the behaviours 66, 68 and 82 (§6) of the run_code spec,
// through the executor (run_code called as a model would call it) with a
// goRuntime standing in for an interpreter.

// rejectingRuntime is a goRuntime whose Run returns the failure its program
// reports as Run's own error, the Go form of a runtime whose run() rejects.
type rejectingRuntime struct{ *goRuntime }

func (r rejectingRuntime) Run(ctx context.Context, req Request) (Result, error) {
	res, err := r.goRuntime.Run(ctx, req)
	if err == nil && res.Err != nil {
		return Result{}, errors.New(res.Err.Message)
	}
	return res, err
}

// callBounded runs in through svc.Call and returns its result together with
// the events log held at the moment the call returned.
func callBounded(t *testing.T, svc *engine.Service, in engine.Input, log *memLog) (*engine.Result, []string) {
	t.Helper()
	type outcome struct {
		r      *engine.Result
		events []string
	}
	done := make(chan outcome, 1)
	go func() {
		r := svc.Call(context.Background(), in)
		done <- outcome{r, log.summary()}
	}()
	select {
	case o := <-done:
		return o.r, o.events
	case <-time.After(schedWait):
		t.Fatal("the run_code call did not return")
		return nil, nil
	}
}

// contentText joins a result's text blocks.
func contentText(blocks []engine.Block) string {
	var parts []string
	for _, b := range blocks {
		if tb, ok := b.(engine.TextBlock); ok {
			parts = append(parts, tb.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// TestARuntimeThatFailsAfterStartingASubCall is §6 66: a runtime starts a
// sub-call, then fails ("backend exploded") while the tool's body runs.
func TestARuntimeThatFailsAfterStartingASubCall(t *testing.T) {
	cases := []struct {
		name    string
		runtime func(g *goRuntime) Runtime
		failure *Failure
		want    string // the outer text contains it
	}{
		{"a run failing as worker-exit reports the failure and drains the sub-call",
			func(g *goRuntime) Runtime { return g }, CrashFailure("backend exploded"),
			"code run failed (worker-exit): runtime crashed: backend exploded"},
		{"a run failing as an exception reports the failure and drains the sub-call",
			func(g *goRuntime) Runtime { return g }, ExceptionFailure("backend exploded"),
			"code run failed (exception): backend exploded"},
		{"a Run returning an error reports it and drains the sub-call",
			func(g *goRuntime) Runtime { return rejectingRuntime{g} }, ExceptionFailure("backend exploded"),
			"Error: backend exploded"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			started := make(chan struct{})
			causes := make(chan string, 1)
			g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
				"start then explode": func(ctx context.Context, tools map[string]Binding) Result {
					// The call is submitted and never awaited: the runtime
					// gives up while it is in flight.
					if _, err := tools["slow"].Start(ctx, dsl.NewObject()); err != nil {
						return Result{Err: ExceptionFailure("start: " + err.Error())}
					}
					if err := await(started); err != nil {
						return Result{Err: ExceptionFailure("the slow body never started")}
					}
					return Result{Logs: []string{"got this far"}, Err: tt.failure}
				},
			}}
			// ptcEnv's tools, under an executor on this case's runtime.
			svc, agent, _ := ptcEnv(t, &goRuntime{}, Options{})
			e, err := NewExecutor(svc, tt.runtime(g), Options{})
			if err != nil {
				t.Fatal(err)
			}
			svc.Scope(agent).SetExecutor(e)
			h := &schedEnv{t: t, svc: svc}
			h.tool("slow", false, func(ctx context.Context, _ *dsl.Object) (any, error) {
				close(started)
				select {
				case <-ctx.Done():
					causes <- context.Cause(ctx).Error()
					return nil, ctx.Err()
				case <-time.After(schedWait):
					causes <- "no abort"
					return "never aborted", nil
				}
			})
			log := &memLog{}
			r, events := callBounded(t, svc, engine.Input{
				CallID: "call-1", Name: ToolName, Agent: agent, Log: log,
				Arguments: runCode("start then explode", "Start a call and explode"),
			}, log)

			if text := contentText(r.Content); !r.IsError || !strings.Contains(text, tt.want) {
				t.Errorf("outer result %s, want an error whose text contains %q", resultJSON(t, r), tt.want)
			}
			select {
			case cause := <-causes:
				if cause != settledReason {
					t.Errorf("the in-flight tool saw %q, want the run's end %q", cause, settledReason)
				}
			default:
				t.Error("the in-flight tool had not returned when run_code did")
			}
			if want := []string{"start 1", "settle 1"}; strings.Join(events, ",") != strings.Join(want, ",") {
				t.Errorf("events when run_code returned %q, want %q", events, want)
			}
			if settles := log.lines(t, engine.EventPTCDispatchSettle); len(settles) != 1 || !strings.Contains(settles[0], `"isError":true`) {
				t.Errorf("settle events %q, want one with isError true", settles)
			}
		})
	}
}

// TestSettleEventsNeverBecomeModelMessages is §6 68. The engine has no
// derivation of messages from the event log: what the next model request is
// built from is the batch's result (one result per model call and the
// contexts for the next step). So the test runs a step through the PTC
// executor with a session log and checks that what a sub-call's settle
// event carries reaches the log and nothing the model is handed.
func TestSettleEventsNeverBecomeModelMessages(t *testing.T) {
	cases := []struct {
		name   string
		tool   string
		marker string // what the settle event carries, and the model must not see
		setup  func(svc *engine.Service)
	}{
		{"a successful sub-call's content stays in the log", "echo", "settle-only-marker", nil},
		{"a failed sub-call's content stays in the log", "fail", "deliberate failure", nil},
		{"a dispatch-log listener's durable copy stays in the log", "echo", "durable-only copy", func(svc *engine.Service) {
			svc.Global().OnDispatchLog(func(context.Context, *engine.DispatchLogEntry, func() ([]engine.Block, error)) ([]engine.Block, error) {
				return []engine.Block{engine.Text("durable-only copy")}, nil
			})
		}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
				"call and hide": func(ctx context.Context, tools map[string]Binding) Result {
					_, err := tools[tt.tool].Call(ctx, dsl.NewObject(dsl.Member{Key: "text", Value: "settle-only-marker"}))
					return Result{Value: err == nil, HasValue: true}
				},
			}}
			svc, agent, _ := ptcEnv(t, g, Options{})
			if tt.setup != nil {
				tt.setup(svc)
			}
			log := &memLog{}
			args, err := dsl.Marshal(runCode("call and hide", "Call a tool and return whether it worked"))
			if err != nil {
				t.Fatal(err)
			}
			type outcome struct {
				br  *engine.BatchResult
				err error
			}
			done := make(chan outcome, 1)
			go func() {
				br, err := svc.Scope(agent).Execute(context.Background(), engine.Batch{
					Calls: []engine.ToolCallBlock{{ID: "call-1", Name: ToolName, Arguments: string(args)}},
					Log:   log,
				})
				done <- outcome{br, err}
			}()
			var br *engine.BatchResult
			select {
			case o := <-done:
				if o.err != nil {
					t.Fatal(o.err)
				}
				br = o.br
			case <-time.After(schedWait):
				t.Fatal("the batch did not return")
			}

			settles := log.lines(t, engine.EventPTCDispatchSettle)
			if len(settles) != 1 || !strings.Contains(settles[0], tt.marker) {
				t.Fatalf("settle events %q, want one carrying %q", settles, tt.marker)
			}
			handed, err := dsl.Marshal(br.JSON())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(handed), tt.marker) {
				t.Errorf("the batch result carries the settle event's content %q: %s", tt.marker, handed)
			}
			if len(br.Results) != 1 || br.Results[0].CallID != "call-1" || len(br.AdditionalContexts) != 0 {
				t.Errorf("batch result %s, want run_code's result alone and no context", handed)
			}
			results := log.lines(t, engine.EventToolResult)
			if len(results) != 1 || !strings.Contains(results[0], `"callId":"call-1"`) || strings.Contains(results[0], tt.marker) {
				t.Errorf("tool/result events %q, want run_code's alone, without the sub-call's content", results)
			}
		})
	}
}

// TestABlockedDispatchLogSaveDoesNotDelayTheProgram is §6 82. The engine
// has no spill policy or spill backend (no maxInlineBytes, no store: §2.12's
// spill arm is not built), so the spilling listener is written here as a
// tools/ptc-dispatch-log listener: a text over spillCap is "saved" (the
// save of the first sub-call blocks) and logged as a preview with its
// locator. The second sub-call must start while the first's save is
// blocked, and the program gets both full texts.
func TestABlockedDispatchLogSaveDoesNotDelayTheProgram(t *testing.T) {
	const spillCap = 1024
	sizes := []int{3000, 5000}
	saveEntered := make(chan struct{})
	secondStarted := make(chan struct{})
	var (
		mu        sync.Mutex
		savedBy   = map[string]int{} // sub-call id -> full text length saved
		saveGuard bool               // the first save ended by the guard, not by the second call
		calls     int
	)
	g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{
		"two big texts": func(ctx context.Context, tools map[string]Binding) Result {
			total := 0
			for i, n := range sizes {
				v, err := tools["big"].Call(ctx, dsl.NewObject(dsl.Member{Key: "size", Value: float64(n)}))
				if err != nil {
					return Result{Err: ExceptionFailure(err.Error())}
				}
				total += len(v.(string))
				if i == 0 {
					// The first call's save is under way before the second
					// call is made.
					if err := await(saveEntered); err != nil {
						return Result{Err: ExceptionFailure("the first save never began")}
					}
				}
			}
			return Result{Value: float64(total), HasValue: true}
		},
	}}
	svc, agent, _ := ptcEnv(t, g, Options{})
	h := &schedEnv{t: t, svc: svc}
	h.tool("big", false, func(_ context.Context, args *dsl.Object) (any, error) {
		mu.Lock()
		calls++
		if calls == 2 {
			close(secondStarted)
		}
		mu.Unlock()
		size, _ := args.Get("size")
		return strings.Repeat("x", int(size.(float64))), nil
	})
	svc.Global().OnDispatchLog(func(_ context.Context, e *engine.DispatchLogEntry, next func() ([]engine.Block, error)) ([]engine.Block, error) {
		blocks, err := next()
		if err != nil {
			return nil, err
		}
		text := contentText(blocks)
		if len(text) <= spillCap {
			return blocks, nil
		}
		// The save: the first sub-call's hangs until the second has started.
		if strings.HasSuffix(e.SubCallID, ":ptc:1") {
			close(saveEntered)
			if await(secondStarted) != nil {
				mu.Lock()
				saveGuard = true
				mu.Unlock()
			}
		}
		mu.Lock()
		savedBy[e.SubCallID] = len(text)
		mu.Unlock()
		path := "/sessions/main/" + e.SubCallID + "/" + e.Name + ".txt"
		return []engine.Block{engine.Text(text[:100] + "\n…\nFull formatted result stored at: " + path)}, nil
	})
	log := &memLog{}
	r, events := callBounded(t, svc, engine.Input{
		CallID: "call-1", Name: ToolName, Agent: agent, Log: log,
		Arguments: runCode("two big texts", "Measure two big texts"),
	}, log)

	if got, want := resultJSON(t, r), `"value":{"logs":[],"result":8000}`; !strings.Contains(got, want) {
		t.Errorf("outer result %s, want the sum of both full lengths (%s)", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if saveGuard {
		t.Error("the first save was still blocked when the guard ended it: the second call did not start meanwhile")
	}
	if savedBy["call-1:ptc:1"] != sizes[0] || savedBy["call-1:ptc:2"] != sizes[1] {
		t.Errorf("saved %v, want both full texts", savedBy)
	}
	if len(events) != 4 {
		t.Errorf("events when run_code returned %q, want two starts and two settles", events)
	}
	for _, s := range log.lines(t, engine.EventPTCDispatchSettle) {
		if !strings.Contains(s, "Full formatted result stored at: /sessions/main/call-1:ptc:") || strings.Contains(s, strings.Repeat("x", spillCap)) {
			t.Errorf("settle event %.300s…, want the preview and locator, not the full text", s)
		}
	}
}
