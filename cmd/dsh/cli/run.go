package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func newRunCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "run FILE|-",
		Short: "Execute a batch of model tool calls from a file",
		Long: `Run executes one assistant step's tool calls, read from FILE ("-" for
standard input): a JSON array of objects

  {"id": "c1", "name": "read_file", "arguments": "{\"path\": \"README.md\"}"}

where "arguments" is the raw JSON text the model emitted, or an object, and
"id" defaults to c1, c2… An optional "agent" runs that call as another
agent (null: without one); consecutive calls of one agent form one batch.

The calls go through the whole pipeline: policies, approval (--approve),
guards, the scheduler's parallel groups and exclusive barriers. The output
is one card per call, drawn by the tool's presentCall and presentResult, in
model order, then a summary line; with --json, the batch result exactly as
the engine returns it. With --log, the session events are appended to FILE.

Exit status: 0 when the calls ran (a tool failure is a result, not a
command failure), 1 for a calls file that cannot be read or is not a list
of calls, 2 for a usage error, 130 when interrupted (143 for SIGTERM).`,
		Example: `  dsh run calls.json
  dsh --scripts scripts/examples/plugins --approve allow --log session.jsonl run calls.json
  echo '[{"id":"c1","name":"word_count","arguments":{"text":"a b c"}}]' | dsh run --json -`,
		Args: exactArgs(1, "run needs one calls FILE (or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == stdinName && o.approve == approvePrompt {
				return errors.New("--approve prompt reads the answers from standard input, which the calls file - already is")
			}
			v, err := readJSON(o.stdin, args[0])
			if err != nil {
				return userErrorf("%v", err)
			}
			calls, err := parseCalls(v)
			if err != nil {
				return userErrorf("%s: %v", displayName(args[0]), err)
			}
			if args[0] == stdinName && o.approve == "" {
				o.approve = approveNone // the input is spent: nobody can answer
			}
			return runCalls(cmd.Context(), o, calls)
		},
	}
}

func newCallCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "call NAME [ARGS_JSON]",
		Short: "Execute one tool call",
		Long: `Call executes one tool call, with id c1, through the whole pipeline, as
"dsh run" does. ARGS_JSON is the arguments as JSON text, passed on as a
model would emit it: empty or absent is {}. Text that is not JSON is a
usage error, with the parser's reason and offset (to try what a tool does
with a model's malformed arguments, give them as a string "arguments" in
a "dsh run" calls file). A NAME that no tool can have (outside
^[a-zA-Z0-9_-]{1,64}$) is a usage error that shows it escaped.

The output is the call's card, or with --json the batch result.

Exit status: 0 when the call ran (a tool failure is a result), 1 for
problems the user must fix (such as a missing --scripts directory), 2 for a
usage error (arguments that are not JSON among them), 130 when interrupted
(143 for SIGTERM).`,
		Example: `  dsh call word_count '{"text": "the quick brown fox"}'
  dsh --approve deny call write_file '{"path": "notes.md", "content": "hi"}'
  dsh --json call list_dir '{"path": "."}'`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return fmt.Errorf("call needs NAME and optionally ARGS_JSON, got %d argument(s)", len(args))
			}
			// No tool can have a name outside the rule: a usage error
			// rather than a call of an unknown tool.
			return engine.CheckToolName(args[0])
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c := modelCall{block: engine.ToolCallBlock{ID: "c1", Name: args[0]}}
			if len(args) == 2 {
				if err := checkArgsJSON(args[1]); err != nil {
					return err
				}
				c.block.Arguments = args[1]
			}
			return runCalls(cmd.Context(), o, []modelCall{c})
		},
	}
}

// checkArgsJSON refuses call's ARGS_JSON when it is not empty and not JSON
// dsh accepts (dsl.Unmarshal's), as a usage error that gives the parser's
// reason and offset.
func checkArgsJSON(text string) error {
	if text == "" {
		return nil
	}
	_, err := dsl.Unmarshal([]byte(text))
	if err == nil {
		return nil
	}
	reason := err.Error()
	var se *dsl.SyntaxError
	if errors.As(err, &se) {
		reason = fmt.Sprintf("%s at offset %d", se.Msg, se.Offset) // without the "json: " prefix
	}
	return fmt.Errorf("arguments are not valid JSON: %s", reason)
}

