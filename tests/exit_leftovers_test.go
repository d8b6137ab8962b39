//go:build linux

package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestDshExitEndsEverythingItStarted runs the dsh binary with an imported
// stdio server that starts a daemon of its own (setsid sleep) and a plugin
// whose program leaves an escapee with a forged call token, then ends dsh
// normally, with SIGTERM and with SIGINT: no process any of them started is
// left once dsh has exited.
func TestDshExitEndsEverythingItStarted(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	bin := buildDsh(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: dsh ends on its own
		code int
	}{
		{"after a normal exit", 0, 0},
		{"after SIGTERM", syscall.SIGTERM, 143},
		{"after SIGINT", syscall.SIGINT, 130},
	} {
		t.Run("nothing is left "+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			server := filepath.Join(dir, "mcp-echo-server")
			if err := os.Symlink(exe, server); err != nil {
				t.Fatal(err)
			}
			// Markers unique to this run: sleep durations.
			base := time.Now().UnixNano() % 1000000
			daemon := fmt.Sprintf("900.%d1", base)
			forged := fmt.Sprintf("900.%d2", base)
			long := fmt.Sprintf("900.%d3", base)
			markers := []string{daemon, forged}
			if tc.sig != 0 {
				markers = append(markers, long)
			}
			t.Cleanup(func() {
				for _, m := range []string{daemon, forged, long} {
					for _, pid := range processesWith("sleep " + m) {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
			})
			config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"e": map[string]any{
				"command": "sh",
				"args":    []string{"-c", "setsid sleep " + daemon + " </dev/null >/dev/null 2>&1 & exec " + server},
			}}})
			write := func(name, text string) {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("mcp.json", string(config))
			write("scripts/leave.js", `const { defineTool, tools } = require("dsh");
const process = require("dsh/process");
const output = { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] };
const leave = (name, tail) => tools.register(defineTool({ name, description: "Leaves a forged escapee.", parameters: {}, output,
  async execute(args, exec) {
    const r = await process.run(["sh", "-c", "setsid env DSH_CALL_TOKEN=fake sleep `+forged+` </dev/null >/dev/null 2>&1 & sleep 0.1; " + tail], { signal: exec.signal });
    return r.stdout.trim();
  } }));
leave("leave", "echo started");
leave("leave_wait", "exec sleep `+long+`");
`)
			calls := `[{"id":"a","name":"leave","arguments":{}},{"id":"b","name":"e__echo","arguments":{"text":"hi"}}]`
			if tc.sig != 0 {
				calls = `[{"id":"a","name":"leave_wait","arguments":{}}]`
			}
			write("calls.json", calls)
			cmd := exec.Command(bin, "--scripts", filepath.Join(dir, "scripts"), "--approve", "allow", "--mcp-config", filepath.Join(dir, "mcp.json"), "run", "--json", "calls.json")
			cmd.Dir = dir
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.sig != 0 {
				running := func() bool {
					for _, m := range markers {
						if len(processesWith("sleep "+m)) == 0 {
							return false
						}
					}
					return true
				}
				for end := time.Now().Add(20 * time.Second); !running(); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(end) {
						_ = cmd.Process.Kill()
						_ = cmd.Wait()
						t.Fatalf("the processes did not all start\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
					}
				}
				if err := cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
			}
			err := cmd.Wait()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, stdout.String(), stderr.String())
			}
			if tc.sig == 0 && (!strings.Contains(stdout.String(), `"callId":"a","result":{"isError":false`) || !strings.Contains(stdout.String(), `"callId":"b","result":{"isError":false`)) {
				t.Errorf("the imported tool's call failed:\n%s\n%s", stdout.String(), stderr.String())
			}
			for _, m := range markers {
				if pids := processesWith("sleep " + m); len(pids) > 0 {
					t.Errorf("sleep %s outlived dsh: %v", m, pids)
				}
			}
		})
	}
}
