package mcp_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/mcp"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want mcp.ServerSpec
		err  string
	}{
		{"a command line is split on spaces", "fs=npx -y  @modelcontextprotocol/server-filesystem /tmp",
			mcp.ServerSpec{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}, ""},
		{"a command alone has no arguments", "t=server", mcp.ServerSpec{Name: "t", Command: "server", Args: []string{}}, ""},
		{"quotes group words and backslashes escape", `x=run 'a b' "c \"d\" \\e" f\ g '' h"i"j`,
			mcp.ServerSpec{Name: "x", Command: "run", Args: []string{"a b", `c "d" \e`, "f g", "", "hij"}}, ""},
		{"an http URL is a streamable HTTP server", "web=http://localhost:8080/mcp", mcp.ServerSpec{Name: "web", URL: "http://localhost:8080/mcp"}, ""},
		{"an https URL too", "web=https://example.com/mcp?x=1", mcp.ServerSpec{Name: "web", URL: "https://example.com/mcp?x=1"}, ""},
		{"the name may hold digits, '_' and '-'", "my_srv-2=cmd", mcp.ServerSpec{Name: "my_srv-2", Command: "cmd", Args: []string{}}, ""},
		{"no = is refused", "npx", mcp.ServerSpec{}, "want NAME=COMMAND [ARGS...] or NAME=URL"},
		{"an empty name is refused", "=npx", mcp.ServerSpec{}, "the server name is empty"},
		{"a dot in the name is refused", "a.b=npx", mcp.ServerSpec{}, `the server name "a.b" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)`},
		{"a space in the name is refused", "a b=npx", mcp.ServerSpec{}, `the server name "a b" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)`},
		{"an escape in the name is shown escaped", "a\x1bb=npx", mcp.ServerSpec{}, `the server name "a\x1bb" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)`},
		{"a 62-character name is refused: no tool would fit beside it", strings.Repeat("a", 62) + "=npx", mcp.ServerSpec{}, `the server name "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)`},
		{"a 61-character name is accepted", strings.Repeat("a", 61) + "=npx", mcp.ServerSpec{Name: strings.Repeat("a", 61), Command: "npx", Args: []string{}}, ""},
		{"a name with __ is refused: __ ends the server's name in a tool's", "a__b=npx", mcp.ServerSpec{}, `the server name "a__b" must not contain "__" nor end with '_' (it prefixes the tool names: a__b__tool)`},
		{"a name ending with _ is refused", "a_=npx", mcp.ServerSpec{}, `the server name "a_" must not contain "__" nor end with '_' (it prefixes the tool names: a___tool)`},
		{"an empty command is refused", "fs=  ", mcp.ServerSpec{}, "the command is empty"},
		{"an unterminated single quote is refused", "fs=npx 'a", mcp.ServerSpec{}, "unterminated ' quote"},
		{"an unterminated double quote is refused", `fs=npx "a`, mcp.ServerSpec{}, `unterminated " quote`},
		{"a trailing backslash is refused", `fs=npx a\`, mcp.ServerSpec{}, "a backslash ends the command line"},
		{"a URL without a host is refused", "web=http:///mcp", mcp.ServerSpec{}, `the URL "http:///mcp" has no host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseSpec(tt.in)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("ParseSpec(%q) error = %v, want %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSpec(%q): %v", tt.in, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSpec(%q) = %#v\nwant %#v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []mcp.ServerSpec
		err  string
	}{
		{"servers are read in file order, other keys ignored", `{"globalShortcut":"x","mcpServers":{
			"web":{"type":"http","url":"https://example.com/mcp"},
			"fs":{"command":"npx","args":["-y","srv","/tmp"],"env":{"K":"V"}},
			"local":{"type":"stdio","command":"./server"},
			"plain":{"url":"http://127.0.0.1:9000/mcp"}}}`,
			[]mcp.ServerSpec{
				{Name: "web", URL: "https://example.com/mcp"},
				{Name: "fs", Command: "npx", Args: []string{"-y", "srv", "/tmp"}, Env: map[string]string{"K": "V"}},
				{Name: "local", Command: "./server"},
				{Name: "plain", URL: "http://127.0.0.1:9000/mcp"},
			}, ""},
		{"no servers is an empty list", `{"mcpServers":{}}`, []mcp.ServerSpec{}, ""},
		{"text that is not JSON is refused", `{"mcpServers":`, nil, "not JSON: "},
		{"a root that is not an object is refused", `[]`, nil, `want an object with "mcpServers"`},
		{"a missing mcpServers is refused", `{"servers":{}}`, nil, `no "mcpServers" object`},
		{"mcpServers must be an object", `{"mcpServers":[]}`, nil, `"mcpServers" must be an object of servers`},
		{"a bad name is refused", `{"mcpServers":{"a.b":{"command":"x"}}}`, nil, `server "a.b": the server name "a.b" must be 1 to 61 ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME__tool)`},
		{"a server must be an object", `{"mcpServers":{"a":"x"}}`, nil, `server "a": want an object`},
		{"command must be a string", `{"mcpServers":{"a":{"command":1}}}`, nil, `server "a": "command" must be a string`},
		{"args must be strings", `{"mcpServers":{"a":{"command":"x","args":["y",2]}}}`, nil, `server "a": "args" must be an array of strings`},
		{"env must hold strings", `{"mcpServers":{"a":{"command":"x","env":{"K":1}}}}`, nil, `server "a": "env" must be an object of strings`},
		{"cwd beside a url is refused", `{"mcpServers":{"a":{"url":"http://h/mcp","cwd":"/"}}}`, nil, `server "a": "args", "env" and "cwd" apply to a command, not a url`},
		{"a timeout is milliseconds", `{"mcpServers":{"a":{"command":"x","timeout":1500},"b":{"url":"http://h/mcp","timeout":0.5}}}`,
			[]mcp.ServerSpec{{Name: "a", Command: "x", Timeout: 1500 * time.Millisecond}, {Name: "b", URL: "http://h/mcp", Timeout: 500 * time.Microsecond}}, ""},
		{"a timeout of zero is refused", `{"mcpServers":{"a":{"command":"x","timeout":0}}}`, nil, `server "a": "timeout" must be a positive number of milliseconds, at most a year`},
		{"a negative timeout is refused", `{"mcpServers":{"a":{"command":"x","timeout":-5}}}`, nil, `server "a": "timeout" must be a positive number of milliseconds, at most a year`},
		{"a timeout as a string is refused", `{"mcpServers":{"a":{"command":"x","timeout":"60s"}}}`, nil, `server "a": "timeout" must be a positive number of milliseconds, at most a year`},
		{"a timeout past a year is refused", `{"mcpServers":{"a":{"command":"x","timeout":1e300}}}`, nil, `server "a": "timeout" must be a positive number of milliseconds, at most a year`},
		{"headers go with a url", `{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"Authorization":"Bearer t","X-Team":"x"}}}}`,
			[]mcp.ServerSpec{{Name: "a", URL: "http://h/mcp", Headers: map[string]string{"Authorization": "Bearer t", "X-Team": "x"}}}, ""},
		{"headers must hold strings", `{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"X":1}}}}`, nil, `server "a": "headers" must be an object of strings`},
		{"a header name must be a token", `{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"X Y":"v"}}}}`, nil, `server "a": the header name "X Y" is not an HTTP token`},
		{"a header value must not break the line", `{"mcpServers":{"a":{"url":"http://h/mcp","headers":{"X":"v\r\nEvil: 1"}}}}`, nil, `server "a": the value of header "X" has a control character`},
		{"headers beside a command are refused", `{"mcpServers":{"a":{"command":"x","headers":{}}}}`, nil, `server "a": "headers" apply to a url, not a command`},
		{"an unknown type is refused", `{"mcpServers":{"a":{"type":"ws","url":"http://h/ws"}}}`, nil, `server "a": type "ws" is not supported (want "stdio", "http", "streamable-http" or "sse")`},
		{"neither command nor url is refused", `{"mcpServers":{"a":{"args":[]}}}`, nil, `server "a": want "command" (stdio) or "url" (http)`},
		{"both command and url are refused", `{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`, nil, `server "a": give "command" or "url", not both`},
		{"stdio with a url is refused", `{"mcpServers":{"a":{"type":"stdio","url":"http://h"}}}`, nil, `server "a": type "stdio" needs "command", not "url"`},
		{"http with a command is refused", `{"mcpServers":{"a":{"type":"http","command":"x"}}}`, nil, `server "a": type "http" needs "url", not "command"`},
		{"args beside a url are refused", `{"mcpServers":{"a":{"url":"http://h","args":[]}}}`, nil, `server "a": "args", "env" and "cwd" apply to a command, not a url`},
		{"a url must be http or https", `{"mcpServers":{"a":{"url":"ftp://h"}}}`, nil, `server "a": the URL "ftp://h" must start with http:// or https://`},
		{"a url needs a host", `{"mcpServers":{"a":{"url":"https://"}}}`, nil, `server "a": the URL "https://" has no host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseConfig([]byte(tt.in))
			if tt.err != "" {
				if err == nil || len(err.Error()) < len(tt.err) || err.Error()[:len(tt.err)] != tt.err {
					t.Fatalf("ParseConfig error = %v, want %q", err, tt.err)
				}
				if tt.err != "not JSON: " && err.Error() != tt.err {
					t.Fatalf("ParseConfig error = %q, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseConfig = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestLoadConfigReadsTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers":{"a":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, warnings, err := mcp.LoadConfig(path)
	if err != nil || warnings != nil || !reflect.DeepEqual(got, []mcp.ServerSpec{{Name: "a", Command: "x"}}) {
		t.Errorf("LoadConfig = %#v, %q, %v", got, warnings, err)
	}
	if _, _, err := mcp.LoadConfig(filepath.Join(t.TempDir(), "missing.json")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}

func TestCheckNames(t *testing.T) {
	t.Run("distinct names pass", func(t *testing.T) {
		if err := mcp.CheckNames([]mcp.ServerSpec{{Name: "a"}, {Name: "b"}}); err != nil {
			t.Error(err)
		}
	})
	t.Run("a name declared twice is refused", func(t *testing.T) {
		err := mcp.CheckNames([]mcp.ServerSpec{{Name: "a"}, {Name: "b"}, {Name: "a"}})
		if err == nil || err.Error() != `MCP server "a" is declared twice` {
			t.Errorf("error = %v", err)
		}
	})
}
