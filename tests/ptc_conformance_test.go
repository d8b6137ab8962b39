package tests

// The run_code conformance cases (testdata/ptc/*.txtar): the numbered
// behaviours of the run_code spec (§6) through the whole pipeline, as one table for
// every program language. Each case loads its plugins (tools and policies,
// in JavaScript, with the real host, through the loader) into a fresh
// engine, gives the agents the PTC executor (ptc.NewExecutor) over the
// language's program runtime (js.NewProgramRuntime for TypeScript,
// lua.NewProgramRuntime for Lua), in-process and under process isolation
// (process.NewRuntime, children of a dsh built from this tree), and makes
// model-direct calls with engine.Service.Call.
//
// A case file is a txtar archive. Its comment says what the case shows and
// which §6 items it covers. Its files are:
//
//	*.js, *.mjs, lib/...   the plugins: the engine's tools and policies. They
//	                       are shared by every program language, so they are
//	                       JavaScript only.
//	program.ts             the program "run" runs, in each language: the
//	program.lua            same program, so that one set of expectations
//	                       holds for both (NAME.ts and NAME.lua for "run
//	                       -program NAME")
//	calls                  the script below
//
// The calls script has lines:
//
//	# a comment
//
// setup, before the first step:
//
//	executor KIND [AGENT]  the executor of AGENT's scope: ptc (run_code only),
//	                       direct (run_code beside the tools) or native.
//	                       AGENT is an agent id (default main) or global (the
//	                       deployment default). Several lines are allowed;
//	                       without any, the case is "executor ptc main".
//	parent CHILD PARENT    declares an agent's parent
//	max-parallel N         the executor's maxParallelSubCalls
//	compute-ms N           the runtime's budgets; dsh's defaults
//	wall-ms N              otherwise
//	max-output N
//	skip REASON            skip the case: the implementation deviates from
//	                       the spec (REASON says how; the case keeps the
//	                       spec's expectations)
//	skip.ts REASON         skip the case in one language: it has no
//	skip.lua REASON        equivalent there (REASON says why), or that
//	                       language's runtime deviates from the spec (REASON
//	                       starts with "deviation:")
//	skip-process REASON    skip the case under process isolation (every case
//	                       also runs with its runtime in a child dsh): a
//	                       resource runs out differently there (§0.4)
//
// steps, each numbered from 1 in the case:
//
//	run [-agent ID|-no-agent] [-id ID] [-program NAME] [-description TEXT]
//	    [-cancelled] [-cancel-after DUR] [-cancel-on STAGE]
//	                       one model-direct run_code call of program.<lang>
//	                       (NAME.<lang>) as agent ID (default main; -no-agent:
//	                       none), with call id ID (default call-<step>) and
//	                       the description TEXT (a JSON string; default
//	                       "Run the case's program"). The caller's context
//	                       is cancelled before the call, after DUR, or when
//	                       a plugin traces STAGE; its cause is "user-cancel".
//	call [-agent ID|-no-agent] [-id ID] [-cancelled] TOOL [ARGS]
//	                       a model-direct call of any tool (ARGS is JSON, {}
//	                       when absent)
//	run, call: -caller SUBJECT,CLIENT[,SCOPE...]
//	                       the call runs for a verified caller
//	                       (engine.WithCaller, as a served request's token
//	                       sets it; none without the flag)
//	describe [-agent ID|-no-agent]
//	                       what the executor of the agent's scope shows the
//	                       model for its visible tools
//	present [-agent ID|-no-agent] TOOL ARGS
//	                       the card of a call of TOOL (the definition the
//	                       agent would run) with ARGS
//
// expectations, after their step; a verb with the suffix .ts or .lua holds
// for that language only, where the languages legitimately differ (say why
// in a comment: console's inspect rendering against print's tabs, typeof
// against type(), each interpreter's own exception texts):
//
//	want RESULT            run, call: the exact result, dsl.Marshal(r.JSON()),
//	                       <uuid> standing for any fresh message id;
//	                       present: {"call": view, "presentsResults": bool}
//	contains TEXT          run, call: the result's JSON text contains TEXT
//	                       (where an exact result is impossible); several
//	                       lines allowed. A run or call needs a want or a
//	                       contains for each language that runs it.
//	trace [STAGE...]       run, call: the stages the plugins traced during
//	                       the step, in order (through the host module
//	                       "dsh/trace": stage(name))
//	event TYPE PAYLOAD     run, call: a durable event the step appended
//	                       (tool/ptc-dispatch-start or tool/ptc-dispatch,
//	                       PAYLOAD its exact data). When a step has event
//	                       lines it appends exactly those: start events in
//	                       the order listed, each settle event after its
//	                       start (settle events are appended concurrently,
//	                       so their order among themselves is free).
//	events none            run, call: the step appends no durable event
//	tools [NAME...]        describe: the names the model may call, in order
//	sections [ID:ORDER...] describe: the prompt sections, in order
//	section ID contains TEXT
//	section ID lacks TEXT
//	section ID empty       describe: a section's text
//	description TOOL contains TEXT
//	description TOOL lacks TEXT
//	                       describe: a presented tool's description
//	parameters TOOL JSON   describe: a presented tool's exact parameters
//
// Every step's call passes a session log (engine.Input.Log) that records
// the appended events; the events carry the call's agent.
//
// The §6 items not in the table, because it cannot express them (they need
// Go hooks, another runtime or a construction error), and where they are
// covered:
//
//	6, 7, 45     a missing runtime, a language without a flavor: NewExecutor
//	             refuses both (ptc/executor_test.go,
//	             TestNewExecutorRefusesWhatCannotRunRunCode)
//	15           run_code is reserved: engine/registry_test.go ("case 9")
//	21–34        the TypeScript SDK: ptc/sdk_ts_test.go
//	66           a runtime that rejects after starting a sub-call:
//	             ptc/executor_spec_test.go (TestARuntimeThatFailsAfterStartingASubCall)
//	68           settle events never become model messages (the engine has
//	             no message derivation; the batch result is what the next
//	             request is built from): ptc/executor_spec_test.go
//	             (TestSettleEventsNeverBecomeModelMessages)
//	81           pending settle events hold back later starts:
//	             ptc/scheduler_test.go (TestPendingSettleEventsHoldBackLaterStarts)
//	82           a blocked save does not delay the program (no spill policy
//	             yet: a tools/ptc-dispatch-log listener stands in for it):
//	             ptc/executor_spec_test.go
//	             (TestABlockedDispatchLogSaveDoesNotDelayTheProgram)
//	83, 86, 87, 99, 101, 111, 120
//	             the runtime seam alone: ptc/ptctest, run by
//	             scripting/js/program_conformance_test.go and
//	             scripting/lua/program_conformance_test.go (111: a
//	             JavaScript tool's value cannot be a function, so only the
//	             seam can resolve a binding with one)
//	116–118      binding and budget validation: ptc/names_test.go,
//	             ptc/limits_test.go
//	102          process isolation: not available yet (issue 16); the
//	             in-process memory guard (huge Lua tables): the table has no
//	             memory setup, so scripting/lua/program_test.go covers it
//
// The budgets of compute-ms and wall-ms, and the delay of -cancel-after,
// are scaled by the tests' time scale (internal/testtime), and so is each
// "Nms" of a want or contains whose N is one of those budgets (see budgets).

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/testtime"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/process"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// ptcLanguages are the program languages every case runs in.
var ptcLanguages = []ptcLanguage{
	{"ts", func(b ptc.Budgets) (ptc.Runtime, error) {
		return js.NewProgramRuntime(js.ProgramOptions{Budgets: b})
	}},
	{"lua", func(b ptc.Budgets) (ptc.Runtime, error) {
		return lua.NewProgramRuntime(lua.ProgramOptions{Budgets: b})
	}},
}

