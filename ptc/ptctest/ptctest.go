// Package ptctest checks that a [ptc.Runtime] keeps the seam's contract
// (run_code spec §2.2–§2.4, §3.1–§3.3, §3.5, §3.7), as testing/fstest checks an
// fs.FS: [TestRuntime] runs the same cases against any runtime, the goja one,
// the Lua one or a process one, and asserts the exact results and messages.
//
// The programs are written in the runtime's language, so the caller supplies
// them in a [Programs].
package ptctest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
)

// Programs are the programs TestRuntime runs, in the runtime's language, each
// named by the behaviour it must have. Unless a program's description says
// otherwise it runs with one namespace bound: the global tools, whose failed
// calls raise the error class ToolCallError with the member property toolName
// naming the binding. "Calls tools.x with {...}" means the program passes that
// JSON object as the call's argument and waits for its outcome (await in
// TypeScript; a plain call in Lua).
type Programs struct {
	// ReturnTwo completes with the number 2. It must not call anything.
	ReturnTwo string
	// ReturnNull completes with null, an explicit value (TypeScript: return
	// null). Runtimes without a null of their own (Lua's nil is no value) may
	// return the JSON null their bridge offers.
	ReturnNull string
	// NoReturn completes without a value (falls off the end, or returns
	// undefined or nil). It may be empty.
	NoReturn string
	// ReturnLossy completes with a value that is not lossless JSON (for
	// example a function).
	ReturnLossy string
	// ReturnEuro completes with the string "€".
	ReturnEuro string
	// LogThenReturn logs the string abc (one entry) then completes with the
	// string xy.
	LogThenReturn string
	// LogThenReturnLong logs the string abc (one entry) then completes with
	// the string of 2 000 euro signs (6 000 bytes of UTF-8).
	LogThenReturnLong string
	// LogThenThrow logs the string abc (one entry) then fails so that the
	// exception's message is exactly xy (TypeScript: throw "xy"; Lua:
	// error("xy", 0)).
	LogThenThrow string
	// Throw throws an error whose message is kaboom (TypeScript: throw new
	// Error("kaboom")): the failure message contains kaboom.
	Throw string
	// SyntaxError logs the string ran on its first line and does not parse
	// on its second: nothing may run.
	SyntaxError string
	// LogLines logs the 1000 entries "line 0", "line 1", … "line 999", one
	// entry each, then completes without a value.
	LogLines string
	// ReturnMaxXs completes with the string of 67 108 860 x's, the largest
	// completion the default output cap holds.
	ReturnMaxXs string
	// ReturnTooManyXs completes with the string of 67 108 861 x's, one more.
	ReturnTooManyXs string
	// CallEcho calls tools.echo with {"value": "one"}, logs "saw " followed by
	// the string it resolves with, then calls tools.echo with {"value": "two"}
	// and completes with what that resolves with. (The binding resolves with
	// "echo:" followed by the value.)
	CallEcho string
	// CatchFailure calls tools.fail with {}, catches its failure e and
	// completes with the array [whether e is an instance of ToolCallError,
	// e's name, e's member toolName, e's message]. (TypeScript: [e instanceof
	// ToolCallError, e.name, e.toolName, e.message].)
	CatchFailure string
	// NeverSettles calls tools.never with {} and waits for it; the binding
	// returns only once its context has ended.
	NeverSettles string
	// AwaitSlow calls tools.slow with {} and completes with what it resolves
	// with; the binding resolves with "slow-done" after a while.
	AwaitSlow string
	// Spin loops forever without calling or waiting for anything.
	Spin string
	// StartThenSpin calls tools.start with {} (which resolves with null),
	// then loops forever without calling or waiting for anything.
	StartThenSpin string
	// SetLeak sets the global variable leak to 1 (TypeScript: globalThis.leak
	// = 1) and completes without a value.
	SetLeak string
	// LeakIsUnset completes with true when the global variable leak is unset
	// (TypeScript: typeof globalThis.leak === "undefined"; Lua: leak == nil),
	// else with false. SetLeak, a newline and LeakIsUnset joined must be a
	// program that completes with false.
	LeakIsUnset string

	// Deviations are the cases the runtime is known to fail, each with the
	// deviation: they are skipped, the deviation given as the reason. A case
	// is named by its path under TestRuntime, its group then its sentence
	// ("output ledger/the default cap holds 67108860 x's").
	// A name that matches no case fails the test.
	Deviations map[string]string
}

