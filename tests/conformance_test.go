package tests

// The pipeline conformance cases (testdata/conformance/*.txtar): one table of
// cases, each run against a JavaScript and a Lua plugin of the same
// behaviour, with the real hosts, through the loader, into a fresh engine
// with the timeout policy installed.
//
// A case file is a txtar archive. Its comment says what the case shows. Its
// files are the plugin in each language (*.js, *.ts or *.mjs for the
// JavaScript run, *.lua for the Lua run; lib/ modules allowed) and "calls",
// a script of lines:
//
//	# a comment
//	approve TOOL OUTCOME   the approval service answers OUTCOME for TOOL
//	                       (any string; unlisted tools fail the test)
//	bare                   no engine timeout policy: a script wrapper is the only one
//	listener-timeout DUR   the hosts' listener deadline, for a case about it
//	                       (the hosts' default of 5s otherwise, so that no
//	                       other case races it)
//	skip REASON            skip the case: the hosts do not conform (REASON says how)
//	skip.js REASON         the same for one language only
//	skip.lua REASON
//	call [-agent ID] [-caller SUBJECT,CLIENT[,SCOPE...]] [-cancelled] TOOL [ARGS]
//	                       one call (ARGS is JSON, {} when absent), as agent ID,
//	                       for a verified caller (engine.WithCaller: the
//	                       token's subject, client id and scopes, as a served
//	                       request's; none without the flag), with a caller
//	                       ctx already cancelled
//	want RESULT            the call's exact result, dsl.Marshal(r.JSON())
//	want.js RESULT         the same for one language only, where the languages
//	want.lua RESULT        legitimately differ (say why in a comment)
//	stages [STAGE...]      the stages that ran for the call, in order
//	warn MESSAGE           a warning the engine logs for the call (contained
//	                       failures); a call logs exactly the warnings listed
//
// approve, bare, listener-timeout and skip come before the first call. In a
// RESULT, $PLUGIN stands for the plugin's file name (the source of a context a
// body deferred without one) and <uuid> for any fresh message id.
//
// The budgets a case is about, its listener-timeout and the timeoutMs of its
// tools, are scaled by the tests' time scale (internal/testtime), and so is
// each "Nms" of a RESULT whose N is one of them (see budgets).
//
// Plugins trace stages through a host module made for these tests,
// "dsh/trace" (dsh.trace in Lua): stage(name) records a stage of the current
// call, result(r), for tools/result observers, records the stage "result" and
// the result it saw, which must equal the call's final result (compared with
// sorted keys: Lua tables have no key order).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// confGrace is the hosts' grace in the conformance runs, before the time
// scale: the hosts' default, as a body that goes on past its deadline
// (a_nested_call_past_its_deadline_ends_alone) must get its work done
// within it on a loaded machine too.
const confGrace = js.DefaultGrace

// confLanguages are the languages every case runs in, and which case files
// hold each one's plugin.
var confLanguages = []struct {
	name string
	exts []string
}{
	{"js", []string{".js", ".ts", ".mjs"}},
	{"lua", []string{".lua"}},
}

// confCase is one case file.
type confCase struct {
	file      string
	name      string
	files     map[string]map[string]string // language → path → text
	approvals map[string]engine.ApprovalOutcome
	bare      bool
	skip      map[string]string // language ("" for both) → why
	calls     []*confCall

	// listenerTimeout is the hosts' listener deadline as the case writes
	// it; 0 for the hosts' default.
	listenerTimeout time.Duration
}

// confCall is one call of a case and what must come of it.
type confCall struct {
	line      int
	tool      string
	args      string
	agent     string
	caller    *engine.Caller // the verified caller the call runs for, if any
	cancelled bool
	want      map[string]string // language ("" for both) → result
	stages    []string
	hasStages bool
	warnings  []string
}

// TestConformance runs every case of testdata/conformance in each language.
func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "conformance", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no conformance cases")
	}
	for _, f := range files {
		c, err := readConfCase(f)
		if err != nil {
			t.Error(err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has its own engine and hosts
			for _, lang := range confLanguages {
				t.Run(lang.name, func(t *testing.T) { c.run(t, lang.name) })
			}
		})
	}
}

