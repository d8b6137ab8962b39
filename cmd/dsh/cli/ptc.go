package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/ptc/process"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The --executor values.
const (
	executorNative    = "native"
	executorPTC       = "ptc"
	executorPTCDirect = "ptc-direct"
)

// ptcFlags are the run_code flags.
type ptcFlags struct {
	executor    string
	lang        string
	computeMs   float64
	wallMs      float64
	maxOutput   int64
	maxParallel int
	isolation   string
	memoryMB    float64
	pool        int
	maxArgBytes int
	maxArgDepth int
	maxQueued   int
	maxSubCalls int
	// noRuns is set for a command that runs no tool call (describe,
	// schemas, replay): under process isolation no child is started ahead
	// of a run that will not come.
	noRuns bool
}

// runsCalls reports whether cmd runs tool calls: whether it accepts the
// flags of kind kindCalls.
func runsCalls(cmd *cobra.Command) bool {
	declared, ok := cmd.Annotations[usesKey]
	return ok && slices.Contains(strings.Fields(declared), string(kindCalls))
}

// The --ptc-isolation values. Process is the default: only a process
// boundary contains a program that exhausts memory or overflows the Go
// stack in a native builtin or the parser, where no interrupt reaches;
// in-process is opt-in, for programs the operator trusts.
const (
	isolationInProcess = "in-process"
	isolationProcess   = "process"
)

// maxSafeInteger is the largest integer a float64 holds exactly (2^53 − 1):
// the largest --ptc-max-output.
const maxSafeInteger = 1<<53 - 1

// number is a float64 flag value that reads and prints in plain decimal
// (600000, not 6e+05): a budget in milliseconds or MiB.
type number float64

func (n *number) String() string { return formatNumber(float64(*n)) }

func (n *number) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	var ne *strconv.NumError
	if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
		return errors.New("out of range")
	}
	if err != nil {
		return errors.New("not a number")
	}
	*n = number(v)
	return nil
}

func (n *number) Type() string { return "float" }

// formatNumber writes v in plain decimal.
func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (p *ptcFlags) add(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	d := ptc.DefaultBudgets()
	p.computeMs, p.wallMs, p.memoryMB = d.ComputeMs, d.MaxWallMs, d.MaxMemoryMB
	f.StringVar(&p.executor, "executor", executorNative, "what the model is shown and how its calls run: `EXECUTOR` is native, ptc (run_code only) or ptc-direct (run_code beside the tools)")
	f.StringVar(&p.lang, "ptc-lang", "", "the language of run_code programs: `LANG` is ts (default) or lua")
	f.Var((*number)(&p.computeMs), "ptc-compute-ms", "a run_code program's compute budget: `MS` of busy interpreter time")
	f.Var((*number)(&p.wallMs), "ptc-wall-ms", "a run_code program's wall-clock ceiling, in `MS`")
	f.Int64Var(&p.maxOutput, "ptc-max-output", int64(d.MaxOutputBytes), "the `BYTES` a run_code program may print and return in all")
	f.IntVar(&p.maxParallel, "ptc-max-parallel", ptc.DefaultMaxParallelSubCalls, "at most `N` of a program's tool calls in flight")
	f.StringVar(&p.isolation, "ptc-isolation", isolationProcess, "where run_code programs run: `MODE` is process (each run in a child process, memory-capped and killed whole) or in-process (fastest, for programs you trust)")
	f.Var((*number)(&p.memoryMB), "ptc-memory-mb", "with --ptc-isolation process, a child's memory cap in `MiB`")
	f.IntVar(&p.pool, "ptc-pool", process.DefaultPool, "with --ptc-isolation process, `N` children kept ready ahead of need (0: none)")
	f.IntVar(&p.maxArgBytes, "ptc-max-arg-bytes", ptc.DefaultMaxArgumentBytes, "a program's tool call may pass at most `BYTES` of arguments (as compact JSON)")
	f.IntVar(&p.maxArgDepth, "ptc-max-arg-depth", ptc.DefaultMaxArgumentDepth, "a program's tool call arguments may nest at most `N` levels")
	f.IntVar(&p.maxQueued, "ptc-max-queued", ptc.DefaultMaxQueuedCalls, "at most `N` of a program's tool calls may wait to start")
	f.IntVar(&p.maxSubCalls, "ptc-max-sub-calls", ptc.DefaultMaxSubCalls, "a program may make at most `N` tool calls in all")
	setKind(f, kindExecutor, "executor", "ptc-lang", "ptc-compute-ms", "ptc-wall-ms", "ptc-max-output", "ptc-max-parallel",
		"ptc-isolation", "ptc-memory-mb", "ptc-pool", "ptc-max-arg-bytes", "ptc-max-arg-depth", "ptc-max-queued", "ptc-max-sub-calls")
}