// missing names the programs left empty (NoReturn may be).
func (p Programs) missing() []string {
	var out []string
	for _, f := range []struct{ name, src string }{
		{"ReturnTwo", p.ReturnTwo}, {"ReturnNull", p.ReturnNull}, {"ReturnLossy", p.ReturnLossy},
		{"ReturnEuro", p.ReturnEuro}, {"LogThenReturn", p.LogThenReturn}, {"LogThenReturnLong", p.LogThenReturnLong},
		{"LogThenThrow", p.LogThenThrow},
		{"Throw", p.Throw}, {"SyntaxError", p.SyntaxError}, {"LogLines", p.LogLines},
		{"ReturnMaxXs", p.ReturnMaxXs}, {"ReturnTooManyXs", p.ReturnTooManyXs}, {"CallEcho", p.CallEcho},
		{"CatchFailure", p.CatchFailure}, {"NeverSettles", p.NeverSettles}, {"AwaitSlow", p.AwaitSlow},
		{"Spin", p.Spin}, {"StartThenSpin", p.StartThenSpin}, {"SetLeak", p.SetLeak},
		{"LeakIsUnset", p.LeakIsUnset},
	} {
		if f.src == "" {
			out = append(out, f.name)
		}
	}
	return out
}

// Budgets every case starts from: the default output cap, and compute and
// wall limits that end a runtime that ignores its interrupts before the test
// binary's timeout does.
const (
	baseComputeMs = 10_000
	baseMaxWallMs = 30_000
)

// bigValueBudgets gives the 64 MiB cases the default budgets: making and
// measuring such a value takes seconds under the race detector on a busy
// machine, and these cases are about the ledger, not the budgets.
func bigValueBudgets(b *ptc.Budgets) {
	d := ptc.DefaultBudgets()
	b.ComputeMs, b.MaxWallMs = d.ComputeMs, d.MaxWallMs
}

// guard bounds a wait for something the contract says happens; it is a
// liveness bound, not a timing assertion (a 64 MiB value under -race on a
// 2-core machine running other tests and two CPU burners has taken over a
// minute).
const guard = 3 * time.Minute

// slowDelay is how long tools.slow takes to resolve in AwaitSlow.
const slowDelay = 600 * time.Millisecond

// TestRuntime runs the seam's contract against the runtimes newRuntime
// makes. newRuntime returns a fresh runtime with budgets b (already valid),
// or fails t; TestRuntime closes every runtime it gets. programs are the
// runtime's programs for the cases.
func TestRuntime(t *testing.T, newRuntime func(t *testing.T, b ptc.Budgets) ptc.Runtime, programs Programs) {
	t.Helper()
	if m := programs.missing(); len(m) > 0 {
		t.Fatalf("ptctest: programs not given: %s", strings.Join(m, ", "))
	}
	h := &harness{newRuntime: newRuntime, p: programs, root: t.Name(), seen: make(map[string]bool)}
	groups := []struct {
		name string
		f    func(*testing.T)
	}{
		{"descriptors", h.descriptors},
		{"completion", h.completion},
		{"exceptions", h.exceptions},
		{"output ledger", h.ledger},
		{"bindings", h.bindings},
		{"binding validation", h.validation},
		{"budgets", h.budgets},
		{"abort", h.abort},
		{"isolation", h.isolation},
		{"disposal", h.disposal},
	}
	known, ran := make(map[string]bool), make(map[string]bool)
	for _, g := range groups {
		known[caseName(g.name)] = true
		t.Run(g.name, func(t *testing.T) {
			ran[caseName(g.name)] = true
			g.f(t)
		})
	}
	for name := range programs.Deviations {
		group, _, _ := strings.Cut(caseName(name), "/")
		if (ran[group] || !known[group]) && !h.seen[caseName(name)] {
			t.Errorf("ptctest: the deviation %q names no case", name)
		}
	}
}

type harness struct {
	newRuntime func(t *testing.T, b ptc.Budgets) ptc.Runtime
	p          Programs
	root       string // the name of TestRuntime's t

	mu   sync.Mutex
	seen map[string]bool // the cases met, by caseName
}

// caseName is a case's path as the testing package writes it.
func caseName(path string) string { return strings.ReplaceAll(path, " ", "_") }

// run runs the case name under t, or skips it when Deviations names it.
func (h *harness) run(t *testing.T, name string, f func(t *testing.T)) {
	t.Helper()
	path := strings.TrimPrefix(t.Name()+"/"+caseName(name), h.root+"/")
	h.mu.Lock()
	h.seen[path] = true
	h.mu.Unlock()
	var (
		reason  string
		deviant bool
	)
	for k, v := range h.p.Deviations {
		if caseName(k) == path {
			reason, deviant = v, true
		}
	}
	t.Run(name, func(t *testing.T) {
		if deviant {
			t.Skip("known deviation: " + reason)
		}
		f(t)
	})
}

// closer is a runtime closed once, by the test or at its cleanup.
type closer struct {
	ptc.Runtime
	once sync.Once
	err  error
}

func (c *closer) Close() error {
	c.once.Do(func() { c.err = c.Runtime.Close() })
	return c.err
}

