package ptc

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// This file holds the per-run caps beyond the reference (issue 16):
// MaxArgumentDepth, MaxArgumentBytes and MaxQueuedCalls, through the
// executor (run_code called as a model would call it) with a goRuntime
// standing in for an interpreter.

// capsEnv is ptcEnv's engine under an executor with opts over one program,
// "p", with a tool "count" that takes any object and counts its runs.
type capsEnv struct {
	t     *testing.T
	svc   *engine.Service
	agent *engine.Agent
	log   *memLog
	runs  atomic.Int64
}

func newCapsEnv(t *testing.T, opts Options, program func(ctx context.Context, tools map[string]Binding) Result) *capsEnv {
	t.Helper()
	g := &goRuntime{programs: map[string]func(context.Context, map[string]Binding) Result{"p": program}}
	svc, agent, _ := ptcEnv(t, g, opts)
	c := &capsEnv{t: t, svc: svc, agent: agent, log: &memLog{}}
	h := &schedEnv{t: t, svc: svc}
	h.tool("count", false, func(context.Context, *dsl.Object) (any, error) {
		c.runs.Add(1)
		return "counted", nil
	})
	return c
}

// call runs the program as run_code call-1 and fails the test unless it
// completed.
func (c *capsEnv) call() {
	c.t.Helper()
	r, _ := callBounded(c.t, c.svc, engine.Input{
		CallID: "call-1", Name: ToolName, Agent: c.agent, Log: c.log,
		Arguments: runCode("p", "Run the test's program"),
	}, c.log)
	if r.IsError {
		c.t.Fatalf("run_code failed: %s", resultJSON(c.t, r))
	}
}

