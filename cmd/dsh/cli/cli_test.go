package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/dsl"
)

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{nil, false, "(devel)"},
		{&debug.BuildInfo{}, true, "(devel)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "(devel)"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, true, "v0.3.1"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3a0d5a9650f6c479a1ea168b42254aeeea0441e3"}, {Key: "vcs.time", Value: "2026-12-06T09:19:28Z"},
		}}, true, "v0.0.0-20261206091928-3a0d5a9650f6"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3a0d5a9650f6c479a1ea168b42254aeeea0441e3"}, {Key: "vcs.modified", Value: "true"},
		}}, true, "v0.0.0-3a0d5a9650f6+dirty"},
	} {
		if got := versionOf(tc.info, tc.ok); got != tc.want {
			t.Errorf("versionOf(%+v, %v) = %q, want %q", tc.info, tc.ok, got, tc.want)
		}
	}
}

func TestVersionJSON(t *testing.T) {
	platform := `"go":"` + runtime.Version() + `","os":"` + runtime.GOOS + `","arch":"` + runtime.GOARCH + `"`
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"without build information, the devel version and this Go", nil, false, `{"version":"(devel)",` + platform + `}`},
		{"a release names its version and the Go it was built with", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.1"}}, true,
			`{"version":"v0.3.1","go":"go1.26.0","os":"` + runtime.GOOS + `","arch":"` + runtime.GOARCH + `"}`},
		{"a build from a checkout names its commit, in a fixed order", &debug.BuildInfo{GoVersion: runtime.Version(), Settings: []debug.BuildSetting{
			{Key: "vcs.modified", Value: "true"}, {Key: "vcs.time", Value: "2026-01-02T03:04:05Z"}, {Key: "vcs.revision", Value: "0123abc"}, {Key: "GOOS", Value: "plan9"},
		}}, true, `{"version":"v0.0.0-20260102030405-0123abc+dirty",` + platform + `,"revision":"0123abc","revisionTime":"2026-01-02T03:04:05Z","modified":true}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := dsl.Marshal(versionJSON(tc.info, tc.ok))
			if err != nil || string(got) != tc.want {
				t.Errorf("versionJSON = %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}

// run calls Run in-process with stdin and returns its status and output.
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestRunInProcess checks that Run reads "-" from the reader it is given
// and that one run's flags do not leak into the next.
func TestRunInProcess(t *testing.T) {
	schema := filepath.Join(t.TempDir(), "schema.json")
	err := os.WriteFile(schema, []byte(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := run(t, `{}`, "schema", "validate", "--args", schema, "-")
	if code != exitViolations || stdout != "missing required property \"path\"\n" || stderr != "" {
		t.Errorf("validate --args: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, `{}`, "schema", "validate", schema, "-")
	if code != exitViolations || stdout != "missing required property \"value.path\"\n" || stderr != "" {
		t.Errorf("validate after validate --args: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestRunUsageError(t *testing.T) {
	code, stdout, stderr := run(t, "", "schema", "validate", "only-one.json")
	want := "dsh: schema validate needs SCHEMA and VALUE, got 1 argument(s)\nRun 'dsh schema validate --help' for usage.\n"
	if code != exitTrouble || stdout != "" || stderr != want {
		t.Errorf("status %d, stdout %q, stderr %q; want 2, \"\", %q", code, stdout, stderr, want)
	}
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

// TestRunCallsInProcess runs plugins in-process: every goroutine the
// session started (interpreters, the prompt's reader) ends with Run.
func TestRunCallsInProcess(t *testing.T) {
	dir := t.TempDir()
	plugin := `const { defineTool, tools, on } = require("dsh");
tools.register(defineTool({
  name: "hi", description: "Say hi.", parameters: {},
  output: { schema: { type: "string" }, render: (args, value) => [{ type: "text", text: value }] },
  async execute() { return "hi"; },
}));
on("tools/pre-execute", async (exec, next) => ({ kind: "ask", reason: "may I?" }));
`
	if err := os.WriteFile(filepath.Join(dir, "hi.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "y\n", "--scripts", dir, "--workspace", dir, "--approve", "prompt", "call", "hi")
	if code != exitOK || stdout != "✓ hi c1\n  hi\n\n1 call: 1 ok, 0 failed · ran c1\n" {
		t.Errorf("status %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if stderr != "dsh: hi (c1) asks for approval: may I?\nAllow hi once? [y/N] " {
		t.Errorf("stderr %q", stderr)
	}
}