// runtime makes a runtime with the base budgets changed by mod, closed
// when t ends.
func (h *harness) runtime(t *testing.T, mod func(*ptc.Budgets)) *closer {
	t.Helper()
	b := ptc.DefaultBudgets()
	b.ComputeMs, b.MaxWallMs = baseComputeMs, baseMaxWallMs
	if mod != nil {
		mod(&b)
	}
	rt := h.newRuntime(t, b)
	if rt == nil {
		t.Fatal("ptctest: newRuntime returned nil")
	}
	c := &closer{Runtime: rt}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// tools is the namespace the programs are written against.
func tools(bs ...ptc.Binding) []ptc.Namespace {
	return []ptc.Namespace{{Global: "tools", ErrorClass: "ToolCallError", ErrorMember: "toolName", Bindings: bs}}
}

// run runs a program that Run must accept.
func run(t *testing.T, rt ptc.Runtime, ctx context.Context, ns []ptc.Namespace, program string) ptc.Result {
	t.Helper()
	type outcome struct {
		res ptc.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := rt.Run(ctx, ptc.Request{Program: program, Bindings: ns})
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Run: %v", o.err)
		}
		return o.res
	case <-time.After(guard):
		t.Fatalf("Run did not return within %v", guard)
		return ptc.Result{}
	}
}

// expect compares a result with want, written as render writes one.
func expect(t *testing.T, res ptc.Result, want string) {
	t.Helper()
	if got := render(res); got != want {
		t.Errorf("result\ngot  %s\nwant %s", got, want)
	}
}

// render writes a result as compact JSON: {"logs":[…],"value":…,"error":{"kind":…,"message":…}},
// value present iff HasValue, error iff Err. Nil logs are written [].
func render(r ptc.Result) string {
	logs := make([]any, len(r.Logs))
	for i, l := range r.Logs {
		logs[i] = l
	}
	o := dsl.NewObject(dsl.Member{Key: "logs", Value: logs})
	if r.HasValue {
		o.Set("value", r.Value)
	} else if r.Value != nil {
		o.Set("valueWithoutHasValue", fmt.Sprintf("%#v", r.Value))
	}
	if r.Err != nil {
		o.Set("error", dsl.NewObject(
			dsl.Member{Key: "kind", Value: string(r.Err.Kind)},
			dsl.Member{Key: "message", Value: r.Err.Message}))
	}
	b, err := dsl.Marshal(o)
	if err != nil {
		return fmt.Sprintf("(a result that is not lossless JSON: %v: %#v)", err, r)
	}
	return string(b)
}

// Bindings.

// echo resolves with "echo:" and the argument's value member, and records
// each argument as JSON.
type echo struct {
	mu   sync.Mutex
	args []string
}

func (e *echo) binding() ptc.Binding {
	return ptc.Binding{Name: "echo", Call: func(_ context.Context, args any) (any, error) {
		b, err := dsl.Marshal(args)
		if err != nil {
			b = []byte(fmt.Sprintf("(not JSON: %v)", err))
		}
		e.mu.Lock()
		e.args = append(e.args, string(b))
		e.mu.Unlock()
		o, _ := args.(*dsl.Object)
		if o == nil {
			return nil, errors.New("echo: want an object")
		}
		v, _ := o.Get("value")
		s, _ := v.(string)
		return "echo:" + s, nil
	}}
}

func (e *echo) calls() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.args...)
}

// returning is a binding named name that ends with (v, err).
func returning(name string, v any, err error) ptc.Binding {
	return ptc.Binding{Name: name, Call: func(context.Context, any) (any, error) { return v, err }}
}

// never is the binding tools.never: it calls onCall (if any), waits for its
// context to end, then resolves with "late", which the run must drop.
type never struct {
	onCall func()
	called chan struct{}
	ended  chan struct{}
}

func newNever(onCall func()) *never {
	return &never{onCall: onCall, called: make(chan struct{}), ended: make(chan struct{})}
}

func (n *never) binding() ptc.Binding {
	var once atomic.Bool
	return ptc.Binding{Name: "never", Call: func(ctx context.Context, _ any) (any, error) {
		if !once.CompareAndSwap(false, true) {
			return nil, errors.New("never: called twice")
		}
		close(n.called)
		if n.onCall != nil {
			n.onCall()
		}
		<-ctx.Done()
		close(n.ended)
		return "late", nil
	}}
}

// twoStep is the binding with Start as well, as ptc's executor gives it:
// Start submits the call and the wait returns only once the wait's own
// context ends (the executor's call ends only when the run is over, so a
// runtime must end the wait when its run stops).
func (n *never) twoStep() ptc.Binding {
	b := n.binding()
	var once atomic.Bool
	b.Start = func(context.Context, any) (func(context.Context) (any, error), error) {
		if !once.CompareAndSwap(false, true) {
			return nil, errors.New("never: started twice")
		}
		close(n.called)
		if n.onCall != nil {
			n.onCall()
		}
		return func(ctx context.Context) (any, error) {
			<-ctx.Done()
			close(n.ended)
			return nil, context.Cause(ctx)
		}, nil
	}
	return b
}

// waitEnded fails t unless the binding was called and saw its context end.
func (n *never) waitEnded(t *testing.T) {
	t.Helper()
	select {
	case <-n.called:
	default:
		t.Fatal("tools.never was not called")
	}
	select {
	case <-n.ended:
	case <-time.After(guard):
		t.Fatal("the context of tools.never did not end")
	}
}

