package cli

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

func TestServeOAuthFlags(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"--oauth-issuer without --http is a usage error", []string{"serve", "--oauth-issuer", "https://auth.example", "--oauth-audience", "https://mcp.example/mcp"},
			"--oauth-issuer needs --http"},
		{"--oauth-issuer without --oauth-audience is a usage error", []string{"serve", "--http", "127.0.0.1:0", "--oauth-issuer", "https://auth.example"},
			"--oauth-issuer needs --oauth-audience, the URL clients reach the server at"},
		{"--oauth-audience without --oauth-issuer is a usage error", []string{"serve", "--http", "127.0.0.1:0", "--oauth-audience", "https://mcp.example/mcp"},
			"--oauth-audience needs --oauth-issuer"},
		{"--oauth-tool-scopes without --oauth-issuer is a usage error", []string{"serve", "--http", "127.0.0.1:0", "--oauth-tool-scopes", "f"},
			"--oauth-tool-scopes needs --oauth-issuer"},
		{"--oauth-introspect without --oauth-issuer is a usage error", []string{"serve", "--http", "127.0.0.1:0", "--oauth-introspect", "https://auth.example/introspect"},
			"--oauth-introspect needs --oauth-issuer"},
		{"--token-file and --oauth-issuer are exclusive", []string{"serve", "--http", "127.0.0.1:0", "--token-file", "t", "--oauth-issuer", "https://auth.example", "--oauth-audience", "https://mcp.example/mcp"},
			"--token-file and --oauth-issuer are exclusive: a request carries one bearer token, static or issued"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := run(t, "", append([]string{"--scripts", t.TempDir()}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Fatalf("status %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}
	t.Run("an http issuer beyond loopback is refused", func(t *testing.T) {
		code, _, stderr := run(t, "", "--scripts", t.TempDir(), "--memory-limit", "0", "serve", "--http", "127.0.0.1:0",
			"--oauth-issuer", "http://auth.example", "--oauth-audience", "https://mcp.example/mcp")
		if want := "dsh: OAuth issuer \"http://auth.example\": want https (http only on loopback)\n"; code != 1 || stderr != want {
			t.Fatalf("status %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	})
	t.Run("--oauth-introspect without the client's id in the environment is refused", func(t *testing.T) {
		t.Setenv(introspectIDEnv, "")
		code, _, stderr := run(t, "", "--scripts", t.TempDir(), "--memory-limit", "0", "serve", "--http", "127.0.0.1:0",
			"--oauth-issuer", "https://auth.example", "--oauth-audience", "https://mcp.example/mcp", "--oauth-introspect", "https://auth.example/introspect")
		want := "dsh: --oauth-introspect https://auth.example/introspect: set $DSH_OAUTH_INTROSPECT_CLIENT_ID (and $DSH_OAUTH_INTROSPECT_CLIENT_SECRET) to the resource server's client credentials\n"
		if code != 1 || stderr != want {
			t.Fatalf("status %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	})
	t.Run("a tool-scopes file with a bad glob is refused with its line", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "scopes")
		if err := os.WriteFile(file, []byte("# tools\nok_* read\n[ admin\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := run(t, "", "--scripts", t.TempDir(), "--memory-limit", "0", "serve", "--http", "127.0.0.1:0",
			"--oauth-issuer", "https://auth.example", "--oauth-audience", "https://mcp.example/mcp", "--oauth-tool-scopes", file)
		if want := fmt.Sprintf("dsh: --oauth-tool-scopes %s: line 3: \"[\" is not a valid glob\n", file); code != 1 || stderr != want {
			t.Fatalf("status %d, stderr %q; want 1 and %q", code, stderr, want)
		}
	})
}

// An OAuth-protected dsh serve: metadata, the challenge, and a token that
// sees only the tools its scopes cover, its caller reaching the tool.
func TestServeAsAnOAuthProtectedResource(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	var issuer *httptest.Server
	issuer = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		b64 := base64.RawURLEncoding.EncodeToString
		switch r.URL.Path {
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"jwks_uri":%q,"code_challenge_methods_supported":["S256"]}`,
				issuer.URL, issuer.URL+"/authorize", issuer.URL+"/token", issuer.URL+"/jwks")
		case "/jwks":
			fmt.Fprintf(w, `{"keys":[{"kty":"RSA","kid":"k1","n":%q,"e":%q}]}`, b64(key.N.Bytes()), b64(big.NewInt(int64(key.E)).Bytes()))
		default:
			http.NotFound(w, r)
		}
	}))
	defer issuer.Close()

	dir := t.TempDir()
	plugin := `import { defineTool, tools, on } from "dsh";
for (const name of ["open_tool", "admin_tool"]) {
  tools.register(defineTool({
    name,
    parameters: {},
    output: { schema: { type: "string" }, render: (_a, v) => [{ type: "text", text: v }] },
    async execute(_args, exec) { return name + " ran for " + exec.caller?.subject; },
  }));
}
on("tools/pre-execute", async (exec, next) => {
  if (exec.caller?.subject === "mallory")
    return { kind: "deny", reason: "mallory may not call " + exec.name + " (client " + exec.caller.clientId + ")" };
  return next();
});
`
	if err := os.WriteFile(filepath.Join(dir, "tools.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	scopes := filepath.Join(t.TempDir(), "scopes")
	if err := os.WriteFile(scopes, []byte("open_*\nadmin_* admin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const audience = "https://mcp.example.com/mcp"
	stderr := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"--scripts", dir, "--memory-limit", "0", "serve", "--http", "127.0.0.1:0",
			"--oauth-issuer", issuer.URL, "--oauth-audience", audience, "--oauth-tool-scopes", scopes}, strings.NewReader(""), io.Discard, stderr)
	}()
	defer func() {
		cancel()
		<-code
	}()
	serving := regexp.MustCompile(`dsh: serving MCP at (http://127\.0\.0\.1:[0-9]+)/mcp\n`)
	var base string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			base = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving within a minute; stderr %q", stderr.String())
		}
	}

	t.Run("the metadata is served at the path-suffixed well-known URL", func(t *testing.T) {
		res, err := http.Get(base + "/.well-known/oauth-protected-resource/mcp")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		want := fmt.Sprintf(`{"resource":%q,"authorization_servers":[%q],"scopes_supported":["admin"],"bearer_methods_supported":["header"],"resource_name":"dsh"}`, audience, issuer.URL)
		if strings.TrimSpace(string(b)) != want {
			t.Errorf("metadata %s, want %s", b, want)
		}
	})
	t.Run("a request without a token gets 401 and the challenge", func(t *testing.T) {
		res, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		want := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
		if res.StatusCode != http.StatusUnauthorized || res.Header.Get("WWW-Authenticate") != want {
			t.Errorf("status %d, challenge %q; want 401 and %q", res.StatusCode, res.Header.Get("WWW-Authenticate"), want)
		}
	})
	connect := func(t *testing.T, sub string) (*sdk.ClientSession, string) {
		t.Helper()
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": issuer.URL, "aud": audience, "sub": sub, "client_id": "cli-7", "scope": "read", "exp": time.Now().Add(time.Minute).Unix(),
		})
		tok.Header["kid"] = "k1"
		token, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+token)
			return http.DefaultTransport.RoundTrip(r)
		})}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil).
			Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs, token
	}
	text := func(res *sdk.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	t.Run("a token without the admin scope sees and calls only the open tool, as its subject", func(t *testing.T) {
		cs, token := connect(t, "bob")
		lr, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range lr.Tools {
			names = append(names, tool.Name)
		}
		if !slices.Equal(names, []string{"open_tool"}) {
			t.Errorf("tools %v, want [open_tool]", names)
		}
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "open_tool", Arguments: json.RawMessage(`{}`)})
		if err != nil || res.IsError || text(res) != "open_tool ran for bob" {
			t.Errorf("open_tool: %+v, %v; want the text %q", res, err, "open_tool ran for bob")
		}
		_, err = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "admin_tool", Arguments: json.RawMessage(`{}`)})
		if err == nil || !strings.Contains(err.Error(), `unknown tool "admin_tool"`) {
			t.Errorf("admin_tool: %v, want unknown tool", err)
		}
		if strings.Contains(stderr.String(), token) {
			t.Errorf("the token is on standard error: %s", stderr.String())
		}
	})
	t.Run("a policy that reads exec.caller denies a subject", func(t *testing.T) {
		cs, _ := connect(t, "mallory")
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "open_tool", Arguments: json.RawMessage(`{}`)})
		const want = "Error: mallory may not call open_tool (client cli-7)"
		if err != nil || !res.IsError || text(res) != want {
			t.Errorf("open_tool for mallory: %+v, %v; want the failure %q", res, err, want)
		}
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
