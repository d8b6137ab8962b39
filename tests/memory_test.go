package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// memoryCase is one hostile plugin run by a built dsh under --memory-limit
// 256: its first call (c1) must fail with a message matching fails, its
// second (c2, a call of the same plugin) must succeed, dsh must exit 0 and
// its peak RSS stay under twice the limit.
type memoryCase struct {
	name, file, script string
	fails              *regexp.Regexp
}

const memoryLimitMiB = 256

// memoryMessage is the exact failure of a call the memory guard stopped.
var memoryMessage = regexp.MustCompile(`^script exceeded the memory limit \(256 MiB\)$`)

const jsOutput = `const { defineTool, tools } = require("dsh");
const output = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
tools.register(defineTool({ name: "ok", description: "Fine.", parameters: {}, output, execute() { return "fine"; } }));
`

const luaOutput = `local dsh = require("dsh")
local output = { schema = { type = "string" }, render = function(a, v) return { { type = "text", text = v } } end }
dsh.tools.register(dsh.define_tool { name = "ok", description = "ok", parameters = {}, output = output, execute = function() return "fine" end })
local function hog(f) dsh.tools.register(dsh.define_tool { name = "hog", description = "hog", parameters = {}, output = output, execute = f }) end
`

var memoryCases = []memoryCase{
	{
		name: "a JS body growing an array of small objects", file: "hog.js", fails: memoryMessage,
		script: jsOutput + `tools.register(defineTool({ name: "hog", description: "Grows.", parameters: {}, output,
  execute() { const a = []; for (let i = 0; ; i++) a.push({ i, s: "x" + i }); } }));`,
	},
	{
		name: "a JS async body growing a module-level array", file: "hog.js", fails: memoryMessage,
		script: jsOutput + `const kept = [];
tools.register(defineTool({ name: "hog", description: "Grows.", parameters: {}, output,
  async execute() { await null; for (;;) kept.push([kept.length, String(kept.length)]); } }));`,
	},
	{
		name: "a Lua body growing a table", file: "hog.lua", fails: memoryMessage,
		script: luaOutput + `hog(function() local t, i = {}, 0 while true do i = i + 1 t[i] = { i = i, s = "x" .. i } end end)`,
	},
	{
		// One step allocates twice the last: the guard can only see the
		// heap between steps, unless a cap on .. refuses the step first.
		name: "a Lua body doubling a string with ..", file: "hog.lua", fails: regexp.MustCompile(`^script exceeded the memory limit \(256 MiB\)$|(?i)limit|too (long|large)`),
		script: luaOutput + `hog(function() local s = "x" while true do s = s .. s end end)`,
	},
	{
		name: "a Lua body making a million coroutines", file: "hog.lua", fails: regexp.MustCompile(`^script exceeded the memory limit \(256 MiB\)$|(?i)coroutine`),
		script: luaOutput + `hog(function() local t = {} for i = 1, 1000000 do t[i] = coroutine.create(function() end) end return "made" end)`,
	},
}

func TestMemoryLimitStopsHostilePluginsAndDshLivesOn(t *testing.T) {
	bin := buildDsh(t)
	for _, tc := range memoryCases {
		t.Run(tc.name+" fails its call, the next is served, RSS stays under twice the limit", func(t *testing.T) {
			dir := t.TempDir()
			if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "scripts", tc.file), []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			calls := `[{"id": "c1", "name": "hog"}, {"id": "c2", "name": "ok"}]`
			if err := os.WriteFile(filepath.Join(dir, "calls.json"), []byte(calls), 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, ru, took := runDsh(t, bin, dir, "--memory-limit", "256", "--json", "run", "calls.json")
			t.Logf("took %v, peak RSS %d MiB", took.Round(time.Millisecond), ru.Maxrss/1024)
			if took > 30*time.Second {
				t.Errorf("dsh took %v", took)
			}
			if rss := ru.Maxrss / 1024; rss >= 2*memoryLimitMiB {
				t.Errorf("peak RSS %d MiB, want under %d MiB", rss, 2*memoryLimitMiB)
			}
			results := batchResults(t, out, stderr)
			if r := results["c1"]; !r.IsError || r.Error == nil || !tc.fails.MatchString(r.Error.Message) {
				t.Errorf("c1 = %+v, want a failure matching %q\nstderr: %s", r, tc.fails, clip(stderr))
			} else {
				t.Logf("c1 failed with %q", r.Error.Message)
			}
			if r := results["c2"]; r.IsError {
				t.Errorf("c2, the next call, failed: %+v", r.Error)
			}
		})
	}
}

func TestANegativeMemoryLimitIsAUsageError(t *testing.T) {
	bin := buildDsh(t)
	cmd := exec.Command(bin, "--memory-limit", "-1", "schemas")
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("dsh --memory-limit -1: %v, want exit status 2\n%s", err, stderr.String())
	}
	want := "dsh: --memory-limit -1: the limit must be a number of MiB, or 0 to turn it off\n"
	if got := stderr.String(); !strings.HasPrefix(got, want) {
		t.Errorf("stderr = %q, want it to start with %q", got, want)
	}
}

type callResult struct {
	IsError bool `json:"isError"`
	Error   *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// batchResults reads the results of "dsh --json run" by call id.
func batchResults(t *testing.T, out []byte, stderr string) map[string]callResult {
	t.Helper()
	var batch struct {
		Results []struct {
			CallID string     `json:"callId"`
			Result callResult `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &batch); err != nil {
		t.Fatalf("reading the batch result: %v\nstdout: %s\nstderr: %s", err, clip(string(out)), clip(stderr))
	}
	m := map[string]callResult{}
	for _, r := range batch.Results {
		m[r.CallID] = r.Result
	}
	return m
}

// runDsh runs bin in dir, requires exit status 0 (and no death by a
// signal), and returns its standard output and error, its resource usage and
// how long it took.
func runDsh(t *testing.T, bin, dir string, args ...string) ([]byte, string, *syscall.Rusage, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("dsh %s: %v after %v\nstderr: %s", strings.Join(args, " "), err, took, clip(stderr.String()))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no resource usage for dsh")
	}
	return stdout.Bytes(), stderr.String(), ru, took
}
