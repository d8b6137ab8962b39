package mcp

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// ServerSpec is an MCP server to import: a command dsh starts and talks to
// over stdio (Command, Args, Env, Dir), or a streamable HTTP (or, with
// SSE, legacy HTTP+SSE) endpoint (URL).
// Exactly one of Command and URL is set.
type ServerSpec struct {
	// Name prefixes the server's tools: its tool "read_file" is the engine
	// tool "NAME__read_file" (see [ToolName]).
	Name    string
	Command string
	Args    []string
	// Env is added to the child's environment, which otherwise holds only
	// the variables of [DefaultEnv].
	Env map[string]string
	URL string
	// Headers are sent with every request to URL (an Authorization
	// header, say).
	Headers map[string]string
	// OAuth tunes the authorization flow of an HTTP import (a config's
	// "oauth" object; see oauth.go).
	OAuth *OAuthConfig
	// Timeout bounds each call of the server's tools: it is the tools'
	// engine timeout (engine.Definition.Timeout), which the engine's
	// timeout policy enforces (DefaultCallTimeout when 0).
	Timeout time.Duration
	// Dir is the working directory of a stdio server's command (dsh's own
	// when empty).
	Dir string
	// SSE makes URL a legacy HTTP+SSE endpoint (a config's type "sse"),
	// reached with the SDK's SSE client transport instead of streamable
	// HTTP.
	SSE bool
	// MaxTools is the most tools imported from the server
	// (DefaultMaxTools when 0): a listing past it stops there, and a
	// Diagnostic says the rest are not imported.
	MaxTools int
	// MaxCatalog is the most resources, and the most resource templates
	// and prompts, re-exported from the server (DefaultMaxCatalog when 0;
	// see [Catalog]): a listing past it stops there, and a Diagnostic
	// says the rest are not re-exported.
	MaxCatalog int
	// Bare serves the server's tools, resources and prompts under their
	// own names (mapped to the tool-name rule) instead of "NAME__name": a
	// config's "prefix": false, for a gateway in front of one server whose
	// clients know its names. A name that collides with another tool is a
	// Diagnostic, as any collision is.
	Bare bool
}

// prefix is what the served names of the server's items start with:
// "NAME__", or nothing for a Bare server.
func (s ServerSpec) prefix() string {
	if s.Bare {
		return ""
	}
	return s.Name + Separator
}

// DefaultCallTimeout is the timeout of an imported tool whose server sets
// none: an imported call that never answers fails after it.
const DefaultCallTimeout = 10 * time.Minute

// callTimeout is the timeout of the server's tools.
func (s ServerSpec) callTimeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultCallTimeout
}

// DefaultEnv names the variables a stdio server inherits from dsh's
// environment (those that are set): the minimal set of the MCP reference
// SDKs (enough to find programs and a home directory), and what a Node or
// Python server needs to run on a normal machine: the locale and time zone,
// the temporary and XDG directories, the certificate authorities a
// corporate network adds, and the proxy variables in both cases. No
// secrets a server was not given: NODE_OPTIONS, say, is not passed (it
// would load code into every Node server). A server's Env adds to them
// (and overrides them). Beside them, a stdio server gets the
// DSH_CALL_TOKEN dsh sets for its connection (see internal/reaper).
var DefaultEnv = []string{
	// The reference SDKs' set (POSIX, then Windows).
	"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER",
	"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PROCESSOR_ARCHITECTURE",
	"PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE",
	// Locale and time zone.
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ",
	// Directories.
	"TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME",
	// Certificate authorities.
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_DIR", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	// Proxies.
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY",
	"http_proxy", "https_proxy", "no_proxy", "all_proxy",
}

// Separator joins a server's name and its tool's: the server "fs"'s tool
// "read_file" is the engine tool "fs__read_file".
const Separator = "__"

// MaxServerName is the longest server name: its prefix leaves room for a
// one-character tool within the 64 characters of a tool name.
const MaxServerName = engine.MaxToolName - len(Separator) - 1

// CheckName reports whether name can prefix tool names: 1 to 61 ASCII
// letters, digits, '_' or '-', without "__" and not ending with '_', so
// that the first "__" of a tool name always ends its server's name.
func CheckName(name string) error {
	if name == "" {
		return errors.New("the server name is empty")
	}
	if !engine.ValidToolName(name) || len(name) > MaxServerName {
		return fmt.Errorf("the server name %s must be 1 to %d ASCII letters, digits, '_' or '-' (it prefixes the tool names: NAME%stool)",
			display.Quote(name), MaxServerName, Separator)
	}
	if strings.Contains(name, Separator) || strings.HasSuffix(name, "_") {
		return fmt.Errorf("the server name %q must not contain %q nor end with '_' (it prefixes the tool names: %s%stool)",
			name, Separator, name, Separator)
	}
	return nil
}