// exactArgs requires n arguments, with msg as the usage error otherwise.
func exactArgs(n int, msg string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s, got %d argument(s)", msg, len(args))
		}
		return nil
	}
}

// batchOf is one run of consecutive calls of the same agent: one batch.
type batchOf struct {
	agent *engine.Agent
	calls []engine.ToolCallBlock
}

// batches splits calls into batches of consecutive calls of one agent.
func (s *session) batches(calls []modelCall) []batchOf {
	var out []batchOf
	for _, c := range calls {
		agent := s.agent
		if c.hasAgent {
			agent = nil
			if c.agent != "" {
				agent = s.agents.Agent(c.agent)
			}
		}
		if n := len(out); n > 0 && out[n-1].agent == agent {
			out[n-1].calls = append(out[n-1].calls, c.block)
			continue
		}
		out = append(out, batchOf{agent: agent, calls: []engine.ToolCallBlock{c.block}})
	}
	return out
}

// runCalls loads the plugins and runs calls, then prints the cards and a
// summary, or the batch result as JSON.
func runCalls(ctx context.Context, o *options, calls []modelCall) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	rec := &recorder{drop: o.json}
	if rec.file, err = o.openLog(); err != nil {
		return err
	}
	if rec.file != nil {
		defer rec.file.Close()
	}
	if _, err := s.loadAll(ctx); err != nil {
		return err
	}
	s.printDiagnostics(o.stderr)

	batches := s.batches(calls)
	for _, b := range batches {
		if b.agent == nil && o.logFile != "" {
			fmt.Fprintf(o.stderr, "dsh: --log %s: calls without an agent are not logged (the engine logs an agent's session)\n", o.logFile)
			break
		}
	}
	// Calls without an agent leave no events: their cards are drawn from
	// events built from what a tools/result observer sees (with --json no
	// card is drawn: no observer).
	var observed atomic.Int64
	if !o.json {
		stop := s.svc.Global().OnResult(func(exec *engine.Execution, r *engine.Result) error {
			if exec.Agent() != nil || exec.Parent() != nil {
				return nil
			}
			observed.Add(1)
			rec.observe(engine.ToolCallEvent(nil, exec.CallID(), exec.Name(), exec.Arguments()),
				func(callEvent string) engine.Event { return engine.ToolResultEvent(nil, exec.CallID(), callEvent, r) })
			return nil
		})
		defer stop()
	}

	total := &engine.BatchResult{Results: []engine.CallResult{}}
	var batchErr error
	var ends []int // where each batch's records end
	for _, b := range batches {
		observed.Store(0)
		res, err := s.runBatch(ctx, b, rec)
		if res != nil {
			total.Results = append(total.Results, res.Results...)
			total.AdditionalContexts = append(total.AdditionalContexts, res.AdditionalContexts...)
			total.Concluded = total.Concluded || res.Concluded
			if b.agent == nil && !o.json {
				// Skipped calls (after an interrupt) met no observer.
				for i := int(observed.Load()); i < len(res.Results); i++ {
					cr, name := res.Results[i], b.calls[i].Name
					call := engine.Event{Type: engine.EventToolCall, Data: dsl.NewObject(
						dsl.Member{Key: "callId", Value: cr.CallID}, dsl.Member{Key: "name", Value: name})}
					rec.observe(call, func(callEvent string) engine.Event {
						return engine.ToolResultEvent(nil, cr.CallID, callEvent, cr.Result)
					})
				}
			}
		}
		ends = append(ends, rec.len())
		if err != nil {
			batchErr = err
			break
		}
	}

	if o.json {
		if err := writeJSONLine(o.stdout, total.JSON()); err != nil {
			return err
		}
	} else {
		st := style{on: colour(o.stdout)}
		// One write per card was one system call per card: the cards go
		// through a buffer, flushed once they are all drawn.
		out := bufio.NewWriter(o.stdout)
		recs := rec.all()
		var split [][]record
		start := 0
		for _, end := range ends {
			split = append(split, recs[start:end])
			start = end
		}
		if len(split) == 0 {
			split = [][]record{recs}
		}
		writeBatches(out, st, presenter{s}, split)
		writeContexts(out, st, total.AdditionalContexts, total.Concluded)
		// As before the buffer, a stdout that fails (a closed pipe) does
		// not fail the run: the calls ran.
		_ = out.Flush()
	}
	if batchErr != nil {
		return userErrorf("the batch failed: %v", batchErr)
	}
	if ctx.Err() != nil {
		return interrupted("the calls not started were skipped")
	}
	return nil
}