// start is the binding tools.start: it closes started and resolves with null.
func start(started chan<- struct{}) ptc.Binding {
	var once sync.Once
	return ptc.Binding{Name: "start", Call: func(context.Context, any) (any, error) {
		once.Do(func() { close(started) })
		return nil, nil
	}}
}

// slow is the binding tools.slow: "slow-done" after slowDelay.
func slow() ptc.Binding {
	return ptc.Binding{Name: "slow", Call: func(ctx context.Context, _ any) (any, error) {
		select {
		case <-time.After(slowDelay):
			return "slow-done", nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}
}

// Cases.

func (h *harness) descriptors(t *testing.T) {
	rt := h.runtime(t, nil)
	h.run(t, "the language is one the SDK renders", func(t *testing.T) {
		if l := rt.Language(); l != ptc.TypeScript && l != ptc.Lua {
			t.Errorf("Language() = %q, want %q or %q", l, ptc.TypeScript, ptc.Lua)
		}
	})
	h.run(t, "the isolation is one of the seam's labels", func(t *testing.T) {
		if i := rt.Isolation(); i != ptc.InProcess && i != ptc.Process {
			t.Errorf("Isolation() = %q, want %q or %q", i, ptc.InProcess, ptc.Process)
		}
	})
}

func (h *harness) completion(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	h.run(t, "a returned number is the value", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.ReturnTwo), `{"logs":[],"value":2}`)
	})
	h.run(t, "a returned null is a value that is present", func(t *testing.T) {
		res := run(t, rt, bg, tools(), h.p.ReturnNull)
		expect(t, res, `{"logs":[],"value":null}`)
		if !res.HasValue {
			t.Error("HasValue is false for null")
		}
	})
	h.run(t, "completing without a value gives no value", func(t *testing.T) {
		res := run(t, rt, bg, tools(), h.p.NoReturn)
		expect(t, res, `{"logs":[]}`)
		if res.HasValue {
			t.Error("HasValue is true")
		}
	})
	h.run(t, "a log and a value are both kept", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.LogThenReturn), `{"logs":["abc"],"value":"xy"}`)
	})
	h.run(t, "a completion that is not lossless JSON is invalid output", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.ReturnLossy),
			`{"logs":[],"error":{"kind":"invalid-output","message":"program completion must be lossless JSON"}}`)
	})
}

func (h *harness) exceptions(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	h.run(t, "a thrown value is the exception and the logs before it are kept", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.LogThenThrow),
			`{"logs":["abc"],"error":{"kind":"exception","message":"xy"}}`)
	})
	h.run(t, "a thrown error is the exception with its message", func(t *testing.T) {
		res := run(t, rt, bg, tools(), h.p.Throw)
		if res.Err == nil || res.Err.Kind != ptc.KindException || !strings.Contains(res.Err.Message, "kaboom") {
			t.Errorf("got %s, want an exception containing kaboom", render(res))
		}
		if res.HasValue || len(res.Logs) != 0 {
			t.Errorf("got %s, want no value and no logs", render(res))
		}
	})
	h.run(t, "a program that does not parse is an exception and nothing runs", func(t *testing.T) {
		res := run(t, rt, bg, tools(), h.p.SyntaxError)
		if res.Err == nil || res.Err.Kind != ptc.KindException || res.Err.Message == "" {
			t.Errorf("got %s, want an exception", render(res))
		}
		if res.HasValue || len(res.Logs) != 0 {
			t.Errorf("got %s, want no value and no logs", render(res))
		}
	})
}

