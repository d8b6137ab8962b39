package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/mcp"
)

// mcpE2EFixtures is the folder of TestMCPE2E's client and policies.
var mcpE2EFixtures = filepath.Join("testdata", "mcpe2e")

// mcpE2ECeiling bounds one run of the TypeScript client, so that a hung
// server fails the subtest instead of the whole test binary. It is a guard
// against hangs, not an assertion: a run takes a few seconds.
const mcpE2ECeiling = 3 * time.Minute

// mcpE2EImportWait is how long the client polls tools/list for the
// imported tools: dsh serve answers at once and connects its imports in
// the background. A ceiling too, not an assertion.
const mcpE2EImportWait = 90 * time.Second

// mcpE2ESettle ends that wait sooner when some tools are still missing:
// once every server has tools served (a listing arrives whole) and the list
// has not changed for this long, the missing ones are not coming.
const mcpE2ESettle = 3 * time.Second

// servedName is the pattern every name dsh serves must match: Claude
// Desktop refuses a whole tool list otherwise, and so do other clients.
var servedName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// mcpE2EServers are the npm servers TestMCPE2E imports, by the name dsh
// imports them under, and the package bin that starts each.
var mcpE2EServers = []struct{ name, bin string }{
	{"ev", "mcp-server-everything"},
	{"fs", "mcp-server-filesystem"},
	{"mem", "mcp-server-memory"},
}