// readConfCase parses a case file; its name is the file's, without .txtar.
func readConfCase(file string) (*confCase, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	c := &confCase{
		file:      file,
		name:      strings.TrimSuffix(filepath.Base(file), ".txtar"),
		files:     map[string]map[string]string{},
		approvals: map[string]engine.ApprovalOutcome{},
		skip:      map[string]string{},
	}
	var script []byte
	for _, f := range a.Files {
		if f.Name == "calls" {
			script = f.Data
			continue
		}
		lang := ""
		for _, l := range confLanguages {
			if slices.Contains(l.exts, path.Ext(f.Name)) {
				lang = l.name
			}
		}
		if lang == "" {
			return nil, fmt.Errorf("%s: %s: not a plugin file of any language", file, f.Name)
		}
		if c.files[lang] == nil {
			c.files[lang] = map[string]string{}
		}
		c.files[lang][f.Name] = string(f.Data)
	}
	for _, l := range confLanguages {
		if len(c.files[l.name]) == 0 {
			return nil, fmt.Errorf("%s: no %s plugin", file, l.name)
		}
	}
	if err := c.parseCalls(script); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(c.calls) == 0 {
		return nil, fmt.Errorf("%s: no calls", file)
	}
	return c, nil
}

// parseCalls reads the calls script.
func (c *confCase) parseCalls(script []byte) error {
	sc := bufio.NewScanner(strings.NewReader(string(script)))
	line := 0
	var cur *confCall
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		verb, rest, _ := strings.Cut(text, " ")
		rest = strings.TrimSpace(rest)
		bad := func(format string, a ...any) error {
			return fmt.Errorf("calls:%d: %s", line, fmt.Sprintf(format, a...))
		}
		switch verb {
		case "approve", "bare", "listener-timeout", "skip", "skip.js", "skip.lua":
			if cur != nil {
				return bad("%s must come before the first call", verb)
			}
			if err := c.setup(verb, rest); err != nil {
				return bad("%v", err)
			}
		case "call":
			if cur != nil && len(cur.want) == 0 {
				return bad("the call of line %d has no want", cur.line)
			}
			cur = &confCall{line: line, want: map[string]string{}}
		flags:
			for {
				word, after, _ := strings.Cut(rest, " ")
				switch word {
				case "-agent":
					cur.agent, rest, _ = strings.Cut(strings.TrimSpace(after), " ")
					rest = strings.TrimSpace(rest)
					continue
				case "-cancelled":
					cur.cancelled, rest = true, strings.TrimSpace(after)
					continue
				case "-caller":
					var who string
					who, rest, _ = strings.Cut(strings.TrimSpace(after), " ")
					rest = strings.TrimSpace(rest)
					f := strings.Split(who, ",")
					if len(f) < 2 {
						return bad("usage: -caller SUBJECT,CLIENT[,SCOPE...]")
					}
					cur.caller = &engine.Caller{Subject: f[0], ClientID: f[1], Scopes: f[2:]}
					continue
				}
				cur.tool, cur.args = word, strings.TrimSpace(after)
				break flags
			}
			if cur.tool == "" || strings.HasPrefix(cur.tool, "-") {
				return bad("usage: call [-agent ID] [-caller SUBJECT,CLIENT[,SCOPE...]] [-cancelled] TOOL [ARGS]")
			}
			if cur.args == "" {
				cur.args = "{}"
			}
			if _, err := dsl.Unmarshal([]byte(cur.args)); err != nil {
				return bad("arguments: %v", err)
			}
			c.calls = append(c.calls, cur)
		case "want", "want.js", "want.lua", "stages", "warn":
			if cur == nil {
				return bad("%s before any call", verb)
			}
			if verb == "warn" {
				cur.warnings = append(cur.warnings, rest)
				continue
			}
			if verb == "stages" {
				if cur.hasStages {
					return bad("a second stages line for one call")
				}
				cur.stages, cur.hasStages = strings.Fields(rest), true
				continue
			}
			lang := strings.TrimPrefix(strings.TrimPrefix(verb, "want"), ".")
			if _, dup := cur.want[lang]; dup {
				return bad("a second %s line for one call", verb)
			}
			cur.want[lang] = rest
		default:
			return bad("unknown verb %q", verb)
		}
	}
	if cur != nil && len(cur.want) == 0 {
		return fmt.Errorf("calls:%d: the call has no want", cur.line)
	}
	for _, call := range c.calls {
		_, both := call.want[""]
		_, js := call.want["js"]
		_, lua := call.want["lua"]
		if both && (js || lua) || !both && !(js && lua) {
			return fmt.Errorf("calls:%d: give either want, or both want.js and want.lua", call.line)
		}
	}
	return sc.Err()
}