// ParseSpec reads a --mcp value: NAME=URL for an http:// or https:// URL,
// else NAME=COMMAND ARGS..., the command line split on spaces like a shell
// does (without expansion): 'single' and "double" quotes group words, and a
// backslash escapes the next character outside single quotes.
func ParseSpec(s string) (ServerSpec, error) {
	name, rest, ok := strings.Cut(s, "=")
	if !ok {
		return ServerSpec{}, errors.New("want NAME=COMMAND [ARGS...] or NAME=URL")
	}
	if err := CheckName(name); err != nil {
		return ServerSpec{}, err
	}
	if isURL(rest) {
		if err := checkURL(rest); err != nil {
			return ServerSpec{}, err
		}
		return ServerSpec{Name: name, URL: rest}, nil
	}
	words, err := splitWords(rest)
	if err != nil {
		return ServerSpec{}, err
	}
	if len(words) == 0 {
		return ServerSpec{}, errors.New("the command is empty")
	}
	return ServerSpec{Name: name, Command: words[0], Args: words[1:]}, nil
}

func isURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("the URL %q does not parse: %v", s, errors.Unwrap(err))
	}
	if u.Host == "" {
		return fmt.Errorf("the URL %q has no host", s)
	}
	return nil
}

// splitWords splits a command line into words.
func splitWords(s string) ([]string, error) {
	var words []string
	var word strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, word.String())
				word.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(s[i+1:], '\'')
			if end < 0 {
				return nil, errors.New("unterminated ' quote")
			}
			word.WriteString(s[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				word.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errors.New(`unterminated " quote`)
			}
			inWord = true
		case c == '\\':
			if i+1 == len(s) {
				return nil, errors.New("a backslash ends the command line")
			}
			i++
			word.WriteByte(s[i])
			inWord = true
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, word.String())
	}
	return words, nil
}

// LoadConfig reads a config file: see [ReadConfig], with dsh's own
// environment for ${VAR}. The warnings name what the file sets that dsh
// does not use.
func LoadConfig(path string) ([]ServerSpec, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return ReadConfig(data, os.LookupEnv)
}

// ParseConfig is [ReadConfig] with dsh's own environment for ${VAR}, for
// a caller that does not show warnings.
func ParseConfig(data []byte) ([]ServerSpec, error) {
	specs, _, err := ReadConfig(data, os.LookupEnv)
	return specs, err
}

// ReadConfig reads the servers of a config file in the format of Claude
// Desktop's claude_desktop_config.json and Claude Code's .mcp.json, in file
// order:
//
//	{"mcpServers": {
//	  "fs":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"], "env": {"K": "V"}},
//	  "web": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}
//
// Other top-level keys are ignored, so a whole Claude config file can be
// given. In a server:
//   - "type" is "stdio" (the default with a command), "http" or
//     "streamable-http" (streamable HTTP, the default with a url) or "sse"
//     (the legacy HTTP+SSE transport, see [ServerSpec].SSE);
//   - "command", "args", "env" and "cwd" (the working directory) start a
//     stdio server; "url" and "headers" (sent with every request) reach an
//     HTTP one;
//   - "timeout" bounds each call of its tools, in milliseconds (see
//     [ServerSpec].Timeout), "maxTools" caps the tools imported from it
//     (see [ServerSpec].MaxTools), and "maxCatalog" each kind of its
//     re-exported resources, templates and prompts ([ServerSpec].MaxCatalog);
//   - "prefix": false serves its items under their own names, not
//     "NAME__name" ([ServerSpec].Bare);
//   - "disabled": true leaves the server out (it is not checked further);
//   - any other key ("autoApprove", "alwaysAllow", ...) is a warning, the
//     server is read without it.
//
// In the values of "command", "args", "env", "cwd", "url" and "headers",
// ${VAR} is replaced with the variable's value as lookup gives it, and
// ${VAR:-default} with the default when VAR is unset or empty (as a shell
// does; the default is taken literally, up to the first '}'). A ${VAR}
// that is unset with no default is an error naming the server and the
// variable. VAR is an ASCII letter or '_' then letters, digits or '_'; any
// other ${...}, or a ${ without its '}', is an error. A '$' not followed by
// '{' ("$$", "$HOME", a '$' at the end) is kept as it is: only the braced
// form is expanded. Keys (the names of env variables and headers) are
// never expanded.
func ReadConfig(data []byte, lookup func(string) (string, bool)) ([]ServerSpec, []string, error) {
	v, err := dsl.Unmarshal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("not JSON: %v", err)
	}
	root, ok := v.(*dsl.Object)
	if !ok {
		return nil, nil, errors.New(`want an object with "mcpServers"`)
	}
	sv, ok := root.Get("mcpServers")
	if !ok {
		return nil, nil, errors.New(`no "mcpServers" object`)
	}
	servers, ok := sv.(*dsl.Object)
	if !ok {
		return nil, nil, errors.New(`"mcpServers" must be an object of servers`)
	}
	specs := make([]ServerSpec, 0, servers.Len())
	var warnings []string
	for name, e := range servers.All() {
		spec, unused, skip, err := configEntry(name, e, lookup)
		if err != nil {
			return nil, nil, fmt.Errorf("server %s: %w", display.Quote(name), err)
		}
		for _, k := range unused {
			warnings = append(warnings, fmt.Sprintf("server %s: key %s is not used by dsh (ignored)", display.Quote(name), display.Quote(k)))
		}
		if !skip {
			specs = append(specs, spec)
		}
	}
	return specs, warnings, nil
}