// TestMCPE2E runs the path users take through dsh as an MCP gateway: a
// client written with the official TypeScript SDK
// (testdata/mcpe2e/client.mjs) talks to the built `dsh serve`, over stdio
// with a JavaScript policy in front and over HTTP with its Lua twin, and
// dsh imports three reference servers from npm through an mcpServers
// config file: server-everything (ev), server-filesystem serving a
// temporary directory (fs) and server-memory keeping its graph in a
// temporary file (mem). The client checks that every name served matches
// ^[a-zA-Z0-9_-]{1,64}$; that every tool each server lists to a client
// like dsh's import client (roots and elicitation declared; the same
// client fetches the lists directly) is served, under NAME__tool, but a
// tool that needs tasks, which dsh reports instead; that calls succeed
// through both hops (an echo, a file written then read, an entity created
// then read); that the policy's denial reaches the client word for word;
// and that server-everything's elicitation reaches the client through dsh
// and the client's answer reaches the server.
//
// It downloads nothing: it runs when DSH_MCP_SERVERS (or else
// DSH_MCP_CONFORMANCE) names a folder where tests/npm/package-lock.json
// was installed, as `make test` does with scripts/npm-setup.sh, and skips
// otherwise. By hand:
//
//	DSH_MCP_SERVERS=$(scripts/npm-setup.sh) go test -run TestMCPE2E -count=1 ./tests/
func TestMCPE2E(t *testing.T) {
	e := newMCPE2E(t)
	dsh := buildDsh(t)

	// The servers' own lists, fetched directly once for both transports.
	direct := e.listDirect(t)
	var want, allowed, prefixes []string
	for _, s := range mcpE2EServers {
		prefixes = append(prefixes, s.name+mcp.Separator)
		lists := direct.Servers[s.name]
		if len(lists.Declared) == 0 {
			t.Fatalf("server %s listed no tools directly", s.name)
		}
		for _, tool := range lists.Declared {
			if tool.TaskSupport != "required" {
				want = append(want, mcp.ToolName(s.name, tool.Name))
			}
		}
		for _, tool := range lists.Every {
			allowed = append(allowed, mcp.ToolName(s.name, tool.Name))
		}
	}

	runs := []struct {
		name, transport, policy, lang string
	}{
		{"over stdio with a JavaScript policy", "stdio", "deny_env.js", "JavaScript"},
		{"over HTTP with a Lua policy", "http", "deny_env.lua", "Lua"},
	}
	for _, run := range runs {
		t.Run("a TypeScript SDK client reaches three npm servers through dsh serve "+run.name, func(t *testing.T) {
			g := e.newGateway(t, dsh, run.policy)
			notes := filepath.Join(g.served, "notes.txt")
			calls := []e2eCall{
				{"echo", "ev__echo", map[string]any{"message": "hello through dsh"}},
				{"write", "fs__write_file", map[string]any{"path": notes, "content": "written through dsh\n"}},
				{"read", "fs__read_text_file", map[string]any{"path": notes}},
				{"create", "mem__create_entities", map[string]any{"entities": []any{
					map[string]any{"name": "dsh", "entityType": "project", "observations": []any{"serves MCP to clients"}},
				}}},
				{"open", "mem__open_nodes", map[string]any{"names": []any{"dsh"}}},
				{"denied", "ev__get-env", map[string]any{}},
				{"elicit", "ev__trigger-elicitation-request", map[string]any{}},
			}
			config := map[string]any{
				"mode":         "gateway",
				"want":         want,
				"waitMs":       mcpE2EImportWait.Milliseconds(),
				"prefixes":     prefixes,
				"settleMs":     mcpE2ESettle.Milliseconds(),
				"calls":        calls,
				"elicitAnswer": map[string]any{"name": "Ada Lovelace", "check": true, "integer": 7},
			}
			if run.transport == "http" {
				config["url"] = serveHTTP(t, dsh, g.work, g.flags...)
			} else {
				config["stdio"] = map[string]any{"command": dsh, "args": append(slices.Clone(g.flags), "serve"), "cwd": g.work}
			}
			var r struct {
				Served       []string                  `json:"served"`
				Prompts      []string                  `json:"prompts"`
				Missing      []string                  `json:"missing"`
				Calls        map[string]e2eCallOutcome `json:"calls"`
				Elicitations []struct {
					Message    string   `json:"message"`
					Properties []string `json:"properties"`
				} `json:"elicitations"`
			}
			e.client(t, config, &r)

			t.Run("every name served matches the pattern clients require", func(t *testing.T) {
				for _, name := range append(slices.Clone(r.Served), r.Prompts...) {
					if !servedName.MatchString(name) {
						t.Errorf("dsh serves %q, which does not match %s", name, servedName)
					}
				}
			})
			t.Run("every tool of the three servers is served under NAME__tool", func(t *testing.T) {
				if len(r.Missing) != 0 {
					t.Errorf("dsh does not serve %q (once its list settled, or after %v)\n(it serves %q)", r.Missing, mcpE2EImportWait, r.Served)
				}
				for _, name := range r.Served {
					if !slices.Contains(allowed, name) {
						t.Errorf("dsh serves %q, which no server lists", name)
					}
				}
			})
			t.Run("calls the policy allows reach the servers and their answers come back", func(t *testing.T) {
				g.checkCall(t, r.Calls, "echo", func(text string) bool { return text == "Echo: hello through dsh" })
				g.checkCall(t, r.Calls, "write", func(string) bool { return true })
				if b, err := os.ReadFile(notes); err != nil || string(b) != "written through dsh\n" {
					t.Errorf("fs__write_file left %q (%v), want the text written", b, err)
				}
				g.checkCall(t, r.Calls, "read", func(text string) bool { return text == "written through dsh\n" })
				g.checkCall(t, r.Calls, "create", func(text string) bool { return strings.Contains(text, `"serves MCP to clients"`) })
				g.checkCall(t, r.Calls, "open", func(text string) bool { return strings.Contains(text, `"serves MCP to clients"`) })
				if b, err := os.ReadFile(g.memory); err != nil || !bytes.Contains(b, []byte(`"serves MCP to clients"`)) {
					t.Errorf("the memory server's file holds %q (%v), want the entity created", b, err)
				}
			})
			t.Run("the policy's denial reaches the client word for word", func(t *testing.T) {
				// A denial's content is "Error: " and the reason (spec/pipeline.md).
				want := e2eCallOutcome{IsError: true, Text: "Error: ev__get-env would show the server's environment (" + run.lang + " policy)"}
				if got := r.Calls["denied"]; got != want {
					t.Errorf("ev__get-env gave %+v, want %+v", got, want)
				}
			})
			t.Run("the server's elicitation is answered by the client through dsh", func(t *testing.T) {
				if len(r.Elicitations) != 1 || r.Elicitations[0].Message != "Please provide inputs for the following fields:" ||
					!slices.Contains(r.Elicitations[0].Properties, "name") {
					t.Errorf("the client was asked %+v, want server-everything's one form, with a name field", r.Elicitations)
				}
				g.checkCall(t, r.Calls, "elicit", func(text string) bool {
					return strings.Contains(text, "User provided the requested information!") && strings.Contains(text, "- Name: Ada Lovelace")
				})
			})
		})
	}
}

