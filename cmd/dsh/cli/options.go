package cli

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
)

// The --approve modes.
const (
	approvePrompt = "prompt"
	approveAllow  = "allow"
	approveDeny   = "deny"
	approveNone   = "none"
)

// defaultScripts is the scripts directory used when --scripts is not given
// and it exists.
const defaultScripts = "scripts"

// defaultMaxParallel is the native executor's cap on bodies in flight.
const defaultMaxParallel = 10

// defaultApprovalTimeout is --approval-timeout's default: how long a
// question (an approval, a tool's elicitation) waits for its answer.
const defaultApprovalTimeout = 10 * time.Minute

// defaultMemoryLimit is --memory-limit's default, in MiB.
const defaultMemoryLimit = 1024

// options are the global flags, shared by every command that runs the
// engine.
type options struct {
	// logHandler, when set, wraps the handler of the session's logger
	// (serve sends the calls' log lines to their MCP clients).
	logHandler func(slog.Handler) slog.Handler
	// telemetry is the OpenTelemetry SDK of the OTEL_* variables (otel.go):
	// its providers, nil when off, go to the engine and the MCP packages.
	telemetry *telemetry

	scripts         []string
	workspace       string
	logFile         string
	json            bool
	approve         string
	approvalTimeout time.Duration
	agent           string
	noAgent         bool
	agentParent     []string
	maxParallel     int
	verbose         bool
	httpAllow       []string
	memoryLimit     int // MiB; 0 turns the guard off
	ptc             ptcFlags
	mcp             []string // --mcp NAME=COMMAND ARGS... | NAME=URL
	mcpConfig       string   // --mcp-config FILE

	// approval, when set, is mounted instead of --approve's service
	// (dsh serve's MCP elicitation).
	approval engine.ApprovalService

	// Standard streams of this Run.
	stdin          io.Reader
	stdout, stderr io.Writer
}

// addGlobalFlags declares the global flags on root.
func (o *options) addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringArrayVar(&o.scripts, "scripts", nil, "scripts `DIR` to load plugins from (repeatable; default ./scripts when it exists)")
	f.StringVar(&o.workspace, "workspace", "", "root `DIR` of dsh/fs and dsh/process (default the current directory)")
	f.StringVar(&o.logFile, "log", "", "append the durable session events to `FILE` as JSONL")
	f.BoolVar(&o.json, "json", false, "machine output: print JSON instead of text")
	f.StringVar(&o.approve, "approve", "", "how an ask decision is answered: `MODE` is prompt, allow, deny or none\n(default prompt when standard input is a terminal, else none)")
	f.DurationVar(&o.approvalTimeout, "approval-timeout", defaultApprovalTimeout, "how long a question (an approval, a tool's elicitation) waits for its answer:\npast `DURATION`, an approval denies the call and an elicitation answers cancel")
	f.StringVar(&o.agent, "agent", "main", "the agent `ID` the calls run as")
	f.BoolVar(&o.noAgent, "no-agent", false, "run the calls without an agent")
	f.StringArrayVar(&o.agentParent, "agent-parent", nil, "declare an agent's parent, `CHILD=PARENT` (repeatable): the scope chain")
	f.IntVar(&o.maxParallel, "max-parallel", defaultMaxParallel, "at most `N` tool bodies in flight")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "debug logs on standard error")
	f.IntVar(&o.memoryLimit, "memory-limit", defaultMemoryLimit, "stop the calls whose scripts run while the heap passes `MiB` (0 turns the limit off)")
	f.StringSliceVar(&o.httpAllow, "http-allow", nil, "`HOSTS` dsh/http may fetch from, comma-separated (default loopback only)")
	f.StringArrayVar(&o.mcp, "mcp", nil, mcpFlagHelp)
	f.StringVar(&o.mcpConfig, "mcp-config", "", mcpConfigFlagHelp)
	o.ptc.add(root)
	setKind(f, kindOutput, "json")
	setKind(f, kindPlugins, "scripts", "workspace", "http-allow", "memory-limit", "mcp", "mcp-config", "verbose")
	setKind(f, kindAgent, "agent", "no-agent", "agent-parent")
	setKind(f, kindCalls, "log", "approve", "approval-timeout", "max-parallel")
}