// configEntry reads the server name, v: its spec, the keys it has that dsh
// does not use, and whether it is disabled (skip).
func configEntry(name string, v any, lookup func(string) (string, bool)) (spec ServerSpec, unused []string, skip bool, err error) {
	o, ok := v.(*dsl.Object)
	if ok {
		if d, has := o.Get("disabled"); has {
			b, isBool := d.(bool)
			if !isBool {
				return ServerSpec{}, nil, false, errors.New(`"disabled" must be true or false`)
			}
			if b {
				return ServerSpec{}, nil, true, nil
			}
		}
	}
	if err := CheckName(name); err != nil {
		return ServerSpec{}, nil, false, err
	}
	if !ok {
		return ServerSpec{}, nil, false, errors.New("want an object")
	}
	spec, unused, err = configServer(name, o, lookup)
	return spec, unused, false, err
}

func configServer(name string, o *dsl.Object, lookup func(string) (string, bool)) (ServerSpec, []string, error) {
	spec := ServerSpec{Name: name}
	var unused []string
	str := func(k string) (string, error) {
		x, _ := o.Get(k)
		s, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("%q must be a string", k)
		}
		return s, nil
	}
	expanded := func(k string) (string, error) {
		s, err := str(k)
		if err != nil {
			return "", err
		}
		return expandVars(s, k, lookup)
	}
	var typ string
	for k, x := range o.All() {
		var err error
		switch k {
		case "type":
			typ, err = str(k)
		case "disabled": // read by configEntry
		case "command":
			spec.Command, err = expanded(k)
		case "url":
			spec.URL, err = expanded(k)
		case "cwd":
			spec.Dir, err = expanded(k)
		case "args":
			list, ok := x.([]any)
			if !ok {
				return ServerSpec{}, nil, errors.New(`"args" must be an array of strings`)
			}
			spec.Args = make([]string, len(list))
			for i, a := range list {
				s, ok := a.(string)
				if !ok {
					return ServerSpec{}, nil, errors.New(`"args" must be an array of strings`)
				}
				if spec.Args[i], err = expandVars(s, fmt.Sprintf("args[%d]", i), lookup); err != nil {
					return ServerSpec{}, nil, err
				}
			}
		case "env":
			spec.Env, err = expandedMap(k, x, lookup)
		case "headers":
			if spec.Headers, err = expandedMap(k, x, lookup); err == nil {
				for _, hk := range slices.Sorted(maps.Keys(spec.Headers)) {
					if err = checkHeader(hk, spec.Headers[hk]); err != nil {
						break
					}
				}
			}
		case "timeout":
			spec.Timeout, err = configTimeout(x)
		case "maxTools":
			spec.MaxTools, err = configMaxTools(x)
		case "maxCatalog":
			spec.MaxCatalog, err = configMaxCatalog(x)
		case "oauth":
			var more []string
			spec.OAuth, more, err = configOAuth(x, lookup) // oauth_config.go
			unused = append(unused, more...)
		case "prefix":
			prefixed, ok := x.(bool)
			if !ok {
				err = errors.New(`"prefix" must be true or false`)
			}
			spec.Bare = ok && !prefixed
		default:
			unused = append(unused, k)
		}
		if err != nil {
			return ServerSpec{}, nil, err
		}
	}
	spec, err := checkServer(spec, typ)
	return spec, unused, err
}