// mcpE2E is the npm folder of TestMCPE2E: node, the SDK, the servers.
type mcpE2E struct {
	node, sdk string
	servers   map[string]string // dsh's name for the server -> its script
}

// newMCPE2E finds the npm folder in DSH_MCP_SERVERS or DSH_MCP_CONFORMANCE
// and what the test needs in it, and skips the test when any is missing.
func newMCPE2E(t *testing.T) *mcpE2E {
	t.Helper()
	const setup = "run `DSH_MCP_SERVERS=$(scripts/npm-setup.sh) go test -run TestMCPE2E ./tests/`, or `make test`"
	env, dir := "DSH_MCP_SERVERS", os.Getenv("DSH_MCP_SERVERS")
	if dir == "" {
		env, dir = "DSH_MCP_CONFORMANCE", os.Getenv("DSH_MCP_CONFORMANCE")
	}
	if dir == "" {
		t.Skip("the npm packages of tests/npm are not set up (npm missing?): " + setup)
	}
	e := &mcpE2E{sdk: filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"), servers: map[string]string{}}
	if _, err := os.Stat(filepath.Join(e.sdk, "package.json")); err != nil {
		t.Skipf("%s=%s has no @modelcontextprotocol/sdk (%v): %s", env, dir, err, setup)
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	for _, s := range mcpE2EServers {
		script, err := filepath.EvalSymlinks(filepath.Join(bin, s.bin))
		if err != nil {
			t.Skipf("%s=%s has no node_modules/.bin/%s (%v): %s", env, dir, s.bin, err, setup)
		}
		e.servers[s.name] = script
	}
	node, err := lookPathIn("node", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err != nil {
		t.Skipf("no node in %s or on PATH: install Node 20 or later", bin)
	}
	e.node = node
	return e
}

// mcpServers is an mcpServers config (Claude Desktop's and Claude Code's
// shape) for the three servers, the filesystem server serving dir and the
// memory server keeping its graph in memory.
func (e *mcpE2E) mcpServers(dir, memory string) map[string]any {
	servers := map[string]any{}
	for _, s := range mcpE2EServers {
		server := map[string]any{"command": e.node, "args": []string{e.servers[s.name]}}
		switch s.name {
		case "fs":
			server["args"] = []string{e.servers[s.name], dir}
		case "mem":
			server["env"] = map[string]string{"MEMORY_FILE_PATH": memory}
		}
		servers[s.name] = server
	}
	return servers
}

// e2eTool is a tool as the client reports it.
type e2eTool struct {
	Name        string `json:"name"`
	TaskSupport string `json:"taskSupport"`
}

// e2eDirect is the client's report in direct mode: each server's tools
// listed to a client declaring roots and elicitation, and to one
// declaring every capability.
type e2eDirect struct {
	Servers map[string]struct {
		Declared []e2eTool `json:"declared"`
		Every    []e2eTool `json:"every"`
	} `json:"servers"`
}

// listDirect has the client list each server's tools directly.
func (e *mcpE2E) listDirect(t *testing.T) e2eDirect {
	t.Helper()
	root := realTempDir(t)
	dir, memory := filepath.Join(root, "served"), filepath.Join(root, "memory.jsonl")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var r e2eDirect
	e.client(t, map[string]any{"mode": "direct", "servers": e.mcpServers(dir, memory)}, &r)
	return r
}

// client runs client.mjs with config (plus the SDK's folder) and decodes
// its report into report.
func (e *mcpE2E) client(t *testing.T, config map[string]any, report any) {
	t.Helper()
	config["sdk"] = e.sdk
	b, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join(mcpE2EFixtures, "client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), mcpE2ECeiling)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.node, script, file)
	cmd.Dir = t.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		t.Fatalf("node client.mjs (%s): %v\n%s\nits standard error (dsh's and the servers' too):\n%s", config["mode"], err, out, stderr.String())
	}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("client.mjs's report: %v\n%s\nits standard error:\n%s", err, out, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client.mjs's standard error (dsh's and the servers' too):\n%s", stderr.String())
		}
	})
}

// e2eCall is one call the client makes through dsh, named by label.
type e2eCall struct {
	Label string         `json:"label"`
	Name  string         `json:"name"`
	Args  map[string]any `json:"args"`
}

// e2eCallOutcome is a call's result as the client saw it: its text
// blocks joined, or the protocol error that replaced it.
type e2eCallOutcome struct {
	IsError       bool   `json:"isError"`
	Text          string `json:"text"`
	ProtocolError string `json:"protocolError"`
}

// e2eGateway is one dsh serve's setup: the directory the filesystem
// server serves (also dsh's workspace), the memory server's file, and
// dsh's flags.
type e2eGateway struct {
	served, memory, work string
	flags                []string
}

// newGateway writes the policy fixture and an mcpServers config in a
// temporary directory and returns dsh's flags for them.
func (e *mcpE2E) newGateway(t *testing.T, dsh, policy string) *e2eGateway {
	t.Helper()
	root := realTempDir(t)
	g := &e2eGateway{served: filepath.Join(root, "served"), memory: filepath.Join(root, "memory", "memory.jsonl"), work: filepath.Join(root, "work")}
	scripts := filepath.Join(root, "scripts")
	for _, d := range []string{g.served, filepath.Dir(g.memory), g.work, scripts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src, err := os.ReadFile(filepath.Join(mcpE2EFixtures, policy))
	if err != nil {
		t.Fatal(err)
	}
	config, err := json.MarshalIndent(map[string]any{"mcpServers": e.mcpServers(g.served, g.memory)}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{filepath.Join(scripts, policy): src, filepath.Join(root, "mcp.json"): config}
	for name, content := range files {
		if err := os.WriteFile(name, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g.flags = []string{"--scripts", scripts, "--workspace", g.served, "--mcp-config", filepath.Join(root, "mcp.json"), "--approve", "allow"}
	return g
}

// checkCall fails the test unless the call labelled label succeeded with
// a text that ok accepts.
func (g *e2eGateway) checkCall(t *testing.T, calls map[string]e2eCallOutcome, label string, ok func(string) bool) {
	t.Helper()
	c, found := calls[label]
	switch {
	case !found:
		t.Errorf("the client made no %s call", label)
	case c.ProtocolError != "" || c.IsError:
		t.Errorf("the %s call failed: %+v", label, c)
	case !ok(c.Text):
		t.Errorf("the %s call answered %q", label, c.Text)
	}
}

// realTempDir is a temporary directory by its path without symlinks, as
// the filesystem server compares paths.
func realTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// serveHTTP starts `dsh ARGS... serve --http` on a free loopback port in
// dir, stops it when the test ends (failing the test when it does not
// stop cleanly), shows its standard error when the test failed, and
// returns its endpoint.
func serveHTTP(t *testing.T, dsh, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(dsh, append(slices.Clone(args), "serve", "--http", "127.0.0.1:0")...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		log    bytes.Buffer
		served bool // the server came up, so it must stop cleanly
	)
	urls := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		defer close(urls)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			mu.Lock()
			log.WriteString(line + "\n")
			mu.Unlock()
			if u, ok := strings.CutPrefix(line, "dsh: serving MCP at "); ok {
				urls <- u
			}
		}
	}()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			_ = cmd.Process.Kill()
		}
		<-drained
		if err := cmd.Wait(); err != nil && served && !isInterrupted(err) {
			t.Errorf("dsh serve: %v", err)
		}
		if t.Failed() {
			mu.Lock()
			t.Logf("dsh serve's standard error:\n%s", log.String())
			mu.Unlock()
		}
	})
	u, ok := <-urls
	if !ok {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("dsh serve exited before serving:\n%s", log.String())
	}
	served = true
	return u
}

// isInterrupted reports whether err is dsh's exit on SIGINT (status 130),
// the way serveHTTP stops it.
func isInterrupted(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 130
}