// ptcLanguageOf is the runtime language of a program extension.
func ptcLanguageOf(ext string) ptc.Language {
	if ext == "lua" {
		return ptc.Lua
	}
	return ptc.TypeScript
}

// ptcLanguage is a program language and how to make its runtime.
type ptcLanguage struct {
	name    string // the programs' extension, without the dot
	runtime func(b ptc.Budgets) (ptc.Runtime, error)
}

// ptcGrace is the plugin hosts' grace after a call's cancellation.
const ptcGrace = 2 * time.Second

// ptcCauseText is the cause a step's cancellation gives its context.
const ptcCauseText = "user-cancel"

// ptcDefaultDescription is a run's description argument unless -description.
const ptcDefaultDescription = "Run the case's program"

// ptcCase is one case file.
type ptcCase struct {
	file      string
	name      string
	plugins   map[string]string            // path → text
	programs  map[string]map[string]string // language → program name → text
	executors []ptcExecutorSetup
	parents   [][2]string
	budgets   ptc.Budgets
	parallel  int
	scaled    *budgets          // compute-ms and wall-ms, as written and scaled
	skip      map[string]string // language ("" for both) → why
	// skipProcess says why the case does not run under process isolation
	// (a "skip-process" line); "" runs it there too.
	skipProcess string
	steps       []*ptcStep
}

