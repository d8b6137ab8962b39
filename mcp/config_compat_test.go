package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// compatEnv is the environment the rows of TestReadConfigCompat expand.
var compatEnv = map[string]string{"HOME": "/home/ann", "TOKEN": "t0k", "EMPTY": "", "PORT": "8080"}

func compatLookup(k string) (string, bool) {
	v, ok := compatEnv[k]
	return v, ok
}

func TestReadConfigCompat(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		want     []mcp.ServerSpec
		warnings []string
		err      string
	}{
		{"${VAR} is expanded in command, args, env, cwd, url and headers",
			`{"mcpServers":{
				"fs":{"command":"${HOME}/bin/srv","args":["--root","${HOME}/notes","a${PORT}b${PORT}"],"env":{"API_KEY":"${TOKEN}"},"cwd":"${HOME}"},
				"web":{"type":"http","url":"http://localhost:${PORT}/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`,
			[]mcp.ServerSpec{
				{Name: "fs", Command: "/home/ann/bin/srv", Args: []string{"--root", "/home/ann/notes", "a8080b8080"}, Env: map[string]string{"API_KEY": "t0k"}, Dir: "/home/ann"},
				{Name: "web", URL: "http://localhost:8080/mcp", Headers: map[string]string{"Authorization": "Bearer t0k"}},
			}, nil, ""},
		{"${VAR:-default} takes the default when VAR is unset or empty, the value when set",
			`{"mcpServers":{"a":{"command":"x","args":["${NOPE:-/tmp/d}","${EMPTY:-e}","${PORT:-1}","${NOPE:-}","${NOPE:-a:-b}"]}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Args: []string{"/tmp/d", "e", "8080", "", "a:-b"}}}, nil, ""},
		{"a set but empty ${VAR} is empty",
			`{"mcpServers":{"a":{"command":"x","args":["[${EMPTY}]"]}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Args: []string{"[]"}}}, nil, ""},
		{"$$, $VAR and a lone $ stay as they are",
			`{"mcpServers":{"a":{"command":"x","args":["$$","$HOME","cost: 5$","$","$$${PORT}"]}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Args: []string{"$$", "$HOME", "cost: 5$", "$", "$$8080"}}}, nil, ""},
		{"keys and the type are not expanded",
			`{"mcpServers":{"a":{"command":"x","env":{"${HOME}":"v"}}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Env: map[string]string{"${HOME}": "v"}}}, nil, ""},
		{"an unset ${VAR} in args names the server and the variable",
			`{"mcpServers":{"fs":{"command":"x","args":["a","${API_KEY}"]}}}`, nil, nil,
			`server "fs": args[1]: the variable API_KEY is not set (set it, or give a default: ${API_KEY:-default})`},
		{"an unset ${VAR} in the command is refused",
			`{"mcpServers":{"fs":{"command":"${BIN}/srv"}}}`, nil, nil,
			`server "fs": command: the variable BIN is not set (set it, or give a default: ${BIN:-default})`},
		{"an unset ${VAR} in env is refused",
			`{"mcpServers":{"fs":{"command":"x","env":{"KEY":"${SECRET}"}}}}`, nil, nil,
			`server "fs": env["KEY"]: the variable SECRET is not set (set it, or give a default: ${SECRET:-default})`},
		{"an unset ${VAR} in the url is refused",
			`{"mcpServers":{"web":{"url":"https://${HOST}/mcp"}}}`, nil, nil,
			`server "web": url: the variable HOST is not set (set it, or give a default: ${HOST:-default})`},
		{"an unset ${VAR} in a header is refused",
			`{"mcpServers":{"web":{"url":"https://h/mcp","headers":{"Authorization":"Bearer ${GH_TOKEN}"}}}}`, nil, nil,
			`server "web": headers["Authorization"]: the variable GH_TOKEN is not set (set it, or give a default: ${GH_TOKEN:-default})`},
		{"a ${ without } is refused",
			`{"mcpServers":{"a":{"command":"x","args":["${HOME"]}}}`, nil, nil,
			`server "a": args[0]: a ${ has no closing }`},
		{"${} is refused",
			`{"mcpServers":{"a":{"command":"x","args":["${}"]}}}`, nil, nil,
			`server "a": args[0]: ${} does not name a variable (want ${NAME} or ${NAME:-default})`},
		{"${1X} is refused",
			`{"mcpServers":{"a":{"command":"x","args":["${1X}"]}}}`, nil, nil,
			`server "a": args[0]: ${1X} does not name a variable (want ${NAME} or ${NAME:-default})`},
		{"an expanded header value is still checked for line breaks",
			`{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"X":"${NOPE:-v\r\nEvil: 1}"}}}}`, nil, nil,
			`server "a": the value of header "X" has a control character`},
		{"types stdio, http and streamable-http are read",
			`{"mcpServers":{"s":{"type":"stdio","command":"x"},"h":{"type":"http","url":"http://h/mcp"},"sh":{"type":"streamable-http","url":"http://h/mcp"}}}`,
			[]mcp.ServerSpec{{Name: "s", Command: "x"}, {Name: "h", URL: "http://h/mcp"}, {Name: "sh", URL: "http://h/mcp"}}, nil, ""},
		{"type sse is a legacy SSE server",
			`{"mcpServers":{"old":{"type":"sse","url":"http://h/sse","headers":{"X":"1"}}}}`,
			[]mcp.ServerSpec{{Name: "old", URL: "http://h/sse", Headers: map[string]string{"X": "1"}, SSE: true}}, nil, ""},
		{"type sse with a command is refused",
			`{"mcpServers":{"old":{"type":"sse","command":"x"}}}`, nil, nil,
			`server "old": type "sse" needs "url", not "command"`},
		{"type streamable-http with a command is refused",
			`{"mcpServers":{"a":{"type":"streamable-http","command":"x"}}}`, nil, nil,
			`server "a": type "streamable-http" needs "url", not "command"`},
		{"an unknown type is refused",
			`{"mcpServers":{"a":{"type":"websocket","url":"http://h/mcp"}}}`, nil, nil,
			`server "a": type "websocket" is not supported (want "stdio", "http", "streamable-http" or "sse")`},
		{"disabled: true skips the server, unchecked",
			`{"mcpServers":{"off":{"disabled":true,"command":"${UNSET}","junk":1},"bad.name":{"disabled":true},"on":{"disabled":false,"command":"x"}}}`,
			[]mcp.ServerSpec{{Name: "on", Command: "x"}}, nil, ""},
		{"disabled must be a boolean",
			`{"mcpServers":{"a":{"disabled":"yes","command":"x"}}}`, nil, nil,
			`server "a": "disabled" must be true or false`},
		{"cwd sets the working directory",
			`{"mcpServers":{"a":{"command":"./srv","cwd":"/srv/mcp"}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "./srv", Dir: "/srv/mcp"}}, nil, ""},
		{"cwd must be a string",
			`{"mcpServers":{"a":{"command":"x","cwd":1}}}`, nil, nil,
			`server "a": "cwd" must be a string`},
		{"cwd beside a url is refused",
			`{"mcpServers":{"a":{"url":"http://h/mcp","cwd":"/"}}}`, nil, nil,
			`server "a": "args", "env" and "cwd" apply to a command, not a url`},
		{"keys dsh does not use are warnings, in file order",
			`{"mcpServers":{
				"fs":{"command":"x","autoApprove":["read"],"alwaysAllow":[],"description":"files"},
				"web":{"url":"http://h/mcp","transportType":"x"}}}`,
			[]mcp.ServerSpec{{Name: "fs", Command: "x"}, {Name: "web", URL: "http://h/mcp"}},
			[]string{
				`server "fs": key "autoApprove" is not used by dsh (ignored)`,
				`server "fs": key "alwaysAllow" is not used by dsh (ignored)`,
				`server "fs": key "description" is not used by dsh (ignored)`,
				`server "web": key "transportType" is not used by dsh (ignored)`,
			}, ""},
		{"an unused key with a control character is shown escaped",
			`{"mcpServers":{"a":{"command":"x","k\u001b":1}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x"}}, []string{`server "a": key "k\x1b" is not used by dsh (ignored)`}, ""},
		{"timeout and maxTools sit beside the Claude keys",
			`{"mcpServers":{"a":{"command":"x","timeout":2000,"maxTools":5,"autoApprove":[]}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Timeout: 2e9, MaxTools: 5}},
			[]string{`server "a": key "autoApprove" is not used by dsh (ignored)`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, warnings, err := mcp.ReadConfig([]byte(tt.in), compatLookup)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ReadConfig error = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadConfig = %#v\nwant %#v", got, tt.want)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings = %q\nwant %q", warnings, tt.warnings)
			}
		})
	}
}

func TestConfigCompatParseConfigExpandsTheProcessEnvironment(t *testing.T) {
	t.Setenv("DSH_CONFIG_COMPAT", "/from/env")
	got, err := mcp.ParseConfig([]byte(`{"mcpServers":{"a":{"command":"${DSH_CONFIG_COMPAT}/srv"}}}`))
	if err != nil || !reflect.DeepEqual(got, []mcp.ServerSpec{{Name: "a", Command: "/from/env/srv"}}) {
		t.Errorf("ParseConfig = %#v, %v", got, err)
	}
}

func TestConfigCompatLoadConfigReturnsTheWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "claude_desktop_config.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"a":{"command":"x","autoApprove":[]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, warnings, err := mcp.LoadConfig(path)
	if err != nil || !reflect.DeepEqual(warnings, []string{`server "a": key "autoApprove" is not used by dsh (ignored)`}) {
		t.Errorf("LoadConfig warnings = %q, %v", warnings, err)
	}
}

// TestConfigCompatTransports connects the servers a config's cwd and type
// "sse" describe, with the default dialer.
func TestConfigCompatTransports(t *testing.T) {
	t.Run("cwd is the stdio server's working directory: ./srv is found there", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Symlink(os.Args[0], filepath.Join(dir, "srv")); err != nil {
			t.Fatal(err)
		}
		specs, _, err := mcp.ReadConfig([]byte(`{"mcpServers":{"std":{"command":"./srv","args":["`+stdioServerArg+`"],"cwd":"${DIR}"}}}`),
			func(k string) (string, bool) { return dir, k == "DIR" })
		if err != nil {
			t.Fatal(err)
		}
		svc := engine.New()
		client, diags := mcp.Connect(context.Background(), svc, specs, mcp.Options{MinBackoff: 1})
		defer client.Close()
		for _, d := range diags {
			if !d.IsTool() {
				t.Fatalf("not connected: %v", d)
			}
		}
		if r := impCall(svc, context.Background(), "std__echo", impObj(t, `{"text":"in cwd"}`)); r.IsError || r.Value != "echo: in cwd" {
			t.Errorf("result = %s", impJSON(t, r))
		}
	})

	t.Run("type sse reaches a legacy SSE server", func(t *testing.T) {
		srv := impServer(nil, nil)
		hs := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
		defer hs.Close()
		specs, _, err := mcp.ReadConfig([]byte(`{"mcpServers":{"old":{"type":"sse","url":"`+hs.URL+`"}}}`), compatLookup)
		if err != nil {
			t.Fatal(err)
		}
		svc := engine.New()
		client, diags := mcp.Connect(context.Background(), svc, specs, mcp.Options{MinBackoff: 1})
		defer client.Close()
		for _, d := range diags {
			if !d.IsTool() {
				t.Fatalf("not connected: %v", d)
			}
		}
		if r := impCall(svc, context.Background(), "old__echo", impObj(t, `{"text":"over sse"}`)); r.IsError || r.Value != "echo: over sse" {
			t.Errorf("result = %s", impJSON(t, r))
		}
	})
}