// budgets returns the budgets the flags give.
func (p *ptcFlags) budgets() ptc.Budgets {
	b := ptc.DefaultBudgets()
	b.ComputeMs, b.MaxWallMs, b.MaxOutputBytes, b.MaxMemoryMB = p.computeMs, p.wallMs, float64(p.maxOutput), p.memoryMB
	return b
}

// check validates the run_code flags: a problem is a usage error, reported
// in terms of the flag.
func (p *ptcFlags) check() error {
	switch p.executor {
	case executorNative, executorPTC, executorPTCDirect:
	default:
		return fmt.Errorf("--executor %s: the executor must be native, ptc or ptc-direct", p.executor)
	}
	switch p.lang {
	case "", "ts", "lua":
	default:
		return fmt.Errorf("--ptc-lang %s: the language must be ts or lua", p.lang)
	}
	switch p.isolation {
	case isolationInProcess, isolationProcess:
	default:
		return fmt.Errorf("--ptc-isolation %s: the isolation must be in-process or process", p.isolation)
	}
	if err := p.checkBudgets(); err != nil {
		return err
	}
	if p.pool < 0 {
		return fmt.Errorf("--ptc-pool %d: the pool must be 0 or more children", p.pool)
	}
	for _, c := range []struct {
		flag string
		n    int
	}{{"--ptc-max-parallel", p.maxParallel}, {"--ptc-max-arg-bytes", p.maxArgBytes}, {"--ptc-max-arg-depth", p.maxArgDepth}, {"--ptc-max-queued", p.maxQueued}, {"--ptc-max-sub-calls", p.maxSubCalls}} {
		if c.n < 1 {
			return fmt.Errorf("%s %d: must be a positive integer", c.flag, c.n)
		}
	}
	return nil
}

// checkBudgets checks the budgets as a run_code runtime does
// (ptc.Budgets.Validate, whose messages name the configuration's keys),
// naming the flags instead.
func (p *ptcFlags) checkBudgets() error {
	for _, b := range []struct {
		flag string
		v    float64
	}{{"--ptc-compute-ms", p.computeMs}, {"--ptc-wall-ms", p.wallMs}} {
		if math.IsNaN(b.v) || math.IsInf(b.v, 0) || b.v <= 0 {
			return fmt.Errorf("%s %s: must be a positive number of milliseconds", b.flag, formatNumber(b.v))
		}
	}
	if p.wallMs > ptc.MaxWallMsLimit {
		return fmt.Errorf("--ptc-wall-ms %s: must be at most %d milliseconds", formatNumber(p.wallMs), ptc.MaxWallMsLimit)
	}
	if p.maxOutput < ptc.MinOutputBytes {
		return fmt.Errorf("--ptc-max-output %d: must be at least %d bytes", p.maxOutput, ptc.MinOutputBytes)
	}
	if p.maxOutput > maxSafeInteger {
		return fmt.Errorf("--ptc-max-output %d: must be at most %d bytes", p.maxOutput, maxSafeInteger)
	}
	if math.IsInf(p.memoryMB, 0) {
		return fmt.Errorf("--ptc-memory-mb %s: must be a finite number of MiB", formatNumber(p.memoryMB))
	}
	if !(p.memoryMB >= process.MinMemoryMB) { // NaN too
		return fmt.Errorf("--ptc-memory-mb %s: a child needs at least %d MiB", formatNumber(p.memoryMB), process.MinMemoryMB)
	}
	return nil
}

// processPool is the process.Options.Pool the flags give: --ptc-pool, and
// none (negative) for --ptc-pool 0 or a command that runs no calls.
func (p *ptcFlags) processPool() int {
	if p.pool == 0 || p.noRuns {
		return -1
	}
	return p.pool
}