// ptcExecutorSetup is one executor line.
type ptcExecutorSetup struct {
	kind  string // ptc, direct, native
	agent string // an agent id, or "" for the deployment default
}

// ptcStep is one step of a case and what must come of it.
type ptcStep struct {
	line        int
	verb        string // run, call, describe, present
	agent       string
	noAgent     bool
	id          string
	program     string
	description string
	cancelled   bool
	cancelAfter time.Duration
	cancelOn    string
	caller      *engine.Caller
	tool        string
	args        string
	expect      []ptcExpect
}

// ptcExpect is one expectation line.
type ptcExpect struct {
	line int
	verb string // want, contains, trace, event, events, tools, sections, section, description, parameters
	lang string // "" for every language
	arg  string
}

// TestPTCConformance runs every case of testdata/ptc in each language.
func TestPTCConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "ptc", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no run_code conformance cases")
	}
	for _, f := range files {
		c, err := readPTCCase(f)
		if err != nil {
			t.Error(err)
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each case has its own engine and runtimes
			for _, lang := range ptcLanguages {
				t.Run(lang.name, func(t *testing.T) {
					t.Run("in-process", func(t *testing.T) {
						c.run(t, lang.name, lang.runtime)
					})
					t.Run("process", func(t *testing.T) {
						if testing.Short() {
							t.Skip("starts child processes")
						}
						if why := c.skipProcess; why != "" {
							t.Skip(why)
						}
						bin := buildDsh(t)
						c.run(t, lang.name, func(b ptc.Budgets) (ptc.Runtime, error) {
							return process.NewRuntime(process.Options{Language: ptcLanguageOf(lang.name), Budgets: b, Path: bin, Pool: 1})
						})
					})
				})
			}
		})
	}
}

// readPTCCase parses a case file; its name is the file's, without .txtar.
func readPTCCase(file string) (*ptcCase, error) {
	a, err := txtar.ParseFile(file)
	if err != nil {
		return nil, err
	}
	c := &ptcCase{
		file:     file,
		name:     strings.TrimSuffix(filepath.Base(file), ".txtar"),
		plugins:  map[string]string{},
		programs: map[string]map[string]string{},
		budgets:  ptc.DefaultBudgets(),
		scaled:   newBudgets(testtime.Scale()),
		skip:     map[string]string{},
	}
	var script []byte
	for _, f := range a.Files {
		ext := path.Ext(f.Name)
		switch {
		case f.Name == "calls":
			script = f.Data
		case ext == ".js" || ext == ".mjs" || strings.HasPrefix(f.Name, "lib/"):
			c.plugins[f.Name] = string(f.Data)
		case (ext == ".ts" || ext == ".lua") && !strings.Contains(f.Name, "/"):
			lang := ext[1:]
			if c.programs[lang] == nil {
				c.programs[lang] = map[string]string{}
			}
			c.programs[lang][strings.TrimSuffix(f.Name, ext)] = string(f.Data)
		default:
			return nil, fmt.Errorf("%s: %s: neither a plugin (*.js), a program (*.ts, *.lua) nor calls", file, f.Name)
		}
	}
	if err := c.parseCalls(script); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(c.steps) == 0 {
		return nil, fmt.Errorf("%s: no steps", file)
	}
	if len(c.executors) == 0 {
		c.executors = []ptcExecutorSetup{{kind: "ptc", agent: "main"}}
	}
	return c, nil
}

