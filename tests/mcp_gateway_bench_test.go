//go:build unix

package tests

// Issue 26's performance targets for dsh as an MCP gateway, through the
// built binary (BENCHMARKS.md, "MCP gateway (issue 26)"):
//
//   - TestServeAnswersInitializeWhileAnImportHangs: `initialize` is
//     answered in under 1 s whatever the imports do;
//   - BenchmarkGatewayCallGo and BenchmarkGatewayCallTS: an imported call
//     through `dsh serve` against a direct call of the same server with the
//     same client, alternating call by call (the Go SDK's client and server;
//     the TypeScript SDK's client and the npm server-everything's echo).
//
// mcp/bench_gateway_test.go is the in-process form of the second.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// initializeBudget bounds the time from starting `dsh serve` to its answer
// to initialize in TestServeAnswersInitializeWhileAnImportHangs: the
// issue's 1 s, generously, on a shared machine (the test logs the figure).
const initializeBudget = 5 * time.Second

// TestServeAnswersInitializeWhileAnImportHangs starts `dsh serve` with an
// import that reads its requests and never answers, and requires the
// client's initialize to be answered within initializeBudget of starting
// the process, with no plugins and with the example plugins under
// --executor ptc (what a code-mode gateway loads).
func TestServeAnswersInitializeWhileAnImportHangs(t *testing.T) {
	bin := buildDsh(t)
	scripts, err := filepath.Abs(examplePlugins)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"with no plugins", nil},
		{"with the example plugins under ptc", []string{"--scripts", scripts, "--executor", "ptc"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for range 3 {
				args := append(slices.Clone(c.flags), "--mcp", "hang=sh -c 'cat >/dev/null'", "serve")
				cmd := exec.Command(bin, args...)
				cmd.Dir = t.TempDir()
				client := sdk.NewClient(&sdk.Implementation{Name: "perf", Version: "1"}, nil)
				ctx, cancel := context.WithTimeout(t.Context(), initializeBudget+time.Minute)
				t0 := time.Now()
				cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
				took := time.Since(t0)
				cancel()
				if err != nil {
					t.Fatalf("initialize: %v (after %v)", err, took)
				}
				t.Logf("dsh %s: initialize answered %v after the start", strings.Join(args, " "), took.Round(time.Millisecond))
				if took > initializeBudget {
					t.Errorf("initialize answered %v after the start, want at most %v", took, initializeBudget)
				}
				if err := cs.Close(); err != nil {
					t.Errorf("closing: %v", err)
				}
			}
		})
	}
}

// gatewayCalls makes b.N calls of each of calls, in turn, each going
// first, second, … in rotation so that the machine's noise falls on all,
// and reports each one's mean (NAME-µs/call) and its ratio to the first's
// (NAME-ratio; "ratio" for "served").
func gatewayCalls(b *testing.B, names []string, calls []func()) {
	took := make([]time.Duration, len(calls))
	i := 0
	for b.Loop() {
		for k := range calls {
			j := (i + k) % len(calls)
			t0 := time.Now()
			calls[j]()
			took[j] += time.Since(t0)
		}
		i++
	}
	n := float64(b.N)
	for j, name := range names {
		b.ReportMetric(float64(took[j].Microseconds())/n, name+"-µs/call")
		if j == 0 {
			continue
		}
		metric := name + "-ratio"
		if name == "served" {
			metric = "ratio"
		}
		b.ReportMetric(float64(took[j])/float64(took[0]), metric)
	}
}

// BenchmarkGatewayCallGo: the Go SDK's client calls echo of mcp-echo-server
// (this test binary, a Go SDK server on stdio) directly, as up__echo
// through `dsh --mcp up=mcp-echo-server serve`, both over stdio, and
// through mcp-relay-server (a gateway of the SDK alone: the floor of any
// gateway built on it, "relay"), in turn call by call. With
// DSH_BENCH_BASELINE naming another dsh binary (the tree before a change,
// built the same way), it is called too ("baseline"), so that a change is
// measured before and after in one run.
func BenchmarkGatewayCallGo(b *testing.B) {
	bin := buildDsh(b)
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	server := filepath.Join(b.TempDir(), "mcp-echo-server")
	if err := os.Symlink(exe, server); err != nil {
		b.Fatal(err)
	}
	connect := func(cmd *exec.Cmd) *sdk.ClientSession {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "perf", Version: "1"}, nil).
			Connect(b.Context(), &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	direct := connect(exec.Command(server))
	relay := filepath.Join(filepath.Dir(server), "mcp-relay-server")
	if err := os.Symlink(exe, relay); err != nil {
		b.Fatal(err)
	}
	gateway := func(bin string) *sdk.ClientSession {
		cs := connect(exec.Command(bin, "--mcp", "up="+server, "serve"))
		// The import connects in the background.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			res, err := cs.ListTools(b.Context(), nil)
			if err != nil {
				b.Fatal(err)
			}
			if slices.ContainsFunc(res.Tools, func(t *sdk.Tool) bool { return t.Name == "up__echo" }) {
				return cs
			}
			if time.Now().After(deadline) {
				b.Fatalf("%s serve did not list up__echo within a minute", bin)
			}
		}
	}
	served := gateway(bin)
	relayed := connect(exec.Command(relay, server))
	call := func(cs *sdk.ClientSession, name string) func() {
		args := json.RawMessage(`{"text":"Ada"}`)
		return func() {
			res, err := cs.CallTool(b.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				b.Fatal(err)
			}
			if res.IsError {
				b.Fatalf("%s failed: %+v", name, res.Content)
			}
		}
	}
	names := []string{"direct", "served", "relay"}
	calls := []func(){call(direct, "echo"), call(served, "up__echo"), call(relayed, "echo")}
	if base := os.Getenv("DSH_BENCH_BASELINE"); base != "" {
		names = append(names, "baseline")
		calls = append(calls, call(gateway(base), "up__echo"))
	}
	gatewayCalls(b, names, calls)
}