// setup reads a line that configures the whole case.
func (c *confCase) setup(verb, rest string) error {
	switch verb {
	case "bare":
		c.bare = true
	case "listener-timeout":
		d, err := time.ParseDuration(rest)
		if err != nil || d <= 0 || d%time.Millisecond != 0 {
			return errors.New("usage: listener-timeout DURATION (a positive whole number of milliseconds)")
		}
		c.listenerTimeout = d
	case "approve":
		tool, outcome, ok := strings.Cut(rest, " ")
		if !ok {
			return errors.New("usage: approve TOOL OUTCOME")
		}
		c.approvals[tool] = engine.ApprovalOutcome(strings.TrimSpace(outcome))
	default: // skip, skip.js, skip.lua
		if rest == "" {
			return fmt.Errorf("usage: %s REASON", verb)
		}
		c.skip[strings.TrimPrefix(strings.TrimPrefix(verb, "skip"), ".")] = rest
	}
	return nil
}

// run runs the case in one language.
func (c *confCase) run(t *testing.T, lang string) {
	for _, l := range []string{"", lang} {
		if why, ok := c.skip[l]; ok {
			t.Skipf("%s: %s", c.file, why)
		}
	}
	root := t.TempDir()
	plugin := ""
	b := newBudgets(testtime.Scale())
	var listenerTimeout time.Duration // the hosts' default
	if c.listenerTimeout > 0 {
		listenerTimeout = time.Duration(b.add(c.listenerTimeout.Milliseconds())) * time.Millisecond
	}
	for rel, text := range c.files[lang] {
		text = b.source(text)
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(rel, "lib/") {
			plugin = rel
		}
	}
	tr := &confTrace{}
	approval := engine.ApprovalFunc(func(_ context.Context, req engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
		outcome, ok := c.approvals[req.ToolName]
		if !ok {
			t.Errorf("the approval service was asked about %q, which the case does not approve", req.ToolName)
			return engine.Unavailable, nil
		}
		return outcome, nil
	})
	warnings := &confWarnings{}
	svc := engine.New(engine.WithApproval(approval), engine.WithLogger(slog.New(warnings)))
	if !c.bare {
		svc.Global().OnExecute(engine.TimeoutPolicy())
	}
	mods := []scripting.Module{tr.module()}
	agents := scripting.NewAgents()
	loader := &scripting.Loader{
		Service: svc,
		Hosts: []scripting.Host{
			&js.Host{ListenerTimeout: listenerTimeout, Grace: testtime.D(confGrace), Modules: mods},
			&lua.Host{ListenerTimeout: listenerTimeout, Grace: testtime.D(confGrace), Modules: mods},
		},
		Agents:      agents.Agent,
		LoadTimeout: 30 * time.Second, // no case is about it: generous for a loaded machine
	}
	loaded := loadAll(t, loader, root, c.file+": ")
	if len(loaded) != 1 {
		t.Fatalf("%s: %d plugins loaded, want 1", c.file, len(loaded))
	}
	for i, call := range c.calls {
		where := fmt.Sprintf("%s:calls:%d", c.file, call.line)
		args, _ := dsl.Unmarshal([]byte(call.args)) // checked when parsed
		ctx := context.Background()
		if call.caller != nil {
			ctx = engine.WithCaller(ctx, call.caller)
		}
		if call.cancelled {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			ctx = cctx
		}
		var agent *engine.Agent
		if call.agent != "" {
			agent = agents.Agent(call.agent)
		}
		r := svc.Call(ctx, engine.Input{CallID: fmt.Sprintf("c%d", i+1), Name: call.tool, Arguments: args, Agent: agent})
		got := confMarshal(t, r.JSON())
		want, ok := call.want[lang]
		if !ok {
			want = call.want[""]
		}
		want = b.text(strings.ReplaceAll(want, "$PLUGIN", plugin))
		if g := confUUID.ReplaceAllString(got, `"<uuid>"`); g != want {
			t.Errorf("%s: call %s %s\ngot  %s\nwant %s", where, call.tool, call.args, g, want)
		}
		if w := warnings.take(); !slices.Equal(w, call.warnings) {
			t.Errorf("%s: call %s %s\nwarnings %q\nwant     %q", where, call.tool, call.args, w, call.warnings)
		}
		stages, observed := tr.take()
		if call.hasStages && !slices.Equal(stages, call.stages) {
			t.Errorf("%s: call %s %s\nstages %q\nwant   %q", where, call.tool, call.args, strings.Join(stages, " "), strings.Join(call.stages, " "))
		}
		final := confMarshal(t, confSorted(r.JSON()))
		for _, o := range observed {
			if s := confMarshal(t, confSorted(o)); s != final {
				t.Errorf("%s: call %s %s\ntools/result observed %s\nfinal result          %s", where, call.tool, call.args, s, final)
			}
		}
	}
}