func (h *harness) ledger(t *testing.T) {
	bg := context.Background()
	type ledgerCase struct {
		name    string
		cap     float64
		program string
		want    string
	}
	cases := []ledgerCase{
		{"a euro fits at cap 7", 7, h.p.ReturnEuro, `{"logs":[],"value":"€"}`},
		{"a log and a value fit at cap 11", 11, h.p.LogThenReturn, `{"logs":["abc"],"value":"xy"}`},
		{"a log and a thrown message fit at cap 11", 11, h.p.LogThenThrow,
			`{"logs":["abc"],"error":{"kind":"exception","message":"xy"}}`},
		// cap − the message's 33 bytes leaves 267 for the logs: "line 0"–"line 26"
		// take 261, and the next entry keeps the 3 characters ,"" leave.
		{"1000 lines at cap 300 keep the longest prefix that fits beside the message", 300, h.p.LogLines,
			`{"logs":[` + linesJSON(27) + `,"lin"],"error":{"kind":"output-limit","message":"outer output exceeded 300 bytes"}}`},
	}
	// The output-limit message is whole at every cap: it is not charged
	// against the cap, and the logs give way to it, keeping what cap − its
	// JSON size (32 bytes at a 2-digit cap, 33 at a 3-digit one) leaves.
	over := func(cap int, logs string) string {
		return fmt.Sprintf(`{"logs":[%s],"error":{"kind":"output-limit","message":"outer output exceeded %d bytes"}}`, logs, cap)
	}
	for _, c := range []int{4, 6} {
		cases = append(cases, ledgerCase{fmt.Sprintf("a euro fails at cap %d with the whole message", c), float64(c),
			h.p.ReturnEuro, over(c, ``)})
	}
	for _, c := range []int{4, 6, 10} {
		cases = append(cases,
			ledgerCase{fmt.Sprintf("a log and a value fail at cap %d with the whole message and no log", c), float64(c),
				h.p.LogThenReturn, over(c, ``)},
			ledgerCase{fmt.Sprintf("a log and a thrown message fail at cap %d with the whole message and no log", c), float64(c),
				h.p.LogThenThrow, over(c, ``)})
	}
	for _, c := range []struct {
		cap  int
		logs string
		kept string
	}{
		{4, ``, "no log"}, {6, ``, "no log"}, {10, ``, "no log"}, {36, ``, "no log"},
		{37, `"a"`, "a prefix of the log"}, {39, `"abc"`, "the log"}, {300, `"abc"`, "the log"},
	} {
		cases = append(cases, ledgerCase{
			fmt.Sprintf("a log and 2000 euro signs fail at cap %d with the whole message and %s", c.cap, c.kept),
			float64(c.cap), h.p.LogThenReturnLong, over(c.cap, c.logs)})
	}
	for _, c := range cases {
		h.run(t, c.name, func(t *testing.T) {
			rt := h.runtime(t, func(b *ptc.Budgets) { b.MaxOutputBytes = c.cap })
			expect(t, run(t, rt, bg, tools(), c.program), c.want)
		})
	}
	h.run(t, "a 1000-character abort reason at cap 64 is the output limit", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.MaxOutputBytes = 64 })
		ctx, cancel := context.WithCancelCause(bg)
		cancel(errors.New(strings.Repeat("r", 1000)))
		expect(t, run(t, rt, ctx, tools(), h.p.ReturnTwo),
			`{"logs":[],"error":{"kind":"output-limit","message":"outer output exceeded 64 bytes"}}`)
	})
	h.run(t, "the default cap holds 67108860 x's", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a 64 MiB value: not in -short")
		}
		rt := h.runtime(t, bigValueBudgets)
		res := run(t, rt, bg, tools(), h.p.ReturnMaxXs)
		s, _ := res.Value.(string)
		if res.Err != nil || !res.HasValue || len(s) != 67_108_860 || strings.Trim(s, "x") != "" || len(res.Logs) != 0 {
			t.Errorf("got error %v, HasValue %v, a %T of length %d, logs %q; want the string of 67108860 x's",
				res.Err, res.HasValue, res.Value, len(s), res.Logs)
		}
	})
	h.run(t, "the default cap does not hold 67108861 x's", func(t *testing.T) {
		if testing.Short() {
			t.Skip("a 64 MiB value: not in -short")
		}
		rt := h.runtime(t, bigValueBudgets)
		res := run(t, rt, bg, tools(), h.p.ReturnTooManyXs)
		if res.HasValue {
			t.Fatalf("got a value of %T, want none", res.Value)
		}
		expect(t, res, `{"logs":[],"error":{"kind":"output-limit","message":"outer output exceeded 67108864 bytes"}}`)
	})
}

// linesJSON is the JSON of the entries "line 0" … "line n-1", without brackets.
func linesJSON(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`"line %d"`, i)
	}
	return strings.Join(parts, ",")
}

func (h *harness) bindings(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	h.run(t, "a binding gets its arguments and its values reach the program", func(t *testing.T) {
		e := &echo{}
		expect(t, run(t, rt, bg, tools(e.binding()), h.p.CallEcho), `{"logs":["saw echo:one"],"value":"echo:two"}`)
		if got, want := strings.Join(e.calls(), " "), `{"value":"one"} {"value":"two"}`; got != want {
			t.Errorf("tools.echo got %s, want %s", got, want)
		}
	})
	h.run(t, "a failed call raises the error class with the binding's name and the error's message", func(t *testing.T) {
		ns := tools(returning("fail", nil, errors.New("deliberate failure")))
		expect(t, run(t, rt, bg, ns, h.p.CatchFailure),
			`{"logs":[],"value":[true,"ToolCallError","fail","deliberate failure"]}`)
	})
	h.run(t, "a failed call's message is the whole error text", func(t *testing.T) {
		ns := tools(returning("fail", nil, fmt.Errorf("gate: %w", errors.New("exploded"))))
		expect(t, run(t, rt, bg, ns, h.p.CatchFailure),
			`{"logs":[],"value":[true,"ToolCallError","fail","gate: exploded"]}`)
	})
	lossy := []struct {
		name  string
		value any
	}{
		{"a function", func() {}},
		{"NaN", math.NaN()},
		{"an infinity", math.Inf(1)},
		{"negative zero", math.Copysign(0, -1)},
		{"a channel", make(chan int)},
		{"a number past 2^53", int64(1) << 60},
		{"a string that is not UTF-8", "\xff"},
		{"an array holding NaN", []any{1.0, math.NaN()}},
		{"an object holding a function", dsl.NewObject(dsl.Member{Key: "f", Value: func() {}})},
		{"a cycle", cycle()},
	}
	for _, l := range lossy {
		h.run(t, "a resolution with "+l.name+" rejects as not lossless JSON", func(t *testing.T) {
			expect(t, run(t, rt, bg, tools(returning("fail", l.value, nil)), h.p.CatchFailure),
				`{"logs":[],"value":[true,"ToolCallError","fail","binding resolution must be lossless JSON"]}`)
		})
	}
	h.run(t, "concurrent runs are independent", func(t *testing.T) {
		const n = 4
		var wg sync.WaitGroup
		got := make([]string, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e := &echo{}
				res, err := rt.Run(bg, ptc.Request{Program: h.p.CallEcho, Bindings: tools(e.binding())})
				if err != nil {
					got[i] = err.Error()
					return
				}
				got[i] = render(res)
			}()
		}
		wg.Wait()
		for i, g := range got {
			if want := `{"logs":["saw echo:one"],"value":"echo:two"}`; g != want {
				t.Errorf("run %d: got %s, want %s", i, g, want)
			}
		}
	})
}