// parseCalls reads the calls script.
func (c *ptcCase) parseCalls(script []byte) error {
	sc := bufio.NewScanner(strings.NewReader(string(script)))
	sc.Buffer(nil, 1<<20)
	line := 0
	var cur *ptcStep
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
		base, lang, _ := strings.Cut(verb, ".")
		if lang != "" && !slices.ContainsFunc(ptcLanguages, func(l ptcLanguage) bool { return l.name == lang }) {
			return bad("unknown language %q", lang)
		}
		switch base {
		case "executor", "parent", "max-parallel", "compute-ms", "wall-ms", "max-output", "skip", "skip-process":
			if cur != nil {
				return bad("%s must come before the first step", verb)
			}
			if lang != "" && base != "skip" && base != "skip-process" {
				return bad("%s has no language variants", base)
			}
			if err := c.setup(base, lang, rest); err != nil {
				return bad("%v", err)
			}
		case "run", "call", "describe", "present":
			if lang != "" {
				return bad("%s has no language variants", base)
			}
			if err := c.checkStep(cur); err != nil {
				return err
			}
			step, err := parseStep(base, rest)
			if err != nil {
				return bad("%v", err)
			}
			step.line = line
			cur = step
			c.steps = append(c.steps, step)
		case "want", "contains", "trace", "event", "events", "tools", "sections", "section", "description", "parameters":
			if cur == nil {
				return bad("%s before any step", verb)
			}
			if err := checkExpect(cur.verb, base, rest); err != nil {
				return bad("%v", err)
			}
			cur.expect = append(cur.expect, ptcExpect{line: line, verb: base, lang: lang, arg: rest})
		default:
			return bad("unknown verb %q", verb)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return c.checkStep(cur)
}

// checkStep checks that a step has the expectations its verb needs.
func (c *ptcCase) checkStep(s *ptcStep) error {
	if s == nil {
		return nil
	}
	if len(s.expect) == 0 {
		return fmt.Errorf("calls:%d: the %s has no expectation", s.line, s.verb)
	}
	if s.verb == "present" && !slices.ContainsFunc(s.expect, func(e ptcExpect) bool { return e.verb == "want" }) {
		return fmt.Errorf("calls:%d: the present has no want", s.line)
	}
	return nil
}

// setup reads a line that configures the whole case.
func (c *ptcCase) setup(verb, lang, rest string) error {
	number := func() (float64, error) {
		n, err := strconv.ParseFloat(rest, 64)
		if err != nil {
			return 0, fmt.Errorf("usage: %s N", verb)
		}
		return n, nil
	}
	// budget reads a budget in whole milliseconds, scaled.
	budget := func() (float64, error) {
		n, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("usage: %s N (a positive whole number of milliseconds)", verb)
		}
		return float64(c.scaled.add(n)), nil
	}
	var err error
	switch verb {
	case "executor":
		kind, agent, _ := strings.Cut(rest, " ")
		agent = strings.TrimSpace(agent)
		switch agent {
		case "":
			agent = "main"
		case "global":
			agent = ""
		}
		if kind != "ptc" && kind != "direct" && kind != "native" {
			return errors.New("usage: executor ptc|direct|native [AGENT|global]")
		}
		c.executors = append(c.executors, ptcExecutorSetup{kind: kind, agent: agent})
	case "parent":
		child, parent, ok := strings.Cut(rest, " ")
		if !ok {
			return errors.New("usage: parent CHILD PARENT")
		}
		c.parents = append(c.parents, [2]string{child, strings.TrimSpace(parent)})
	case "max-parallel":
		var n float64
		n, err = number()
		c.parallel = int(n)
	case "compute-ms":
		c.budgets.ComputeMs, err = budget()
	case "wall-ms":
		c.budgets.MaxWallMs, err = budget()
	case "max-output":
		c.budgets.MaxOutputBytes, err = number()
	case "skip":
		if rest == "" {
			return fmt.Errorf("usage: %s REASON", verb)
		}
		c.skip[lang] = rest
	case "skip-process":
		if rest == "" {
			return fmt.Errorf("usage: %s REASON", verb)
		}
		c.skipProcess = rest
	}
	return err
}