// BenchmarkGatewayCallTS: testdata/mcpperf/bench.mjs, a client written with
// the official TypeScript SDK, calls echo of the npm
// @modelcontextprotocol/server-everything directly, and as ev__echo
// through `dsh --mcp ev=... serve`, alternating call by call, b.N calls of
// each, and reports both means and the ratio. It needs the npm packages of
// TestMCPE2E (DSH_MCP_SERVERS or DSH_MCP_CONFORMANCE) and skips without
// them.
func BenchmarkGatewayCallTS(b *testing.B) {
	dir := os.Getenv("DSH_MCP_SERVERS")
	if dir == "" {
		dir = os.Getenv("DSH_MCP_CONFORMANCE")
	}
	if dir == "" {
		b.Skip("the npm packages are not set up: set DSH_MCP_SERVERS (see TestMCPE2E)")
	}
	modules := filepath.Join(dir, "node_modules")
	sdkDir := filepath.Join(modules, "@modelcontextprotocol", "sdk")
	everything, err := filepath.EvalSymlinks(filepath.Join(modules, ".bin", "mcp-server-everything"))
	if err != nil {
		b.Skipf("%s has no mcp-server-everything: %v", dir, err)
	}
	node, err := lookPathIn("node", filepath.Join(modules, ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err != nil {
		b.Skip("no node: install Node 20 or later")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "mcpperf", "bench.mjs"))
	if err != nil {
		b.Fatal(err)
	}
	bin := buildDsh(b)
	for _, c := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"echo", "echo", map[string]any{"message": "Ada"}},
		// A tool that works 5 ms: the gateway's fixed cost against a
		// call that does something.
		{"5ms", "trigger-long-running-operation", map[string]any{"duration": 0.005, "steps": 1}},
	} {
		b.Run(c.name, func(b *testing.B) {
			tsGatewayCall(b, bin, node, script, sdkDir, everything, c.tool, c.args)
		})
	}
}

// tsGatewayCall runs bench.mjs for b.N calls of server-everything's tool
// with args, directly and through dsh serve, and reports the figures.
func tsGatewayCall(b *testing.B, bin, node, script, sdkDir, everything, tool string, args map[string]any) {
	calls := b.N
	config, err := json.Marshal(map[string]any{
		"sdk":     sdkDir,
		"direct":  map[string]any{"command": node, "args": []string{everything}},
		"gateway": map[string]any{"command": bin, "args": []string{"--mcp", "ev=" + shellQuote(node) + " " + shellQuote(everything), "serve"}},
		"tool":    tool, "served": "ev__" + tool,
		"args":   args,
		"warmup": 50, "calls": calls,
	})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "config.json")
	if err := os.WriteFile(file, config, 0o644); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, file)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b.ResetTimer()
	out, err := cmd.Output()
	b.StopTimer()
	if err != nil {
		b.Fatalf("node bench.mjs: %v\n%s", err, stderr.String())
	}
	var r struct {
		Direct, Gateway []float64
		InitializeMs    float64
	}
	if err := json.Unmarshal(out, &r); err != nil {
		b.Fatalf("bench.mjs's report %q: %v", out, err)
	}
	if len(r.Direct) != calls || len(r.Gateway) != calls {
		b.Fatalf("bench.mjs made %d direct and %d served calls, want %d", len(r.Direct), len(r.Gateway), calls)
	}
	mean := func(v []float64) float64 {
		var sum float64
		for _, x := range v {
			sum += x
		}
		return sum / float64(len(v))
	}
	median := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(mean(r.Direct), "direct-µs/call")
	b.ReportMetric(mean(r.Gateway), "served-µs/call")
	b.ReportMetric(mean(r.Gateway)/mean(r.Direct), "ratio")
	b.ReportMetric(median(r.Gateway)/median(r.Direct), "median-ratio")
	b.ReportMetric(r.InitializeMs, "initialize-ms")
	fmt.Fprintf(os.Stderr, "%s: %d calls each: direct mean %.0f µs median %.0f µs; served mean %.0f µs median %.0f µs\n",
		b.Name(), calls, mean(r.Direct), median(r.Direct), mean(r.Gateway), median(r.Gateway))
}