// confUUID matches a fresh message id.
var confUUID = regexp.MustCompile(`"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"`)

// confTrace records what a plugin reports through dsh/trace.
type confTrace struct {
	mu       sync.Mutex
	stages   []string
	observed []any
}

// module is the dsh/trace host module.
func (tr *confTrace) module() scripting.Module {
	return scripting.Module{Name: "trace", Sync: true, Funcs: map[string]scripting.ModuleFunc{
		"stage": func(_ context.Context, args []any) (any, error) {
			if len(args) != 1 {
				return nil, errors.New("trace.stage(name) takes one stage name")
			}
			name, ok := args[0].(string)
			if !ok {
				return nil, errors.New("trace.stage(name) takes one stage name")
			}
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.stages = append(tr.stages, name)
			return nil, nil
		},
		"result": func(_ context.Context, args []any) (any, error) {
			if len(args) != 1 {
				return nil, errors.New("trace.result(result) takes the observed result")
			}
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.stages = append(tr.stages, "result")
			tr.observed = append(tr.observed, args[0])
			return nil, nil
		},
	}}
}

// take returns what was recorded since the last take, and forgets it.
func (tr *confTrace) take() ([]string, []any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s, o := tr.stages, tr.observed
	tr.stages, tr.observed = nil, nil
	return s, o
}

// confWarnings is a slog.Handler that keeps the messages of warnings and errors.
type confWarnings struct {
	mu       sync.Mutex
	messages []string
}

func (w *confWarnings) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (w *confWarnings) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.messages = append(w.messages, r.Message)
	return nil
}

func (w *confWarnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *confWarnings) WithGroup(string) slog.Handler      { return w }

// take returns the messages since the last take, and forgets them.
func (w *confWarnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.messages
	w.messages = nil
	return m
}

// confMarshal renders a JSON value as canonical JSON text.
func confMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// confSorted returns v with every object's keys in sorted order.
func confSorted(v any) any {
	switch x := v.(type) {
	case *dsl.Object:
		keys := x.Keys()
		slices.Sort(keys)
		o := dsl.NewObject()
		for _, k := range keys {
			e, _ := x.Get(k)
			o.Set(k, confSorted(e))
		}
		return o
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = confSorted(e)
		}
		return out
	}
	return v
}