// parseStep reads a step line's flags and operands.
func parseStep(verb, rest string) (*ptcStep, error) {
	s := &ptcStep{verb: verb, description: ptcDefaultDescription, program: "program"}
	usage := map[string]string{
		"run":      "run [-agent ID|-no-agent] [-id ID] [-program NAME] [-description TEXT] [-caller SUBJECT,CLIENT[,SCOPE...]] [-cancelled] [-cancel-after DUR] [-cancel-on STAGE]",
		"call":     "call [-agent ID|-no-agent] [-id ID] [-caller SUBJECT,CLIENT[,SCOPE...]] [-cancelled] TOOL [ARGS]",
		"describe": "describe [-agent ID|-no-agent]",
		"present":  "present [-agent ID|-no-agent] TOOL ARGS",
	}[verb]
	allowed := map[string][]string{
		"run":      {"-agent", "-no-agent", "-id", "-program", "-description", "-caller", "-cancelled", "-cancel-after", "-cancel-on"},
		"call":     {"-agent", "-no-agent", "-id", "-caller", "-cancelled"},
		"describe": {"-agent", "-no-agent"},
		"present":  {"-agent", "-no-agent"},
	}[verb]
	word := func() string {
		w, after, _ := strings.Cut(rest, " ")
		rest = strings.TrimSpace(after)
		return w
	}
	for strings.HasPrefix(rest, "-") {
		flag := word()
		if !slices.Contains(allowed, flag) {
			return nil, fmt.Errorf("%s: unknown flag %s; usage: %s", verb, flag, usage)
		}
		switch flag {
		case "-no-agent":
			s.noAgent = true
		case "-cancelled":
			s.cancelled = true
		case "-description":
			dec := json.NewDecoder(strings.NewReader(rest))
			if err := dec.Decode(&s.description); err != nil {
				return nil, fmt.Errorf("-description takes a JSON string: %v", err)
			}
			rest = strings.TrimSpace(rest[dec.InputOffset():])
		default:
			v := word()
			if v == "" {
				return nil, fmt.Errorf("%s needs a value; usage: %s", flag, usage)
			}
			switch flag {
			case "-agent":
				s.agent = v
			case "-id":
				s.id = v
			case "-program":
				s.program = v
			case "-cancel-on":
				s.cancelOn = v
			case "-caller":
				f := strings.Split(v, ",")
				if len(f) < 2 {
					return nil, fmt.Errorf("-caller takes SUBJECT,CLIENT[,SCOPE...]; usage: %s", usage)
				}
				s.caller = &engine.Caller{Subject: f[0], ClientID: f[1], Scopes: f[2:]}
			case "-cancel-after":
				d, err := time.ParseDuration(v)
				if err != nil {
					return nil, err
				}
				s.cancelAfter = testtime.D(d)
			}
		}
	}
	switch verb {
	case "run", "describe":
		if rest != "" {
			return nil, fmt.Errorf("usage: %s", usage)
		}
	case "call", "present":
		s.tool = word()
		s.args = rest
		if s.tool == "" {
			return nil, fmt.Errorf("usage: %s", usage)
		}
		if s.args == "" {
			s.args = "{}"
		}
		if _, err := dsl.Unmarshal([]byte(s.args)); err != nil {
			return nil, fmt.Errorf("arguments: %v", err)
		}
	}
	return s, nil
}

// checkExpect checks that an expectation fits its step and is well formed.
func checkExpect(step, verb, arg string) error {
	fits := map[string][]string{
		"run":      {"want", "contains", "trace", "event", "events"},
		"call":     {"want", "contains", "trace", "event", "events"},
		"describe": {"tools", "sections", "section", "description", "parameters"},
		"present":  {"want"},
	}[step]
	if !slices.Contains(fits, verb) {
		return fmt.Errorf("%s does not apply to a %s", verb, step)
	}
	switch verb {
	case "want", "contains":
		if arg == "" {
			return fmt.Errorf("usage: %s TEXT", verb)
		}
	case "event":
		typ, payload, _ := strings.Cut(arg, " ")
		if typ != engine.EventPTCDispatchStart && typ != engine.EventPTCDispatchSettle {
			return fmt.Errorf("event %s: not a run_code event type", typ)
		}
		if _, err := dsl.Unmarshal([]byte(payload)); err != nil {
			return fmt.Errorf("event payload: %v", err)
		}
	case "events":
		if arg != "none" {
			return errors.New("usage: events none")
		}
	case "section":
		id, what, _ := strings.Cut(arg, " ")
		op, _, _ := strings.Cut(what, " ")
		if id == "" || (op != "contains" && op != "lacks" && what != "empty") {
			return errors.New("usage: section ID contains|lacks TEXT, or section ID empty")
		}
	case "description":
		_, what, _ := strings.Cut(arg, " ")
		op, text, _ := strings.Cut(what, " ")
		if (op != "contains" && op != "lacks") || text == "" {
			return errors.New("usage: description TOOL contains|lacks TEXT")
		}
	case "parameters":
		_, j, _ := strings.Cut(arg, " ")
		if _, err := dsl.Unmarshal([]byte(j)); err != nil {
			return fmt.Errorf("parameters: %v", err)
		}
	}
	return nil
}

// ptcEnv is one case's engine in one language.
type ptcEnv struct {
	svc    *engine.Service
	agents *scripting.Agents
	trace  *ptcTrace
	log    *ptcLog
}