// checkServer checks that spec is a whole stdio or HTTP server of the
// config's type typ, and marks an "sse" one.
func checkServer(spec ServerSpec, typ string) (ServerSpec, error) {
	switch typ {
	case "", "stdio", "http", "streamable-http":
	case "sse":
		spec.SSE = true
	default:
		return ServerSpec{}, fmt.Errorf(`type %s is not supported (want "stdio", "http", "streamable-http" or "sse")`, display.Quote(typ))
	}
	switch {
	case spec.Command != "" && spec.URL != "":
		return ServerSpec{}, errors.New(`give "command" or "url", not both`)
	case spec.Command == "" && spec.URL == "":
		return ServerSpec{}, errors.New(`want "command" (stdio) or "url" (http)`)
	case spec.URL != "":
		if typ == "stdio" {
			return ServerSpec{}, errors.New(`type "stdio" needs "command", not "url"`)
		}
		if spec.Args != nil || spec.Env != nil || spec.Dir != "" {
			return ServerSpec{}, errors.New(`"args", "env" and "cwd" apply to a command, not a url`)
		}
		if !isURL(spec.URL) {
			return ServerSpec{}, fmt.Errorf("the URL %q must start with http:// or https://", spec.URL)
		}
		return spec, checkURL(spec.URL)
	case typ != "" && typ != "stdio":
		return ServerSpec{}, fmt.Errorf(`type %q needs "url", not "command"`, typ)
	case spec.Headers != nil:
		return ServerSpec{}, errors.New(`"headers" apply to a url, not a command`)
	case spec.OAuth != nil:
		return ServerSpec{}, errors.New(`"oauth" applies to a url, not a command`)
	}
	return spec, nil
}

// expandVars replaces ${VAR} and ${VAR:-default} in s, the value of the
// config's key (named in errors): see [ReadConfig].
func expandVars(s, key string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("%s: a ${ has no closing }", key)
		}
		ref := s[i+2 : i+2+end]
		s = s[i+2+end+1:]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("%s: ${%s} does not name a variable (want ${NAME} or ${NAME:-default})", key, display.Line(ref, display.MaxText))
		}
		val, set := lookup(name)
		switch {
		case hasDef && val == "":
			val = def
		case !set:
			return "", fmt.Errorf("%s: the variable %s is not set (set it, or give a default: ${%s:-default})", key, name, name)
		}
		b.WriteString(val)
	}
}

// validVarName reports whether s is an environment variable name: an ASCII
// letter or '_', then letters, digits or '_'.
func validVarName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, c := range []byte(s) {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// expandedMap reads the member key, x, as an object of strings, each value
// expanded by [expandVars].
func expandedMap(key string, x any, lookup func(string) (string, bool)) (map[string]string, error) {
	m, err := stringMap(key, x)
	if err != nil {
		return nil, err
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k], err = expandVars(m[k], fmt.Sprintf("%s[%q]", key, k), lookup); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// configTimeout reads a server's "timeout": milliseconds, as Claude Code
// counts its MCP timeouts, positive and at most a year (whole or not).
func configTimeout(x any) (time.Duration, error) {
	ms, ok := x.(float64)
	if !ok || math.IsNaN(ms) || ms <= 0 || ms > float64(maxTimeout/time.Millisecond) {
		return 0, errors.New(`"timeout" must be a positive number of milliseconds, at most a year`)
	}
	return max(time.Duration(ms*float64(time.Millisecond)), time.Nanosecond), nil
}

// configMaxTools reads a server's "maxTools": a whole number of tools,
// positive and at most maxMaxTools.
func configMaxTools(x any) (int, error) {
	n, ok := x.(float64)
	if !ok || n != math.Trunc(n) || n < 1 || n > maxMaxTools {
		return 0, fmt.Errorf(`"maxTools" must be a whole number from 1 to %d`, maxMaxTools)
	}
	return int(n), nil
}

// maxTimeout bounds a configured timeout: a year is "never" in practice,
// and stays far from time.Duration's overflow.
const maxTimeout = 365 * 24 * time.Hour

// stringMap reads the member key, x, as an object of strings.
func stringMap(key string, x any) (map[string]string, error) {
	o, ok := x.(*dsl.Object)
	if !ok {
		return nil, fmt.Errorf("%q must be an object of strings", key)
	}
	m := make(map[string]string, o.Len())
	for k, v := range o.All() {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("%q must be an object of strings", key)
		}
		m[k] = s
	}
	return m, nil
}

// checkHeader reports a header name that is not an HTTP token, or a value
// with a control character (a line break would smuggle another header).
func checkHeader(name, value string) error {
	if name == "" {
		return errors.New(`a header name in "headers" is empty`)
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return fmt.Errorf("the header name %q is not an HTTP token", name)
		}
	}
	for _, c := range []byte(value) {
		if (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("the value of header %q has a control character", name)
		}
	}
	return nil
}

// CheckNames reports a server name declared twice.
func CheckNames(specs []ServerSpec) error {
	seen := map[string]bool{}
	for _, s := range specs {
		if seen[s.Name] {
			return fmt.Errorf("MCP server %q is declared twice", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}
