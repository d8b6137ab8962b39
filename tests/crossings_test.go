package tests

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 25 §3, the crossings of the CLI's own streams, through a built dsh:
// every line --log writes is one dsh replay reads back, and one line of
// dsh watch's input over 64 MiB is skipped without ending the session or
// being held in memory.
func TestCLICrossingsAreCapped(t *testing.T) {
	bin := buildDsh(t)
	plugin := `const { defineTool, tools } = require("dsh");
const output = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
tools.register(defineTool({ name: "ctl", description: "12 MiB of control characters.", parameters: {}, output,
  async execute() { return "\u0001".repeat(12 * 1024 * 1024); } }));
tools.register(defineTool({ name: "ok", description: "Fine.", parameters: {}, output, async execute() { return "fine"; } }));
`
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scripts", "ctl.js"), []byte(plugin), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}

	t.Run("a result logged as a 75 MB line is written cut and replayed with a warning", func(t *testing.T) {
		t.Parallel()
		dir := setup(t)
		if err := os.WriteFile(filepath.Join(dir, "calls.json"), []byte(`[{"id":"c1","name":"ctl"},{"id":"c2","name":"ok"}]`), 0o644); err != nil {
			t.Fatal(err)
		}
		run := runWithInput(t, bin, dir, nil, "--scripts", "scripts", "--memory-limit", "512", "--approve", "allow", "--log", "s.jsonl", "run", "calls.json")
		if run.exit != 0 || run.rssMiB >= 768 {
			t.Fatalf("run: exit %d, %d MiB\n%s", run.exit, run.rssMiB, run.stderr)
		}
		log, err := os.ReadFile(filepath.Join(dir, "s.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range bytes.Split(bytes.TrimSuffix(log, []byte("\n")), []byte("\n")) {
			if len(line)+1 > 64<<20 {
				t.Errorf("line %d has %d bytes", n+1, len(line))
			}
		}
		replay := runWithInput(t, bin, dir, nil, "--scripts", "scripts", "--memory-limit", "512", "replay", "s.jsonl")
		if replay.exit != 0 {
			t.Fatalf("replay: exit %d\n%s", replay.exit, replay.stderr)
		}
		// 12 MiB escaped six bytes each, and the event's other members.
		want := regexp.MustCompile(`(?m)^dsh: warning: s\.jsonl:2: the tool/result of call "c1" was logged cut \(its line would have had 7549\d{4} bytes, over 67108864\); its card shows what was kept$`)
		if !want.MatchString(replay.stderr) {
			t.Errorf("replay's stderr does not match %q:\n%s", want, replay.stderr)
		}
		if !strings.Contains(replay.stdout, "fine") {
			t.Errorf("replay draws no card for c2:\n%s", replay.stdout)
		}
	})

	t.Run("a watch input line of 100 MiB is skipped and the next line served", func(t *testing.T) {
		t.Parallel()
		dir := setup(t)
		in := io.MultiReader(strings.NewReader(`{"id":"a","name":"ok"}`+"\n"),
			io.LimitReader(repeatByte('x'), 100<<20), strings.NewReader("\n"+`{"id":"b","name":"ok"}`+"\n"))
		w := runWithInput(t, bin, dir, in, "--scripts", "scripts", "--memory-limit", "256", "watch")
		if w.exit != 1 {
			t.Errorf("exit %d, want 1 (a line was not a call)\n%s", w.exit, w.stderr)
		}
		for _, id := range []string{"a", "b"} {
			if !strings.Contains(w.stdout, `{"callId":"`+id+`","result":{"isError":false,"value":"fine"`) {
				t.Errorf("no result for %s:\n%.500s", id, w.stdout)
			}
		}
		if want := "dsh: standard input line 2: the line has 104857600 bytes, over the 67108864 a line may have: skipped"; !strings.Contains(w.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, w.stderr)
		}
		// The line is read through, holding no more than the 64 MiB a line
		// may have: RSS stays under 1.5 times --memory-limit.
		if w.rssMiB >= 384 {
			t.Errorf("peak RSS %d MiB", w.rssMiB)
		}
	})
}

// repeatByte is an endless reader of c.
type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// runWithInput runs dsh in dir with stdin (nil: none) and returns what it
// printed, its exit status and its peak RSS (as runDsh measures it).
func runWithInput(t *testing.T, bin, dir string, stdin io.Reader, args ...string) *dshRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	cmd.Stdin = stdin
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	hwm, err := waitSampled(cmd)
	r := &dshRun{args: args, took: time.Since(start), stdout: stdout.String(), stderr: stderr.String(), rssMiB: hwm / 1024}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("dsh: %v\n%s", err, r.stderr)
	}
	return r
}