// cycle is a []any that holds itself.
func cycle() any {
	a := make([]any, 1)
	a[0] = a
	return a
}

func (h *harness) validation(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	ns := func(global, class, member string) ptc.Namespace {
		return ptc.Namespace{Global: global, ErrorClass: class, ErrorMember: member}
	}
	type tc struct {
		name string
		ns   []ptc.Namespace
		want string
	}
	var cases []tc
	for _, g := range []string{"not valid!", "await", "$tools", "a$b", "lambda", "9lives", "", "end", "local", "nil", "yield", "arguments"} {
		cases = append(cases, tc{fmt.Sprintf("the global %q is not a usable identifier", g),
			[]ptc.Namespace{ns(g, "", "")}, fmt.Sprintf("binding global %s is not a usable identifier", quote(g))})
	}
	for _, g := range []string{"console", "__dsh_main__", "__builtins__", "__name__", "__debug__"} {
		cases = append(cases, tc{fmt.Sprintf("the global %q is reserved", g),
			[]ptc.Namespace{ns(g, "", "")}, fmt.Sprintf("reserved binding global %q", g)})
	}
	cases = append(cases,
		tc{"a namespace declared twice is a duplicate", []ptc.Namespace{ns("tools", "", ""), ns("tools", "", "")},
			`duplicate binding global "tools"`},
		tc{"namespaces are checked before error classes", []ptc.Namespace{ns("tools", "not valid!", "toolName"), ns("console", "", "")},
			`reserved binding global "console"`},
	)
	for _, c := range []string{"not valid!", "yield", "then", "$E"} {
		cases = append(cases, tc{fmt.Sprintf("the error class %q is not a usable identifier", c),
			[]ptc.Namespace{ns("tools", c, "toolName")}, fmt.Sprintf("binding error class %q is not a usable identifier", c)})
	}
	cases = append(cases,
		tc{"an error class may not be a reserved global", []ptc.Namespace{ns("tools", "console", "toolName")},
			`reserved binding global "console"`},
		tc{"an error class may not be its own namespace", []ptc.Namespace{ns("tools", "tools", "toolName")},
			`duplicate injected global "tools"`},
		tc{"an error class may not be a later namespace", []ptc.Namespace{ns("tools", "helpers", "toolName"), ns("helpers", "", "")},
			`duplicate injected global "helpers"`},
		tc{"two namespaces may not share an error class", []ptc.Namespace{ns("tools", "CallError", "toolName"), ns("helpers", "CallError", "helperName")},
			`duplicate injected global "CallError"`},
	)
	for _, m := range []string{"", "name", "message", "stack", "args", "with_traceback", "add_note", "__dict__", "__x__"} {
		cases = append(cases, tc{fmt.Sprintf("the error member %q is not usable", m),
			[]ptc.Namespace{ns("tools", "ToolCallError", m)}, fmt.Sprintf("binding error member property %q is not usable", m)})
	}
	for _, c := range cases {
		h.run(t, c.name, func(t *testing.T) {
			_, err := rt.Run(bg, ptc.Request{Program: h.p.ReturnTwo, Bindings: c.ns})
			checkBindingError(t, err, c.want)
		})
	}

	h.run(t, "bindings are checked before the abort", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(bg)
		cancel(errors.New("too-late"))
		_, err := rt.Run(ctx, ptc.Request{Program: h.p.ReturnTwo, Bindings: []ptc.Namespace{ns("console", "", "")}})
		checkBindingError(t, err, `reserved binding global "console"`)
	})
	h.run(t, "bindings are checked before anything runs", func(t *testing.T) {
		e := &echo{}
		bad := append(tools(e.binding()), ns("tools", "", ""))
		_, err := rt.Run(bg, ptc.Request{Program: h.p.CallEcho, Bindings: bad})
		checkBindingError(t, err, `duplicate binding global "tools"`)
		if n := len(e.calls()); n != 0 {
			t.Errorf("tools.echo ran %d times", n)
		}
	})
	accepted := []struct {
		name string
		ns   []ptc.Namespace
	}{
		{"a namespace may be named ToolCallError when no class claims it", []ptc.Namespace{ns("ToolCallError", "", "")}},
		{"a member is ignored without an error class", []ptc.Namespace{ns("tools", "", "message")}},
		{"names with underscores and digits are usable", []ptc.Namespace{ns("_t0", "E_1", "member_2"), ns("helpers", "HelperCallError", "helperName")}},
		{"a binding may be named like an Object.prototype member", tools(returning("__proto__", nil, nil), returning("constructor", nil, nil))},
	}
	for _, a := range accepted {
		h.run(t, a.name, func(t *testing.T) {
			expect(t, run(t, rt, bg, a.ns, h.p.ReturnTwo), `{"logs":[],"value":2}`)
		})
	}
	h.run(t, "print is reserved only for Lua", func(t *testing.T) {
		_, err := rt.Run(bg, ptc.Request{Program: h.p.ReturnTwo, Bindings: []ptc.Namespace{ns("print", "", "")}})
		if rt.Language() == ptc.Lua {
			checkBindingError(t, err, `reserved binding global "print"`)
		} else if err != nil {
			t.Errorf("Run: %v, want no error", err)
		}
	})
}

