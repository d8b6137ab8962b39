package tests

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/cmd/dsh/cli"
	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/capability"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// The example policy set (scripts/examples/plugins) in front of the JS
// word_count tool, as "dsh --approve allow run" runs it: every call has a
// fresh call id and fresh arguments, as a model's calls do.

// examplePolicies are the example policies, by base name.
var examplePolicies = []string{"ask_before_write", "audit_log", "deny_shell", "protect_secrets", "redact_tokens", "repeat_reminder"}

// policySetDir copies the JS word_count tool and, by lang ("" for none,
// "js" or "lua"), the example policies with their libraries into a fresh
// scripts folder.
func policySetDir(b *testing.B, lang string, policies ...string) string {
	b.Helper()
	dir := b.TempDir()
	cp := func(from, rel string) {
		text, err := os.ReadFile(filepath.Join(from, filepath.FromSlash(rel)))
		if err != nil {
			b.Fatal(err)
		}
		to := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(to, text, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cp(examplePlugins, "word_count.ts")
	cp(examplePlugins, "tsconfig.json")
	switch lang {
	case "js":
		cp(examplePlugins, "lib/secrets.ts")
		for _, p := range policies {
			if _, err := os.Stat(filepath.Join(examplePlugins, p+".ts")); err == nil {
				cp(examplePlugins, p+".ts")
			} else {
				cp(examplePlugins, p+".js")
			}
		}
	case "lua":
		luaExamples := filepath.Join("..", "scripts", "examples", "lua")
		cp(luaExamples, "lib/secrets.lua")
		for _, p := range policies {
			cp(luaExamples, p+".lua")
		}
	}
	return dir
}

// wordCountInput is call i of word_count with its own call id and text.
func wordCountInput(i int, agent *engine.Agent) engine.Input {
	return engine.Input{
		CallID: "c" + strconv.Itoa(i),
		Name:   "word_count",
		Arguments: dsl.NewObject(dsl.Member{Key: "text",
			Value: "the quick brown fox jumps over the lazy dog " + strconv.Itoa(i)}),
		Agent: agent,
	}
}

// BenchmarkExamplePolicySet is one word_count call through the engine
// wired as "dsh --approve allow run" wires it (both hosts, the capability
// modules, the native executor, the timeout policy, the agent "main", a
// logger at warning level), with no policy, with the JS example policies,
// and with their Lua twins.
func BenchmarkExamplePolicySet(b *testing.B) {
	b.Cleanup(func() { awaitRegexpClock(b) })
	for _, lang := range []string{"", "js", "lua"} {
		name := "tool_alone"
		if lang != "" {
			name = lang + "_policies"
		}
		b.Run(name, func(b *testing.B) {
			var policies []string
			if lang != "" {
				policies = examplePolicies
			}
			benchWordCount(b, policySetDir(b, lang, policies...), len(policies))
		})
	}
}

// BenchmarkExamplePolicyEach is BenchmarkExamplePolicySet with one example
// policy at a time, in each language: what each one costs.
func BenchmarkExamplePolicyEach(b *testing.B) {
	b.Cleanup(func() { awaitRegexpClock(b) })
	for _, p := range examplePolicies {
		for _, lang := range []string{"js", "lua"} {
			b.Run(p+"/"+lang, func(b *testing.B) {
				benchWordCount(b, policySetDir(b, lang, p), 1)
			})
		}
	}
}

// benchWordCount loads dir (word_count and policies more plugins) into an
// engine wired as dsh run wires it, and calls word_count b.N times with
// fresh inputs.
func benchWordCount(b *testing.B, dir string, policies int) {
	b.Helper()
	mods, err := capability.Modules(capability.Config{Workspace: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	logs := &exLogs{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	svc := engine.New(engine.WithLogger(logger), engine.WithApproval(&exApprovals{answer: engine.AllowedOnce}))
	exec, err := engine.NewNativeExecutor(svc, 10)
	if err != nil {
		b.Fatal(err)
	}
	svc.Global().SetExecutor(exec)
	svc.Global().OnExecute(engine.TimeoutPolicy())
	agents := scripting.NewAgents()
	loader := &scripting.Loader{Service: svc, Agents: agents.Agent, Logger: slog.New(slog.DiscardHandler), Hosts: []scripting.Host{
		&js.Host{Logger: logger, Modules: mods},
		&lua.Host{Logger: logger, Modules: mods},
	}}
	loaded := loadAll(b, loader, dir, "")
	if want := 1 + policies; len(loaded) != want {
		b.Fatalf("%d plugins loaded, want %d", len(loaded), want)
	}
	agent := agents.Agent("main")
	ctx := context.Background()
	got, err := dsl.Marshal(must(b, svc.Call(ctx, wordCountInput(0, agent))).JSON())
	if err != nil {
		b.Fatal(err)
	}
	if !strings.Contains(string(got), `"words":10`) {
		b.Fatalf("word_count answered %s, want 10 words", got)
	}
	b.ReportAllocs()
	i := 1
	for b.Loop() {
		if r := svc.Call(ctx, wordCountInput(i, agent)); r.IsError {
			b.Fatal(r.Error.Message)
		}
		i++
	}
	if l := logs.lines(""); policies > 0 && len(l) > 0 {
		b.Errorf("the policies logged warnings: %q", l)
	}
}

// awaitRegexpClock waits (at most ten seconds) until regexp2's
// match-timeout clock, which outlives the last match of the scripts'
// regular expressions by a second or two, has stopped, so that TestMain's
// leak check does not take it for a leak when only benchmarks ran.
func awaitRegexpClock(b *testing.B) {
	b.Helper()
	buf := make([]byte, 1<<20)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if !bytes.Contains(buf[:runtime.Stack(buf, true)], []byte("regexp2/v2.runClock")) {
			return
		}
	}
	b.Error("regexp2's clock still runs ten seconds after the benchmark")
}

// must is r, failing b when r is a failure.
func must(b *testing.B, r *engine.Result) *engine.Result {
	b.Helper()
	if r.IsError {
		b.Fatal(r.Error.Message)
	}
	return r
}

// dshRunCalls is a calls file of n word_count calls, each with its own id
// and text.
func dshRunCalls(b *testing.B, n int) string {
	b.Helper()
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range n {
		if i > 0 {
			buf.WriteString(",\n")
		}
		fmt.Fprintf(&buf, `{"id":"c%d","name":"word_count","arguments":{"text":"the quick brown fox jumps over the lazy dog %d"}}`, i, i)
	}
	buf.WriteString("]\n")
	p := filepath.Join(b.TempDir(), fmt.Sprintf("calls%d.json", n))
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkDshRunPolicySet is "dsh --approve allow run" in-process, end to
// end (load, run, draw the cards), on a calls file of one word_count call
// and on one of dshRunBatch calls, with and without the JS example
// policies. One op is both runs; "µs/call" is the difference over
// dshRunBatch-1 calls, the cost of one more call, which the issue's
// figures (2,000 calls against one) measure.
func BenchmarkDshRunPolicySet(b *testing.B) {
	const dshRunBatch = 200
	b.Cleanup(func() { awaitRegexpClock(b) })
	for _, lang := range []string{"", "js"} {
		name := "tool_alone"
		if lang != "" {
			name = lang + "_policies"
		}
		b.Run(name, func(b *testing.B) {
			var policies []string
			if lang != "" {
				policies = examplePolicies
			}
			dir := policySetDir(b, lang, policies...)
			ws := b.TempDir()
			one, many := dshRunCalls(b, 1), dshRunCalls(b, dshRunBatch)
			run := func(calls string) (time.Duration, string) {
				var out, errs bytes.Buffer
				start := time.Now()
				code := cli.Run(context.Background(), []string{"--scripts", dir, "--workspace", ws, "--approve", "allow", "run", calls},
					strings.NewReader(""), &out, &errs)
				d := time.Since(start)
				if code != 0 || errs.Len() > 0 {
					b.Fatalf("dsh run exited %d: %s", code, errs.String())
				}
				return d, out.String()
			}
			if _, out := run(many); strings.Count(out, "10 words") != dshRunBatch {
				b.Fatalf("dsh run did not count 10 words %d times:\n%s", dshRunBatch, out)
			}
			var marginal time.Duration
			for b.Loop() {
				d1, _ := run(one)
				dn, _ := run(many)
				marginal += dn - d1
			}
			b.ReportMetric(float64(marginal.Microseconds())/float64(b.N)/float64(dshRunBatch-1), "µs/call")
		})
	}
}
