package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

// waitForFile waits until path exists: a plugin wrote it to say where it is.
func waitForFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s did not appear within a minute", path)
}

// writePlugin writes a plugin file into a new scripts directory.
func writePlugin(t *testing.T, name, code string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitPlugin's tool writes "started", then waits until its call is aborted.
const waitPlugin = `const { defineTool, tools } = require("dsh");
const { writeFile } = require("dsh/fs");
tools.register(defineTool({
  name: "wait",
  description: "Wait until aborted.",
  parameters: {},
  output: { schema: { type: "string" }, render: (args, value) => [{ type: "text", text: value }] },
  async execute(args, exec) {
    try { await writeFile("started", "yes"); } catch (e) { if (e.code !== "ECANCELED") throw e; }
    await new Promise((resolve) => {
      if (exec.signal.aborted) return resolve();
      const t = setTimeout(resolve, 60000);
      exec.signal.addEventListener("abort", () => { clearTimeout(t); resolve(); });
    });
    return "stopped";
  },
}));
`

// gatedPlugin's tool has an activation condition that writes "resolving"
// and then takes a while, without looking at any cancellation.
const gatedPlugin = `const { defineTool, tools } = require("dsh");
const { writeFile } = require("dsh/fs");
tools.register(defineTool({
  name: "gated",
  description: "A tool behind a slow condition.",
  parameters: {},
  output: { schema: { type: "string" }, render: (args, value) => [{ type: "text", text: value }] },
  async execute() { return "ran"; },
}), {
  when: async () => {
    await writeFile("resolving", "yes");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    return true;
  },
});
`

// TestStopSignals stops "dsh run" as Main does on a signal: the context is
// cancelled with the signal as its cause. SIGINT exits 130 and says
// "interrupted", SIGTERM exits 143 and says "terminated".
func TestStopSignals(t *testing.T) {
	scripts := writePlugin(t, "wait.js", waitPlugin)
	for _, tc := range []struct {
		name   string
		sig    os.Signal
		code   int
		stderr string
	}{
		{"an interrupt (SIGINT) exits 130", os.Interrupt, exitInterrupted, "dsh: interrupted: the calls not started were skipped\n"},
		{"a termination request (SIGTERM) exits 143", syscall.SIGTERM, exitTerminated, "dsh: terminated: the calls not started were skipped\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			calls := filepath.Join(ws, "calls.json")
			if err := os.WriteFile(calls, []byte(`[{"id":"c1","name":"wait"},{"id":"c2","name":"wait"}]`), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var stdout, stderr syncbuf.Buffer
			code := make(chan int, 1)
			go func() {
				code <- Run(ctx, []string{"--scripts", scripts, "--workspace", ws, "--memory-limit", "0", "run", calls}, strings.NewReader(""), &stdout, &stderr)
			}()
			waitForFile(t, filepath.Join(ws, "started"))
			cancel(stopSignal{tc.sig})
			if c := <-code; c != tc.code || stderr.String() != tc.stderr {
				t.Errorf("status %d, stderr %q; want %d, %q", c, stderr.String(), tc.code, tc.stderr)
			}
			want := "2 calls: 0 ok, 0 failed, 2 aborted · ran c1 · aborted before dispatch: c2\n"
			if !strings.HasSuffix(stdout.String(), want) {
				t.Errorf("stdout %q, want it to end with %q", stdout.String(), want)
			}
		})
	}
}

// TestWatchInterruptedWhileResolving interrupts watch while a call's tool
// set is being resolved: the call is answered as aborted before dispatch,
// the spec's result, and not with a "context canceled" failure.
func TestWatchInterruptedWhileResolving(t *testing.T) {
	scripts := writePlugin(t, "gated.js", gatedPlugin)
	ws := t.TempDir()
	inR, inW := io.Pipe()
	defer inW.Close()
	var stdout, stderr syncbuf.Buffer
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"--scripts", scripts, "--workspace", ws, "--memory-limit", "0", "watch"}, inR, &stdout, &stderr)
	}()
	if _, err := io.WriteString(inW, `{"id":"c1","name":"gated"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	waitForFile(t, filepath.Join(ws, "resolving"))
	cancel(stopSignal{os.Interrupt})
	if c := <-code; c != exitInterrupted {
		t.Errorf("status %d, want 130", c)
	}
	want := `{"callId":"c1","result":{"isError":true,"error":{"message":"tool call aborted before dispatch","info":{"name":"AbortError","code":"ABORTED_BEFORE_DISPATCH"}},"content":[{"type":"text","text":"Error: tool call aborted before dispatch"}]}}` + "\n"
	if stdout.String() != want {
		t.Errorf("stdout %q\nwant   %q", stdout.String(), want)
	}
	if !strings.HasSuffix(stderr.String(), "dsh: interrupted: the calls not read were skipped\n") {
		t.Errorf("stderr %q, want it to end with the interrupt's line", stderr.String())
	}
}

// TestServeStopsQuietly stops dsh serve, with a client connected on stdio,
// as Main does on a signal: no log line, status 130 for SIGINT and 143 for
// SIGTERM.
func TestServeStopsQuietly(t *testing.T) {
	scripts := writePlugin(t, "greet.js", greetPlugin)
	for _, tc := range []struct {
		name string
		sig  os.Signal
		code int
	}{
		{"an interrupt (SIGINT) exits 130", os.Interrupt, exitInterrupted},
		{"a termination request (SIGTERM) exits 143", syscall.SIGTERM, exitTerminated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			stderr := &syncbuf.Buffer{}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			code := make(chan int, 1)
			go func() {
				code <- Run(ctx, []string{"--scripts", scripts, "--memory-limit", "0", "serve"}, inR, outW, stderr)
				outW.Close()
			}()
			client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			cancel(stopSignal{tc.sig})
			if c := <-code; c != tc.code || stderr.String() != "" {
				t.Errorf("status %d, stderr %q; want %d and nothing", c, stderr.String(), tc.code)
			}
		})
	}
	t.Run("over HTTP, an interrupt exits 130 after the serving line alone", func(t *testing.T) {
		stderr := &syncbuf.Buffer{}
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		code := make(chan int, 1)
		go func() {
			code <- Run(ctx, []string{"--scripts", scripts, "--memory-limit", "0", "serve", "--http", "127.0.0.1:0"}, strings.NewReader(""), io.Discard, stderr)
		}()
		serving := regexp.MustCompile(`\Adsh: serving MCP at http://127\.0\.0\.1:[0-9]+/mcp\n\z`)
		for deadline := time.Now().Add(time.Minute); !serving.MatchString(stderr.String()); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not serving within a minute; stderr %q", stderr.String())
			}
		}
		cancel(stopSignal{os.Interrupt})
		if c := <-code; c != exitInterrupted || !serving.MatchString(stderr.String()) {
			t.Errorf("status %d, stderr %q; want 130 and the serving line alone", c, stderr.String())
		}
	})
}
