package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
)

// maxCallLine bounds one line of watch's standard input: a longer line is
// read through without being held, reported on standard error and skipped.
const maxCallLine = 64 << 20

func newWatchCmd(o *options) *cobra.Command {
	var debounce time.Duration
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Serve calls from standard input, reloading plugins as they change",
		Long: `Watch loads the plugins of the scripts directories, watches the
directories, and reloads a plugin when its file changes: the new version
is loaded in fresh interpreters and swapped in at once, while the calls
that already began finish on the old one. A version that fails to load is
reported and the old one keeps serving. A deleted file unloads its plugin,
a new file loads, and a change to a module (under lib/, say) reloads the
plugins that import it. A file that is emptied is unloaded only once it
has stayed empty for a second, so that an editor that truncates the file
before writing it does not drop the plugin meanwhile. Each load, reload,
unload and diagnostic is printed on standard error as it happens:

  scripts/policy.js: loaded 9e8d7c6b5a41
  scripts/policy.js:4:9: Unexpected "}"
  scripts/policy.js: reload failed; 9e8d7c6b5a41 keeps serving
  scripts/policy.js: 9e8d7c6b5a41 serves again
  scripts/policy.js: reloaded 3f2a9c0d11b2 (was 9e8d7c6b5a41)

(the hex is the start of the file's content hash). Meanwhile it serves the
tool calls read from standard input, one JSON object a line, as in a
"dsh run" calls file:

  {"id": "c1", "name": "word_count", "arguments": {"text": "a b c"}}

("id" defaults to c<line number>), and writes one line per call on
standard output as soon as the call completes:

  {"callId": "c1", "result": {"isError": false, "value": {"words": 3}, ...}}

with the result in the form "dsh run --json" prints. Calls start as their
lines are read, at most --max-parallel at a time, each as a batch of its
own, and their results are written in the order they complete. Calls to
different plugins run in parallel, but calls to the same plugin queue on
its interpreter (one event loop in JavaScript, one state in Lua): while one
computes, the next waits, and they interleave only where it waits on the
host (an await in JavaScript, a dsh call such as a file read or a fetch in
Lua). So a slow call holds up the next line when both go to the same
plugin and it computes rather than waits, unless the plugin runs several
copies (instances: N). Watch exits once standard input ends and every call
has been answered. With --approve prompt unavailable (standard input
carries the calls), an ask is answered by --approve allow or deny, or is
unavailable.

An interrupt (SIGINT) stops reading; the calls already started are
cancelled and answered as usual ("tool call aborted", or "tool call
aborted before dispatch" for a call that had not started its body).

Exit status: 0, 1 when a line was not a call (it is reported on standard
error and skipped, as is a line over 64 MiB, read through without being held) or a scripts directory cannot be read, 2 for a usage
error, 130 when interrupted (143 for SIGTERM).`,
		Example: `  echo '{"id":"c1","name":"word_count","arguments":{"text":"a b c"}}' | dsh --scripts scripts/examples/plugins watch
  tail -f calls.jsonl | dsh --scripts scripts --approve allow watch > results.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.approve == approvePrompt {
				return errors.New("--approve prompt reads the answers from standard input, which carries the calls in watch")
			}
			if debounce <= 0 {
				return fmt.Errorf("--debounce %v: the period must be positive", debounce)
			}
			if o.approve == "" {
				o.approve = approveNone
			}
			return watch(cmd.Context(), o, debounce)
		},
	}
	cmd.Flags().DurationVar(&debounce, "debounce", scripting.DefaultDebounce, "wait `PERIOD` of quiet after a change before reloading")
	return cmd
}

// lockedWriter writes whole lines from several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// printf writes one formatted line.
func (l *lockedWriter) printf(format string, args ...any) {
	_, _ = l.Write([]byte(fmt.Sprintf(format, args...) + "\n"))
}

// watch runs the watch command.
func watch(ctx context.Context, o *options, debounce time.Duration) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	dirs, err := o.scriptDirs()
	if err != nil {
		return err
	}
	var log engine.EventLog
	l, err := o.openLog()
	if err != nil {
		return err
	}
	if l != nil {
		defer l.Close()
		log = l
	}
	stderr := &lockedWriter{w: o.stderr}
	stdout := &lockedWriter{w: o.stdout}
	stopWatch, loaded, failed, err := startReloader(ctx, s, dirs, debounce, stderr)
	if err != nil {
		return err
	}
	defer stopWatch()
	if err := s.connectMCP(ctx); err != nil {
		return err
	}
	if len(dirs) == 0 {
		stderr.printf("dsh: no scripts directory to watch; reading calls from standard input")
	} else {
		stderr.printf("dsh: watching %s: %s loaded, %s; reading calls from standard input",
			strings.Join(dirs, ", "), plural(loaded, "plugin", "plugins"), plural(failed, "diagnostic", "diagnostics"))
	}

	bad, err := serveLines(ctx, s, o, log, stdout, stderr)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return interrupted("the calls not read were skipped")
	}
	if bad > 0 {
		return exitWith(exitViolations)
	}
	return nil
}

// startReloader loads the plugins of dirs and reloads them as they change,
// reporting each event on stderr, until the returned stop is called. It
// returns how many plugins loaded and how many failed to.
func startReloader(ctx context.Context, s *session, dirs []string, debounce time.Duration, stderr *lockedWriter) (stop func(), loaded, failed int, err error) {
	r := &scripting.Reloader{Loader: s.loader, Dirs: dirs, Debounce: debounce, Logger: s.loader.Logger,
		OnReload: func(ev scripting.ReloadEvent) { printReload(stderr, ev) }}
	if err := r.Start(ctx); err != nil {
		_ = r.Close(context.Background())
		if ctx.Err() != nil {
			return nil, 0, 0, interrupted("")
		}
		return nil, 0, 0, userErrorf("--scripts: %v", pathErr(err))
	}
	stop = func() {
		cctx, cancel := context.WithTimeout(context.Background(), disposeTimeout)
		defer cancel()
		if err := r.Close(cctx); err != nil {
			s.logger.Warn("disposing plugins", "error", err)
		}
	}
	for _, st := range r.Status() {
		if st.Plugin != nil {
			loaded++
		}
		if st.Err != nil {
			failed++
		}
	}
	return stop, loaded, failed, nil
}

// printReload writes one reload event as watch reports it.
func printReload(w *lockedWriter, ev scripting.ReloadEvent) {
	p := filepath.Join(ev.Dir, filepath.FromSlash(ev.File))
	switch ev.Kind {
	case scripting.PluginLoaded:
		w.printf("%s: loaded %s", p, shortRev(ev.Revision))
	case scripting.PluginReloaded:
		w.printf("%s: reloaded %s (was %s)", p, shortRev(ev.Revision), shortRev(ev.Previous))
	case scripting.PluginUnloaded:
		w.printf("%s: unloaded %s", p, shortRev(ev.Revision))
	case scripting.PluginFailed:
		w.printf("%s", diagnostic{path: p, d: ev.Err}.String())
		if ev.Previous != "" {
			w.printf("%s: reload failed; %s keeps serving", p, shortRev(ev.Previous))
		}
	case scripting.PluginRestored:
		w.printf("%s: %s serves again", p, shortRev(ev.Revision))
	}
}

// shortRev is the start of a revision that the CLI shows.
func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// inputLine is one line of standard input, or the error that ended it.
type inputLine struct {
	n    int
	text []byte
	err  error
}

// serveLines reads calls from standard input until it ends (or ctx is
// done), running each on a goroutine of its own, at most --max-parallel at
// once, and writing each result as a line when it completes. It returns
// the number of lines that were not calls.
func serveLines(ctx context.Context, s *session, o *options, log engine.EventLog, stdout, stderr *lockedWriter) (int, error) {
	lines := make(chan inputLine)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		in := newBoundedLines(o.stdin, maxCallLine)
		for {
			text, err := in.next()
			if err == io.EOF {
				return
			}
			var long *longLineError
			if err != nil && !errors.As(err, &long) {
				select {
				case lines <- inputLine{n: in.n + 1, err: err}:
				case <-stop:
				}
				return
			}
			select {
			case lines <- inputLine{n: in.n, text: bytes.Clone(text), err: err}:
			case <-stop:
				return
			}
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, o.maxParallel)
	var warnOnce sync.Once
	bad := 0
	for {
		var in inputLine
		var ok bool
		select {
		case in, ok = <-lines:
		case <-ctx.Done():
			return bad, nil
		}
		if !ok {
			return bad, nil
		}
		var long *longLineError
		if errors.As(in.err, &long) {
			// Read through and dropped: the next line is served.
			stderr.printf("dsh: standard input line %d: %v", in.n, in.err)
			bad++
			continue
		}
		if in.err != nil {
			stderr.printf("dsh: standard input line %d: %v", in.n, in.err)
			return bad + 1, nil
		}
		text := bytes.TrimSpace(in.text)
		if len(text) == 0 {
			continue
		}
		c, err := parseCallLine(text, in.n)
		if err != nil {
			stderr.printf("dsh: standard input line %d: %v", in.n, err)
			bad++
			continue
		}
		agent := s.agent
		if c.hasAgent {
			agent = nil
			if c.agent != "" {
				agent = s.agents.Agent(c.agent)
			}
		}
		if agent == nil && log != nil {
			warnOnce.Do(func() {
				stderr.printf("dsh: --log %s: calls without an agent are not logged (the engine logs an agent's session)", o.logFile)
			})
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return bad, nil
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			r := serveCall(ctx, s.svc.Scope(agent), agent, c.block, log)
			var line bytes.Buffer
			err := writeJSONLine(&line, dsl.NewObject(
				dsl.Member{Key: "callId", Value: c.block.ID},
				dsl.Member{Key: "result", Value: r.JSON()},
			))
			if err != nil {
				stderr.printf("dsh: call %s: %v", c.block.ID, err)
				return
			}
			_, _ = stdout.Write(line.Bytes())
		}()
	}
}

// parseCallLine reads one line of watch's input: a call object.
func parseCallLine(text []byte, n int) (modelCall, error) {
	v, err := dsl.Unmarshal(text)
	if err != nil {
		return modelCall{}, err
	}
	return parseCall(v, n-1)
}

// serveCall runs one call as a batch of its own, with the step's tool set
// resolved now (the plugins serving may have changed since the last call).
func serveCall(ctx context.Context, scope *engine.Scope, agent *engine.Agent, call engine.ToolCallBlock, log engine.EventLog) *engine.Result {
	fail := func(err error) *engine.Result {
		msg := err.Error()
		return &engine.Result{IsError: true, Error: &engine.Failure{Message: msg}, Content: []engine.Block{engine.Text("Error: " + msg)}}
	}
	set, err := scope.Resolve(ctx, nil)
	if err != nil && ctx.Err() == nil {
		return fail(fmt.Errorf("resolving the tool set: %w", err))
	}
	// Interrupted while an activation condition ran, the call goes on
	// without a tool set: the engine skips it, as after any interrupt
	// (ABORTED_BEFORE_DISPATCH), rather than a "context canceled" failure.
	res, err := scope.Execute(ctx, engine.Batch{Calls: []engine.ToolCallBlock{call}, Agent: agent, ToolSet: set, Log: log})
	var be *engine.BatchError
	if errors.As(err, &be) {
		res = be.Committed
	}
	if res == nil || len(res.Results) == 0 {
		if err == nil {
			err = errors.New("the call has no result")
		}
		return fail(fmt.Errorf("the batch failed: %w", err))
	}
	return res.Results[0].Result
}