// run runs the case in one language.
func (c *ptcCase) run(t *testing.T, lang string, newRuntime func(ptc.Budgets) (ptc.Runtime, error)) {
	for _, l := range []string{"", lang} {
		if why, ok := c.skip[l]; ok {
			t.Skipf("%s: %s", c.file, why)
		}
	}
	for _, s := range c.steps {
		if s.verb == "run" && c.programs[lang][s.program] == "" {
			t.Fatalf("%s:calls:%d: no %s.%s (write it, or skip.%s REASON)", c.file, s.line, s.program, lang, lang)
		}
	}
	env := c.newEnv(t, newRuntime)
	for i, s := range c.steps {
		where := fmt.Sprintf("%s:calls:%d", c.file, s.line)
		var agent *engine.Agent
		if !s.noAgent {
			id := s.agent
			if id == "" {
				id = "main"
			}
			agent = env.agents.Agent(id)
		}
		switch s.verb {
		case "run", "call":
			r := c.call(t, env, lang, i+1, s, agent)
			c.checkCall(t, env, where, lang, s, agent, r)
		case "describe":
			c.checkDescribe(t, env, where, lang, s, agent)
		case "present":
			c.checkPresent(t, env, where, lang, s, agent)
		}
	}
}

// newEnv builds the case's engine: its plugins loaded, its executors set.
func (c *ptcCase) newEnv(t *testing.T, newRuntime func(ptc.Budgets) (ptc.Runtime, error)) *ptcEnv {
	root := t.TempDir()
	for rel, text := range c.plugins {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := &ptcEnv{svc: engine.New(), agents: scripting.NewAgents(), trace: &ptcTrace{}, log: &ptcLog{}}
	for _, p := range c.parents {
		env.agents.SetParent(p[0], p[1])
	}
	rt, err := newRuntime(c.budgets)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, x := range c.executors {
		var exec engine.Executor
		if x.kind == "native" {
			exec, err = engine.NewNativeExecutor(env.svc, 10)
		} else {
			exec, err = ptc.NewExecutor(env.svc, rt, ptc.Options{Direct: x.kind == "direct", MaxParallelSubCalls: c.parallel})
		}
		if err != nil {
			t.Fatal(err)
		}
		var agent *engine.Agent
		if x.agent != "" {
			agent = env.agents.Agent(x.agent)
		}
		env.svc.Scope(agent).SetExecutor(exec)
	}
	if len(c.plugins) > 0 {
		loader := &scripting.Loader{
			Service: env.svc,
			Hosts: []scripting.Host{
				// A body gets ptcGrace to end once its call is cancelled:
				// long, so that a loaded machine (make test runs packages at
				// once, under -race) still sees the abort handled by the
				// script rather than the host's interrupt.
				&js.Host{Grace: ptcGrace, Modules: []scripting.Module{env.trace.module()}},
				&lua.Host{Grace: ptcGrace, Modules: []scripting.Module{env.trace.module()}},
			},
			Agents:      env.agents.Agent,
			LoadTimeout: 30 * time.Second, // no case is about it: generous for a loaded machine
		}
		loadAll(t, loader, root, c.file+": ")
	}
	return env
}

// call makes a run or call step's model-direct call.
func (c *ptcCase) call(t *testing.T, env *ptcEnv, lang string, n int, s *ptcStep, agent *engine.Agent) *engine.Result {
	t.Helper()
	id := s.id
	if id == "" {
		id = "call-" + strconv.Itoa(n)
	}
	name, args := s.tool, any(nil)
	if s.verb == "run" {
		name = ptc.ToolName
		args = dsl.NewObject(dsl.Member{Key: "code", Value: c.programs[lang][s.program]}, dsl.Member{Key: "description", Value: s.description})
	} else {
		args, _ = dsl.Unmarshal([]byte(s.args)) // checked when parsed
	}
	ctx, cancel := context.WithCancelCause(engine.WithCaller(context.Background(), s.caller))
	defer cancel(nil)
	cause := errors.New(ptcCauseText)
	if s.cancelled {
		cancel(cause)
	}
	if s.cancelAfter > 0 {
		stop := time.AfterFunc(s.cancelAfter, func() { cancel(cause) })
		defer stop.Stop()
	}
	env.trace.arm(s.cancelOn, func() { cancel(cause) })
	defer env.trace.arm("", nil)
	return env.svc.Call(ctx, engine.Input{CallID: id, Name: name, Arguments: args, Agent: agent, Log: env.log})
}

// checkCall checks a run or call step's result, trace and events.
func (c *ptcCase) checkCall(t *testing.T, env *ptcEnv, where, lang string, s *ptcStep, agent *engine.Agent, r *engine.Result) {
	t.Helper()
	got := confUUID.ReplaceAllString(confMarshal(t, r.JSON()), `"<uuid>"`)
	stages := env.trace.take()
	events := env.log.take()
	checked := false
	var wantEvents []ptcExpect
	for _, e := range s.expect {
		if e.lang != "" && e.lang != lang {
			continue
		}
		switch e.verb {
		case "want":
			checked = true
			if want := c.scaled.text(e.arg); got != want {
				t.Errorf("%s: %s\ngot  %s\nwant %s", where, s.what(), got, want)
			}
		case "contains":
			checked = true
			if want := c.scaled.text(e.arg); !strings.Contains(got, want) {
				t.Errorf("%s: %s\ngot      %s\nlacks    %s", where, s.what(), got, want)
			}
		case "trace":
			if w := strings.Fields(e.arg); !slices.Equal(stages, w) {
				t.Errorf("%s: %s\ntrace %q\nwant  %q", where, s.what(), strings.Join(stages, " "), e.arg)
			}
		case "event", "events":
			wantEvents = append(wantEvents, e)
		}
	}
	if !checked {
		t.Errorf("%s: %s: no want or contains for %s", where, s.what(), lang)
	}
	for _, ev := range events {
		if ev.Agent != agent {
			t.Errorf("%s: %s: event %s carries agent %v, want the call's %v", where, s.what(), ev.Type, ev.Agent, agent)
		}
	}
	if len(wantEvents) > 0 {
		checkPTCEvents(t, where+": "+s.what(), events, wantEvents)
	}
}

// checkPTCEvents checks the events a step appended against its event lines
// (or its "events none").
func checkPTCEvents(t *testing.T, where string, got []engine.Event, want []ptcExpect) {
	t.Helper()
	lines := make([]string, len(got))
	for i, ev := range got {
		lines[i] = ev.Type + " " + confMarshal(t, ev.Data)
	}
	if want[0].verb == "events" {
		if len(want) > 1 {
			t.Errorf("%s: events none beside event lines", where)
		}
		if len(got) > 0 {
			t.Errorf("%s: events appended, want none:\n%s", where, strings.Join(lines, "\n"))
		}
		return
	}
	var wantLines []string
	for _, e := range want {
		if e.verb == "events" {
			t.Errorf("%s: events none beside event lines", where)
			return
		}
		typ, payload, _ := strings.Cut(e.arg, " ")
		wantLines = append(wantLines, typ+" "+payload)
	}
	fail := func(why string) {
		t.Errorf("%s: %s\nappended:\n%s\nwant:\n%s", where, why, strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
	if a, b := slices.Sorted(slices.Values(lines)), slices.Sorted(slices.Values(wantLines)); !slices.Equal(a, b) {
		fail("the events differ")
		return
	}
	starts := func(ls []string) []string {
		var out []string
		for _, l := range ls {
			if strings.HasPrefix(l, engine.EventPTCDispatchStart+" ") {
				out = append(out, l)
			}
		}
		return out
	}
	if !slices.Equal(starts(lines), starts(wantLines)) {
		fail("the start events are out of order")
	}
	started := map[string]bool{}
	for _, ev := range got {
		id, _ := ev.Data.Get("subCallId")
		sub, _ := id.(string)
		if ev.Type == engine.EventPTCDispatchStart {
			started[sub] = true
		} else if !started[sub] {
			fail("the settle event of " + sub + " precedes its start")
		}
	}
}

// checkDescribe checks what the executor of the agent's scope shows.
func (c *ptcCase) checkDescribe(t *testing.T, env *ptcEnv, where, lang string, s *ptcStep, agent *engine.Agent) {
	t.Helper()
	scope := env.svc.Scope(agent)
	d, err := scope.Executor().Describe(scope.Definitions(nil))
	if err != nil {
		t.Errorf("%s: describe: %v", where, err)
		return
	}
	section := func(id string) (engine.Section, bool) {
		for _, sec := range d.Sections {
			if sec.ID == id {
				return sec, true
			}
		}
		return engine.Section{}, false
	}
	schema := func(name string) (engine.ToolSchema, bool) {
		for _, ts := range d.Schemas {
			if ts.Name == name {
				return ts, true
			}
		}
		return engine.ToolSchema{}, false
	}
	for _, e := range s.expect {
		if e.lang != "" && e.lang != lang {
			continue
		}
		at := fmt.Sprintf("%s:%d", c.file, e.line)
		switch e.verb {
		case "tools":
			if w := strings.Fields(e.arg); !slices.Equal(d.Names, w) {
				t.Errorf("%s: tools %q, want %q", at, d.Names, w)
			}
		case "sections":
			var g []string
			for _, sec := range d.Sections {
				g = append(g, sec.ID+":"+strconv.Itoa(sec.Order))
			}
			if w := strings.Fields(e.arg); !slices.Equal(g, w) {
				t.Errorf("%s: sections %q, want %q", at, g, w)
			}
		case "section":
			id, what, _ := strings.Cut(e.arg, " ")
			op, text, _ := strings.Cut(what, " ")
			sec, ok := section(id)
			switch {
			case !ok:
				t.Errorf("%s: no section %s", at, id)
			case what == "empty" && sec.Text != "":
				t.Errorf("%s: section %s is not empty:\n%s", at, id, sec.Text)
			case op == "contains" && !strings.Contains(sec.Text, text):
				t.Errorf("%s: section %s lacks %q:\n%s", at, id, text, sec.Text)
			case op == "lacks" && strings.Contains(sec.Text, text):
				t.Errorf("%s: section %s contains %q:\n%s", at, id, text, sec.Text)
			}
		case "description":
			name, what, _ := strings.Cut(e.arg, " ")
			op, text, _ := strings.Cut(what, " ")
			ts, ok := schema(name)
			switch {
			case !ok:
				t.Errorf("%s: %s is not presented", at, name)
			case op == "contains" && !strings.Contains(ts.Description, text):
				t.Errorf("%s: %s's description lacks %q:\n%s", at, name, text, ts.Description)
			case op == "lacks" && strings.Contains(ts.Description, text):
				t.Errorf("%s: %s's description contains %q:\n%s", at, name, text, ts.Description)
			}
		case "parameters":
			name, want, _ := strings.Cut(e.arg, " ")
			ts, ok := schema(name)
			if !ok {
				t.Errorf("%s: %s is not presented", at, name)
				continue
			}
			if got := confMarshal(t, ts.Parameters); got != want {
				t.Errorf("%s: %s's parameters\ngot  %s\nwant %s", at, name, got, want)
			}
		}
	}
}

// checkPresent checks the card of a call of the definition the agent would run.
func (c *ptcCase) checkPresent(t *testing.T, env *ptcEnv, where, lang string, s *ptcStep, agent *engine.Agent) {
	t.Helper()
	def := env.svc.Scope(agent).Executable(s.tool, nil)
	if def == nil {
		t.Errorf("%s: %s is not executable for the agent", where, s.tool)
		return
	}
	args, _ := dsl.Unmarshal([]byte(s.args)) // checked when parsed
	var view any
	if def.PresentCall != nil {
		if v := def.PresentCall(args); v != nil {
			view = v.JSON()
		}
	}
	got := confMarshal(t, dsl.NewObject(dsl.Member{Key: "call", Value: view}, dsl.Member{Key: "presentsResults", Value: def.PresentResult != nil}))
	for _, e := range s.expect {
		if e.verb == "want" && (e.lang == "" || e.lang == lang) && got != e.arg {
			t.Errorf("%s: %s\ngot  %s\nwant %s", where, s.what(), got, e.arg)
		}
	}
}

// what names a step in failures.
func (s *ptcStep) what() string {
	switch s.verb {
	case "run":
		return "run " + s.program
	case "call", "present":
		return s.verb + " " + s.tool + " " + s.args
	}
	return s.verb
}

// ptcTrace records what plugins report through dsh/trace, and cancels a
// step's context when the stage it waits for is traced.
type ptcTrace struct {
	mu       sync.Mutex
	stages   []string
	cancelOn string
	cancel   func()
}

// module is the dsh/trace host module: stage(name).
func (tr *ptcTrace) module() scripting.Module {
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
			tr.stages = append(tr.stages, name)
			cancel := tr.cancel
			if name != tr.cancelOn {
				cancel = nil
			}
			tr.mu.Unlock()
			if cancel != nil {
				cancel()
			}
			return nil, nil
		},
	}}
}

// arm makes the stage named stage cancel a step (none for "").
func (tr *ptcTrace) arm(stage string, cancel func()) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.cancelOn, tr.cancel = stage, cancel
	if stage == "" {
		tr.cancel = nil
	}
}

// take returns the stages recorded since the last take, and forgets them.
func (tr *ptcTrace) take() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	s := tr.stages
	tr.stages = nil
	return s
}

// ptcLog is a session log that keeps the events appended to it.
type ptcLog struct {
	mu     sync.Mutex
	events []engine.Event
}

func (l *ptcLog) Append(_ context.Context, e engine.Event) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
	return "e" + strconv.Itoa(len(l.events)), nil
}

// take returns the events appended since the last take, and forgets them.
func (l *ptcLog) take() []engine.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.events
	l.events = nil
	return e
}