// check validates the flag values that cobra cannot: a problem is a usage
// error (exit status 2).
func (o *options) check() error {
	switch o.approve {
	case "", approvePrompt, approveAllow, approveDeny, approveNone:
	default:
		return fmt.Errorf("--approve %s: the mode must be prompt, allow, deny or none", o.approve)
	}
	if o.approvalTimeout <= 0 {
		return fmt.Errorf("--approval-timeout %s: must be a positive duration (such as 30s or 10m)", o.approvalTimeout)
	}
	if o.memoryLimit < 0 {
		return fmt.Errorf("--memory-limit %d: the limit must be a number of MiB, or 0 to turn it off", o.memoryLimit)
	}
	if o.maxParallel <= 0 {
		return fmt.Errorf("--max-parallel %d: must be a positive integer", o.maxParallel)
	}
	if err := o.ptc.check(); err != nil {
		return err
	}
	if err := o.checkMCP(); err != nil {
		return err
	}
	if !o.noAgent && o.agent == "" {
		return fmt.Errorf("--agent: the agent id must not be empty (use --no-agent to run without one)")
	}
	for _, p := range o.agentParent {
		if _, _, err := splitAgentParent(p); err != nil {
			return err
		}
	}
	for _, h := range o.httpAllow {
		if strings.TrimSpace(h) == "" {
			return fmt.Errorf("--http-allow: an empty host name")
		}
	}
	return nil
}

// splitAgentParent reads a --agent-parent value.
func splitAgentParent(s string) (child, parent string, err error) {
	child, parent, ok := strings.Cut(s, "=")
	if !ok || child == "" || parent == "" {
		return "", "", fmt.Errorf("--agent-parent %s: want CHILD=PARENT", s)
	}
	if child == parent {
		return "", "", fmt.Errorf("--agent-parent %s: an agent cannot be its own parent", s)
	}
	return child, parent, nil
}

// approveMode is the --approve mode in effect: the flag, or by default
// prompt when standard input is a terminal and none otherwise.
func (o *options) approveMode() string {
	if o.approve != "" {
		return o.approve
	}
	if f, ok := o.stdin.(*os.File); ok && isTerminal(f) {
		return approvePrompt
	}
	return approveNone
}

// colour reports whether human output to w uses colour: only on a
// terminal, and never when NO_COLOR is set (https://no-color.org).
func colour(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// memoryGuard builds the guard of --memory-limit (nil when it is 0) and,
// through scripting.TuneGC as an embedder would, sets the Go runtime's soft
// memory limit to one and a half times the limit (unless GOMEMLIMIT is in
// the environment), so that garbage cannot take the process's resident size
// far past it (dsh runs with GOGC=400). At the limit itself the collector
// would run without pause while a script's live heap nears it, slowing
// every call (measured: a JS body growing an array to 256 MiB failed after
// 5-6 s instead of 3). The soft limit is process-wide: the CLI owns the
// process, a library embedder chooses its own.
func (o *options) memoryGuard(logger *slog.Logger) *scripting.MemoryGuard {
	if o.memoryLimit <= 0 {
		return nil
	}
	limit := int64(o.memoryLimit) * scripting.MiB
	scripting.TuneGC(0, limit)
	return scripting.NewMemoryGuard(limit, scripting.MemoryGuardOptions{Logger: logger})
}

// openLog opens --log's JSONL file, nil without --log; the caller closes
// it. A file that cannot be opened is a problem the user must fix.
func (o *options) openLog() (*engine.JSONLLog, error) {
	if o.logFile == "" {
		return nil, nil
	}
	l, err := engine.OpenJSONLLog(o.logFile)
	if err != nil {
		return nil, userErrorf("--log %s: %v", o.logFile, pathErr(err))
	}
	return l, nil
}