// newRuntime builds the program runtime the flags ask for.
func (s *session) newRuntime() (ptc.Runtime, error) {
	p := &s.opts.ptc
	lang := ptc.TypeScript
	if p.lang == "lua" {
		lang = ptc.Lua
	}
	if p.isolation == isolationProcess {
		return process.NewRuntime(process.Options{Language: lang, Budgets: p.budgets(), Pool: p.processPool(), Logger: s.logger})
	}
	if lang == ptc.Lua {
		return lua.NewProgramRuntime(lua.ProgramOptions{Budgets: p.budgets(), Logger: s.logger, Memory: s.memory})
	}
	return js.NewProgramRuntime(js.ProgramOptions{Budgets: p.budgets(), Logger: s.logger, Memory: s.memory})
}

// setExecutor selects the executor the flags ask for, for every agent.
func (s *session) setExecutor() error {
	p := &s.opts.ptc
	if p.executor == executorNative {
		exec, err := engine.NewNativeExecutor(s.svc, s.opts.maxParallel)
		if err != nil {
			return fmt.Errorf("--max-parallel %d: %w", s.opts.maxParallel, err)
		}
		s.svc.Global().SetExecutor(exec)
		return nil
	}
	rt, err := s.newRuntime()
	if err != nil {
		return err
	}
	exec, err := ptc.NewExecutor(s.svc, rt, ptc.Options{
		Direct:               p.executor == executorPTCDirect,
		MaxParallelSubCalls:  p.maxParallel,
		MaxParallelToolCalls: s.opts.maxParallel,
		MaxSubCalls:          p.maxSubCalls,
		MaxArgumentBytes:     p.maxArgBytes,
		MaxArgumentDepth:     p.maxArgDepth,
		MaxQueuedCalls:       p.maxQueued,
	})
	if err != nil {
		_ = rt.Close()
		return err
	}
	s.runtime = rt
	s.svc.Global().SetExecutor(exec)
	return nil
}

func newPTCCmd(o *options) *cobra.Command {
	var description string
	cmd := &cobra.Command{
		Use:   "ptc [--description TEXT] FILE|-",
		Short: "Run a run_code program",
		Long: `Ptc runs the program in FILE (or standard input, "-") as one model-direct
run_code call, with id c1, under the PTC executor whatever --executor says:
the program calls the tools of the --scripts directories through the whole
pipeline, and what it prints or returns is the result. The output is the
call's card (titled by --description, by default "Run <file name>"), or with
--json the batch result. The language is --ptc-lang, else the file's
extension (.lua is Lua, anything else TypeScript).

Exit status: 0 when the program ran (a failed program is a result), 1 for
problems the user must fix (an unreadable file), 2 for a usage error.`,
		Example: `  dsh --scripts scripts/examples/plugins ptc prog.ts
  echo 'return (await tools.word_count({text: "a b c"})).words' | dsh ptc -`,
		Args: exactArgs(1, "ptc needs FILE or -"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.ptc.executor == executorNative {
				o.ptc.executor = executorPTC
			}
			if o.ptc.lang == "" && strings.EqualFold(filepath.Ext(args[0]), ".lua") {
				o.ptc.lang = "lua"
			}
			code, label, err := readProgram(o.stdin, args[0])
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("description") {
				label = description
			}
			text, err := dsl.Marshal(dsl.NewObject(dsl.Member{Key: "code", Value: code}, dsl.Member{Key: "description", Value: label}))
			if err != nil {
				return userErrorf("%s: the program is not valid UTF-8 text", args[0])
			}
			return runCalls(cmd.Context(), o, []modelCall{{block: engine.ToolCallBlock{ID: "c1", Name: ptc.ToolName, Arguments: string(text)}}})
		},
	}
	cmd.Flags().StringVar(&description, "description", "", "the call's `TEXT` label (what the model's description argument would say)")
	return cmd
}

// readProgram reads a program file, or standard input for "-", and the
// default label of its call.
func readProgram(stdin io.Reader, path string) (code, label string, err error) {
	var b []byte
	if path == "-" {
		b, err = io.ReadAll(stdin)
		label = "Run the program from standard input"
	} else {
		b, err = os.ReadFile(path)
		label = "Run " + filepath.Base(path)
	}
	if err != nil {
		return "", "", userErrorf("%s: %v", path, pathErr(err))
	}
	return string(b), label, nil
}

func newDescribeCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "describe",
		Short: "Print what the selected executor shows the model",
		Long: `Describe loads the plugins and prints what the model is shown under
--executor: the tools it may call (under ptc, run_code alone; under
ptc-direct, the tools and run_code) and the system-prompt sections the
executor adds (tools:code-only and tools:sdk, the SDK a program is written
against). With --json: {"tools": [...], "sections": [{"id", "order",
"text"}...]}, sections sorted by order, none under native.

Exit status: 0, 1 for problems the user must fix, 2 for a usage error.`,
		Example: `  dsh --scripts scripts/examples/plugins --executor ptc describe`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return describeTools(cmd.Context(), o)
		},
	}
}

func describeTools(ctx context.Context, o *options) error {
	s, err := newSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.loadAll(ctx); err != nil {
		return err
	}
	s.printDiagnostics(o.stderr)
	scope := s.scope(s.agent)
	set, err := scope.Resolve(ctx, nil)
	if err != nil {
		return userErrorf("resolving the tool set: %v", err)
	}
	desc, err := scope.Executor().Describe(scope.Definitions(set))
	if err != nil {
		return userErrorf("describing the tools: %v", err)
	}
	if o.json {
		tools := make([]any, len(desc.Schemas))
		for i, ts := range desc.Schemas {
			tools[i] = ts.JSON()
		}
		sections := make([]any, len(desc.Sections))
		for i, sec := range desc.Sections {
			sections[i] = sec.JSON()
		}
		return writeIndented(o, dsl.NewObject(dsl.Member{Key: "tools", Value: tools}, dsl.Member{Key: "sections", Value: sections}))
	}
	w := o.stdout
	fmt.Fprintln(w, "Tools the model may call:")
	for _, ts := range desc.Schemas {
		fmt.Fprintf(w, "  %s: %s\n", ts.Name, firstLine(ts.Description))
	}
	for _, sec := range desc.Sections {
		if sec.Text == "" {
			continue
		}
		fmt.Fprintf(w, "\n--- system prompt section %s (order %d) ---\n%s\n", sec.ID, sec.Order, sec.Text)
	}
	return nil
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// newPTCChildCmd is the hidden command a process-isolated run_code child
// runs (process.ChildCommand): it serves the parent's programs on its
// standard input and output until the input ends.
func newPTCChildCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:    process.ChildCommand,
		Short:  "Serve run_code programs to a parent dsh (internal)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := process.Serve(cmd.Context(), o.stdin, o.stdout, openChildRuntime); err != nil {
				return troublef("%s: %v", process.ChildCommand, err)
			}
			return nil
		},
	}
}

// openChildRuntime builds a child's in-process runtime: the language the
// parent asks for, with a heap guard at the child's cap, so that a program
// growing its heap ends as worker-exit ("worker exceeded its memory limit
// (<n> MiB)") even where the parent has no watchdog.
//
// The child is its own guard: its Go stack is capped at childMaxStack and
// a JS runtime is built contained (js.ProgramOptions.ContainedByProcess).
func openChildRuntime(cfg process.ChildConfig) (ptc.Runtime, error) {
	debug.SetMaxStack(childMaxStack)
	guard := scripting.NewMemoryGuard(int64(cfg.Budgets.MaxMemoryMB*scripting.MiB), scripting.MemoryGuardOptions{})
	var rt ptc.Runtime
	var err error
	warmup := "return 1"
	if cfg.Language == ptc.Lua {
		rt, err = lua.NewProgramRuntime(lua.ProgramOptions{Budgets: cfg.Budgets, Memory: guard, WarmStates: 1})
	} else {
		rt, err = js.NewProgramRuntime(js.ProgramOptions{Budgets: cfg.Budgets, Memory: guard, WarmRuntimes: 1,
			ContainedByProcess: true})
		warmup = "const x: number = 1; return x"
	}
	if err != nil {
		return nil, err
	}
	// One run before the child says it is ready, so that the first program
	// it is given does not pay for what every first run pays once (esbuild
	// parsing its runtime library, the interpreter's first allocations).
	if _, err := rt.Run(context.Background(), ptc.Request{Program: warmup}); err != nil {
		_ = rt.Close()
		return nil, err
	}
	return rt, nil
}