// quote writes s as a JSON string, as the binding messages do.
func quote(s string) string {
	b, _ := dsl.Marshal(s)
	return string(b)
}

// checkBindingError checks that err is a *ptc.BindingError with message want,
// written "<backend>: <want>".
func checkBindingError(t *testing.T, err error, want string) {
	t.Helper()
	var be *ptc.BindingError
	if !errors.As(err, &be) {
		t.Fatalf("Run error = %v, want a *ptc.BindingError %q", err, want)
	}
	if be.Message != want {
		t.Errorf("message = %q, want %q", be.Message, want)
	}
	if be.Backend == "" || err.Error() != be.Backend+": "+want {
		t.Errorf("error = %q, want %q prefixed with the backend's name", err.Error(), want)
	}
}

func (h *harness) budgets(t *testing.T) {
	bg := context.Background()
	h.run(t, "a hot loop ends at the compute budget", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.ComputeMs = 100 })
		expect(t, run(t, rt, bg, tools(), h.p.Spin),
			`{"logs":[],"error":{"kind":"timeout","message":"compute budget exhausted (100ms busy)"}}`)
	})
	h.run(t, "a fractional compute budget is written as JavaScript writes it", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.ComputeMs = 50.5 })
		expect(t, run(t, rt, bg, tools(), h.p.Spin),
			`{"logs":[],"error":{"kind":"timeout","message":"compute budget exhausted (50.5ms busy)"}}`)
	})
	h.run(t, "waiting for a binding accrues no busy time", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.ComputeMs = float64(slowDelay.Milliseconds()) / 3 })
		expect(t, run(t, rt, bg, tools(slow()), h.p.AwaitSlow), `{"logs":[],"value":"slow-done"}`)
	})
	h.run(t, "a call that never settles meets the wall ceiling and its context ends", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.MaxWallMs = 150 })
		n := newNever(nil)
		expect(t, run(t, rt, bg, tools(n.binding()), h.p.NeverSettles),
			`{"logs":[],"error":{"kind":"timeout","message":"wall-clock ceiling reached (150ms)"}}`)
		n.waitEnded(t)
	})
	h.run(t, "a call made in two steps that never settles meets the wall ceiling and its wait ends", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.MaxWallMs = 150 })
		n := newNever(nil)
		expect(t, run(t, rt, bg, tools(n.twoStep()), h.p.NeverSettles),
			`{"logs":[],"error":{"kind":"timeout","message":"wall-clock ceiling reached (150ms)"}}`)
		n.waitEnded(t)
	})
	h.run(t, "a hot loop meets the wall ceiling before a larger compute budget", func(t *testing.T) {
		rt := h.runtime(t, func(b *ptc.Budgets) { b.ComputeMs, b.MaxWallMs = 60_000, 150 })
		expect(t, run(t, rt, bg, tools(), h.p.Spin),
			`{"logs":[],"error":{"kind":"timeout","message":"wall-clock ceiling reached (150ms)"}}`)
	})
}