// runBatch runs one batch as its agent, with the step's tool set resolved
// for its activation conditions.
func (s *session) runBatch(ctx context.Context, b batchOf, rec *recorder) (*engine.BatchResult, error) {
	scope := s.scope(b.agent)
	set, err := scope.Resolve(ctx, nil)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("resolving the tool set: %w", err)
	}
	// Interrupted while an activation condition ran, the batch goes on
	// without a tool set: the engine skips every call, as after any
	// interrupt (ABORTED_BEFORE_DISPATCH).
	if s.prompt != nil {
		ctx = engine.WithElicit(ctx, s.prompt.elicit) // tools' questions go to the prompt too
	}
	res, err := scope.Execute(ctx, engine.Batch{Calls: b.calls, Agent: b.agent, ToolSet: set, Log: rec})
	var be *engine.BatchError
	if errors.As(err, &be) {
		return be.Committed, be
	}
	return res, err
}

// writeBatches writes the cards of each batch, then its summary line, with
// a blank line between batches.
func writeBatches(w io.Writer, st style, p presenter, batches [][]record) {
	for i, recs := range batches {
		if i > 0 {
			fmt.Fprintln(w)
		}
		cards := p.cards(recs)
		writeCards(w, st, cards)
		fmt.Fprintln(w, summary(st, cards, recs))
	}
}

// writeJSONLine writes v as one line of canonical JSON.
func writeJSONLine(w io.Writer, v any) error {
	text, err := dsl.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing JSON output: %w", err)
	}
	_, err = w.Write(append(text, '\n'))
	return err
}

// writeContexts lists the context messages the calls left for the next
// step, and says when the turn concluded: what a live run knows beyond its
// session events.
func writeContexts(w io.Writer, st style, msgs []engine.Message, concluded bool) {
	for _, m := range msgs {
		ls := splitLines(contentText(m.Content))
		if len(ls) == 0 {
			ls = []string{""}
		}
		fmt.Fprintf(w, "%s %s\n", st.cyan("↳ context for the next step:"), clean(ls[0]))
		for i, l := range ls[1:] {
			if i+1 == maxBodyLines {
				fmt.Fprintf(w, "  %s\n", st.dim(more(len(ls)-1-i, "line", "lines")))
				break
			}
			fmt.Fprintf(w, "  %s\n", clean(l))
		}
	}
	if concluded {
		fmt.Fprintln(w, st.bold("The turn concluded."))
	}
}

// summary is the line after the cards: how many calls succeeded, failed,
// were aborted or have no result, how they were scheduled, read from the
// order of their events, and which never ran (aborted before dispatch).
func summary(st style, cards []card, recs []record) string {
	var ok, failed, aborted, open int
	for _, c := range cards {
		switch {
		case !c.hasResult:
			open++
		case !c.isError:
			ok++
		case c.code == engine.CodeAborted || c.code == engine.CodeAbortedBeforeDispatch:
			aborted++
		default:
			failed++
		}
	}
	parts := []string{fmt.Sprintf("%d ok", ok)}
	if failed > 0 {
		parts = append(parts, st.red(fmt.Sprintf("%d failed", failed)))
	} else {
		parts = append(parts, "0 failed")
	}
	if aborted > 0 {
		parts = append(parts, st.yellow(fmt.Sprintf("%d aborted", aborted)))
	}
	if open > 0 {
		parts = append(parts, st.yellow(fmt.Sprintf("%d without a result", open)))
	}
	line := plural(len(cards), "call", "calls") + ": " + strings.Join(parts, ", ")
	groups, notRun := schedule(recs)
	if len(groups) > 0 {
		gs := make([]string, len(groups))
		for i, g := range groups {
			gs[i] = clean(strings.Join(g, "+"))
		}
		line += st.dim(" · ran " + strings.Join(gs, " | "))
	}
	if len(notRun) > 0 {
		line += st.dim(" · aborted before dispatch: " + clean(strings.Join(notRun, ", ")))
	}
	return line
}