// starts returns the sub-call numbers of the start events, sorted.
func (c *capsEnv) starts() []string {
	var out []string
	for _, e := range c.log.summary() {
		if n, ok := strings.CutPrefix(e, "start "); ok {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// nested is an object nested levels deep (the root is level 1): {} for 1,
// else {"a": [[…[]…]]}.
func nested(levels int) *dsl.Object {
	if levels == 1 {
		return dsl.NewObject()
	}
	var v any = []any{}
	for range levels - 2 {
		v = []any{v}
	}
	return dsl.NewObject(dsl.Member{Key: "a", Value: v})
}

func TestNewExecutorRefusesNegativeCaps(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		want string
	}{
		{"a negative argument size cap", Options{MaxArgumentBytes: -1}, "ptc: MaxArgumentBytes must be positive, got -1"},
		{"a negative argument depth cap", Options{MaxArgumentDepth: -1}, "ptc: MaxArgumentDepth must be positive, got -1"},
		{"a negative queue cap", Options{MaxQueuedCalls: -7}, "ptc: MaxQueuedCalls must be positive, got -7"},
	}
	for _, tt := range cases {
		t.Run(tt.name+" is refused", func(t *testing.T) {
			_, err := NewExecutor(engine.New(), &goRuntime{}, tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("zero caps take the defaults", func(t *testing.T) {
		e, err := NewExecutor(engine.New(), &goRuntime{}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if e.argBytes != DefaultMaxArgumentBytes || e.argDepth != DefaultMaxArgumentDepth || e.queued != DefaultMaxQueuedCalls {
			t.Errorf("caps %d, %d, %d; want the defaults", e.argBytes, e.argDepth, e.queued)
		}
	})
}

func TestArgumentCaps(t *testing.T) {
	text := dsl.NewObject(dsl.Member{Key: "text", Value: "héllo\n"})
	size := JSONValueSize(text)
	depthMsg := func(n int) string {
		return fmt.Sprintf("run_code argument depth limit reached: a tool call's arguments may nest at most %d levels", n)
	}
	bytesMsg := func(n int) string {
		return fmt.Sprintf("run_code argument size limit reached: a tool call's arguments may be at most %d bytes", n)
	}
	cases := []struct {
		name string
		opts Options
		args any
		want string // "" when the call reaches the tool
	}{
		{"arguments nested one level past MaxArgumentDepth are refused with the depth cap",
			Options{MaxArgumentDepth: 3}, nested(4), depthMsg(3)},
		{"arguments nested exactly MaxArgumentDepth levels reach the tool",
			Options{MaxArgumentDepth: 3}, nested(3), ""},
		{"an empty object root is one level deep",
			Options{MaxArgumentDepth: 1}, nested(1), ""},
		{"arguments one byte over MaxArgumentBytes are refused with the size cap",
			Options{MaxArgumentBytes: size - 1}, text, bytesMsg(size - 1)},
		{"arguments of exactly MaxArgumentBytes reach the tool",
			Options{MaxArgumentBytes: size}, text, ""},
		{"a 100,000-level argument is refused by the default depth cap",
			Options{}, nested(100_000), depthMsg(DefaultMaxArgumentDepth)},
		{"a string one byte over the default size cap is refused",
			Options{}, dsl.NewObject(dsl.Member{Key: "s", Value: strings.Repeat("x", DefaultMaxArgumentBytes-7)}), bytesMsg(DefaultMaxArgumentBytes)},
		{"a string exactly at the default size cap reaches the tool",
			Options{}, dsl.NewObject(dsl.Member{Key: "s", Value: strings.Repeat("x", DefaultMaxArgumentBytes-8)}), ""},
		{"arguments over both caps, the size passed first, are refused for their depth",
			Options{MaxArgumentDepth: 3, MaxArgumentBytes: 10},
			dsl.NewObject(dsl.Member{Key: "s", Value: strings.Repeat("x", 100)}, dsl.Member{Key: "d", Value: nested(5)}), depthMsg(3)},
		{"lossy arguments over both caps are refused as lossy",
			Options{MaxArgumentDepth: 3, MaxArgumentBytes: 10},
			dsl.NewObject(dsl.Member{Key: "d", Value: nested(5)}, dsl.Member{Key: "n", Value: math.NaN()}), "tool arguments must be lossless JSON: "},
		{"Go values outside dsl's form are measured too",
			Options{MaxArgumentBytes: 10}, map[string]any{"text": "more than ten bytes"}, bytesMsg(10)},
		{"Go values outside dsl's form within the caps reach the tool",
			Options{MaxArgumentBytes: 100}, map[string]any{"text": "a few bytes"}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var got error
			c := newCapsEnv(t, tt.opts, func(ctx context.Context, tools map[string]Binding) Result {
				_, got = tools["count"].Call(ctx, tt.args)
				if _, err := tools["count"].Call(ctx, dsl.NewObject()); err != nil {
					return Result{Err: ExceptionFailure("ToolCallError: " + err.Error())}
				}
				return Result{}
			})
			c.call()
			wantStarts := []string{"1", "2"}
			if tt.want == "" {
				if got != nil {
					t.Fatalf("the call failed: %v", got)
				}
			} else {
				if got == nil || (got.Error() != tt.want && !(strings.HasSuffix(tt.want, ": ") && strings.HasPrefix(got.Error(), tt.want))) {
					t.Fatalf("the call got %v, want %q", got, tt.want)
				}
				wantStarts = []string{"1"} // the next call is number 1: the refused one took none
			}
			if runs := c.runs.Load(); runs != int64(len(wantStarts)) {
				t.Errorf("the tool ran %d times, want %d", runs, len(wantStarts))
			}
			if starts := c.starts(); !slices.Equal(starts, wantStarts) {
				t.Errorf("start events for sub-calls %v, want %v", starts, wantStarts)
			}
		})
	}
}

func TestQueueCap(t *testing.T) {
	const queueMsg = "run_code queue limit reached: at most 2 tool calls may wait to start"
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	var overErr, afterErr error
	var waitErrs []error
	program := func(ctx context.Context, tools map[string]Binding) Result {
		hold := tools["hold"]
		start := func() func(context.Context) (any, error) {
			w, err := hold.Start(ctx, dsl.NewObject())
			if err != nil {
				return func(context.Context) (any, error) { return nil, err }
			}
			return w
		}
		w1 := start()
		<-started // call 1 holds the only slot: what follows waits in the queue
		w2, w3 := start(), start()
		_, overErr = start()(ctx) // the queue holds 2: the fourth call rejects at once
		close(release)
		for _, w := range []func(context.Context) (any, error){w1, w2, w3} {
			_, err := w(ctx)
			waitErrs = append(waitErrs, err)
		}
		// Every queued call has started and committed: the queue is empty.
		_, afterErr = hold.Call(ctx, dsl.NewObject())
		return Result{}
	}
	c := newCapsEnv(t, Options{MaxParallelSubCalls: 1, MaxQueuedCalls: 2}, program)
	h := &schedEnv{t: t, svc: c.svc}
	h.tool("hold", false, func(context.Context, *dsl.Object) (any, error) {
		c.runs.Add(1)
		started <- struct{}{}
		<-release
		return "held", nil
	})
	c.call()

	t.Run("the call that finds the queue full is refused with the queue cap", func(t *testing.T) {
		if overErr == nil || overErr.Error() != queueMsg {
			t.Errorf("the fourth call got %v, want %q", overErr, queueMsg)
		}
	})
	t.Run("the calls already queued are unaffected", func(t *testing.T) {
		for i, err := range waitErrs {
			if err != nil {
				t.Errorf("call %d failed: %v", i+1, err)
			}
		}
	})
	t.Run("once the queue drains calls are accepted again", func(t *testing.T) {
		if afterErr != nil {
			t.Errorf("the call after the drain failed: %v", afterErr)
		}
	})
	t.Run("the refused call never ran, took no number and logged nothing", func(t *testing.T) {
		if runs := c.runs.Load(); runs != 4 {
			t.Errorf("the tool ran %d times, want 4", runs)
		}
		if starts, want := c.starts(), []string{"1", "2", "3", "4"}; !slices.Equal(starts, want) {
			t.Errorf("start events for sub-calls %v, want %v", starts, want)
		}
	})
}

// jsonDepth is the deepest nesting of brackets in compact JSON text,
// outside strings.
func jsonDepth(b []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}

func FuzzArgumentMeasure(f *testing.F) {
	for _, s := range []string{`null`, `"x"`, `[]`, `{}`, `[[[]]]`, `{"a":[{"b":"\"]["}],"c":1e21}`, `[1,"€😀",[[true]],{"\n":false}]`} {
		f.Add([]byte(s), 2, int64(10))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxDepth int, maxBytes int64) {
		v, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		b, err := dsl.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of an Unmarshal result: %v", err)
		}
		size, depth := int64(len(b)), jsonDepth(b)
		maxDepth = int(uint(maxDepth) % uint(depth+2))
		maxBytes = int64(uint64(maxBytes) % uint64(size+8))
		deep, big := depth > maxDepth, size > maxBytes

		st := measureArguments(v, maxDepth, maxBytes)
		switch {
		case deep && big:
			if st != argTooDeep && st != argTooBig {
				t.Fatalf("%s (depth %d, size %d) against %d levels, %d bytes: %d, want a cap", b, depth, size, maxDepth, maxBytes, st)
			}
		case deep && st != argTooDeep, big && st != argTooBig, !deep && !big && st != argFits:
			t.Fatalf("%s (depth %d, size %d) against %d levels, %d bytes: %d", b, depth, size, maxDepth, maxBytes, st)
		}
		if got := measureArguments(v, maxDepth, -1) == argTooDeep; got != deep {
			t.Fatalf("%s (depth %d) against %d levels, depth alone: too deep %v", b, depth, maxDepth, got)
		}
		if got := measureArguments(v, depth, size); got != argFits {
			t.Fatalf("%s at its own depth %d and size %d: %d", b, depth, size, got)
		}

		// Through the bridge: depth is refused before size, a fitting value
		// is snapshotted as it is.
		if v == nil { // no arguments: refused before any cap
			return
		}
		dispatched, _, err := snapshotArguments(v, maxDepth, int(maxBytes))
		switch {
		case deep:
			if err == nil || !strings.HasPrefix(err.Error(), "run_code argument depth limit reached") {
				t.Fatalf("%s against %d levels: %v", b, maxDepth, err)
			}
		case big:
			if err == nil || !strings.HasPrefix(err.Error(), "run_code argument size limit reached") {
				t.Fatalf("%s against %d bytes: %v", b, maxBytes, err)
			}
		default:
			if err != nil {
				t.Fatalf("%s within the caps: %v", b, err)
			}
			if d, _ := dsl.Marshal(dispatched); string(d) != string(b) {
				t.Fatalf("%s snapshotted as %s", b, d)
			}
		}
	})
}