func (h *harness) abort(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	h.run(t, "a context ended before the run is the abort with its cause and runs nothing", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(bg)
		cancel(errors.New("too-late"))
		e := &echo{}
		expect(t, run(t, rt, ctx, tools(e.binding()), h.p.CallEcho), `{"logs":[],"error":{"kind":"abort","message":"too-late"}}`)
		if n := len(e.calls()); n != 0 {
			t.Errorf("tools.echo ran %d times", n)
		}
	})
	h.run(t, "a context cancelled without a cause aborts with context canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(bg)
		cancel()
		expect(t, run(t, rt, ctx, tools(), h.p.ReturnTwo), `{"logs":[],"error":{"kind":"abort","message":"context canceled"}}`)
	})
	h.run(t, "an abort ends a hot loop with the cause's text", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(bg)
		defer cancel(nil)
		started := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			select {
			case <-started:
				cancel(errors.New("user-cancel"))
			case <-ctx.Done():
			}
		}()
		res := run(t, rt, ctx, tools(start(started)), h.p.StartThenSpin)
		cancel(nil)
		<-done
		expect(t, res, `{"logs":[],"error":{"kind":"abort","message":"user-cancel"}}`)
	})
	h.run(t, "an abort reaches a binding in flight and its late value is dropped", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(bg)
		defer cancel(nil)
		n := newNever(func() { cancel(errors.New("stop")) })
		expect(t, run(t, rt, ctx, tools(n.binding()), h.p.NeverSettles), `{"logs":[],"error":{"kind":"abort","message":"stop"}}`)
		n.waitEnded(t)
	})
	h.run(t, "the runtime runs again after an abort", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.ReturnTwo), `{"logs":[],"value":2}`)
	})
}

func (h *harness) isolation(t *testing.T) {
	rt := h.runtime(t, nil)
	bg := context.Background()
	h.run(t, "a global set in one run is unset in the next", func(t *testing.T) {
		expect(t, run(t, rt, bg, tools(), h.p.SetLeak), `{"logs":[]}`)
		expect(t, run(t, rt, bg, tools(), h.p.LeakIsUnset), `{"logs":[],"value":true}`)
	})
	h.run(t, "a global set in the same run is set", func(t *testing.T) {
		// LeakIsUnset must be able to say false.
		expect(t, run(t, rt, bg, tools(), h.p.SetLeak+"\n"+h.p.LeakIsUnset), `{"logs":[],"value":false}`)
	})
}

func (h *harness) disposal(t *testing.T) {
	bg := context.Background()
	h.run(t, "Close ends a hot loop in flight as runtime disposed and later runs fail", func(t *testing.T) {
		rt := h.runtime(t, nil)
		_, err := rt.Run(bg, ptc.Request{Program: h.p.ReturnTwo, Bindings: []ptc.Namespace{{Global: "console"}}})
		var be *ptc.BindingError
		if !errors.As(err, &be) {
			t.Fatalf("Run with a reserved global: %v, want a *ptc.BindingError", err)
		}
		started := make(chan struct{})
		done := make(chan ptc.Result, 1)
		go func() {
			res, err := rt.Run(bg, ptc.Request{Program: h.p.StartThenSpin, Bindings: tools(start(started))})
			if err != nil {
				res.Err = &ptc.Failure{Kind: "Run error", Message: err.Error()}
			}
			done <- res
		}()
		select {
		case <-started:
		case res := <-done:
			t.Fatalf("the run ended before Close: %s", render(res))
		case <-time.After(guard):
			t.Fatal("tools.start was not called")
		}
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case res := <-done:
			expect(t, res, `{"logs":[],"error":{"kind":"abort","message":"runtime disposed"}}`)
		case <-time.After(guard):
			t.Fatal("the run did not end after Close returned")
		}
		_, err = rt.Run(bg, ptc.Request{Program: h.p.ReturnTwo, Bindings: tools()})
		if !errors.Is(err, ptc.ErrRunAfterDisposal) {
			t.Fatalf("Run after Close: %v, want ptc.ErrRunAfterDisposal", err)
		}
		if want := be.Backend + ": run() after disposal"; err.Error() != want {
			t.Errorf("Run after Close: %q, want %q", err.Error(), want)
		}
	})
	h.run(t, "Close ends a call in flight as runtime disposed and the call's context ends", func(t *testing.T) {
		rt := h.runtime(t, nil)
		n := newNever(nil)
		done := make(chan ptc.Result, 1)
		go func() {
			res, err := rt.Run(bg, ptc.Request{Program: h.p.NeverSettles, Bindings: tools(n.binding())})
			if err != nil {
				res.Err = &ptc.Failure{Kind: "Run error", Message: err.Error()}
			}
			done <- res
		}()
		select {
		case <-n.called:
		case res := <-done:
			t.Fatalf("the run ended before Close: %s", render(res))
		case <-time.After(guard):
			t.Fatal("tools.never was not called")
		}
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case res := <-done:
			expect(t, res, `{"logs":[],"error":{"kind":"abort","message":"runtime disposed"}}`)
		case <-time.After(guard):
			t.Fatal("the run did not end after Close returned")
		}
		n.waitEnded(t)
	})
	h.run(t, "Close with no run in flight makes later runs fail", func(t *testing.T) {
		rt := h.runtime(t, nil)
		if err := rt.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		_, err := rt.Run(bg, ptc.Request{Program: h.p.ReturnTwo, Bindings: tools()})
		if !errors.Is(err, ptc.ErrRunAfterDisposal) || !strings.HasSuffix(err.Error(), ": run() after disposal") {
			t.Errorf("Run after Close: %v, want <backend>: run() after disposal", err)
		}
	})
}
