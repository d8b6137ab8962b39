package mcp_test

import (
	"reflect"
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

// TestConfigOAuth reads the "oauth" object of --mcp-config entries.
func TestConfigOAuth(t *testing.T) {
	env := map[string]string{"ACME_SECRET": "s3cret"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	entry := func(oauth string) []byte {
		return []byte(`{"mcpServers": {"acme": {"type": "http", "url": "https://mcp.example.com/mcp", "oauth": ` + oauth + `}}}`)
	}
	tests := []struct {
		name, oauth string
		want        *mcp.OAuthConfig
		warnings    []string
		err         string
	}{
		{name: "Claude Code's keys are read, the secret from the environment",
			oauth: `{"clientId": "dsh-at-acme", "clientSecret": "${ACME_SECRET}", "scopes": "repo read:org", "callbackPort": 8765}`,
			want:  &mcp.OAuthConfig{ClientID: "dsh-at-acme", ClientSecret: "s3cret", Scopes: []string{"repo", "read:org"}, CallbackPort: 8765}},
		{name: "scopes may be an array, and the redirect a whole loopback URL",
			oauth: `{"scopes": ["a", "b"], "redirectUri": "http://localhost:9000/cb", "clientMetadataUrl": "https://dsh.example.com/client.json"}`,
			want:  &mcp.OAuthConfig{Scopes: []string{"a", "b"}, RedirectURI: "http://localhost:9000/cb", ClientMetadataURL: "https://dsh.example.com/client.json"}},
		{name: "an unknown key is a warning",
			oauth: `{"authServerMetadataUrl": "https://x.example.com"}`, want: &mcp.OAuthConfig{},
			warnings: []string{`server "acme": key "oauth.authServerMetadataUrl" is not used by dsh (ignored)`}},
		{name: "a secret from an unset variable is an error", oauth: `{"clientId": "c", "clientSecret": "${NOPE}"}`,
			err: `server "acme": oauth.clientSecret: the variable NOPE is not set (set it, or give a default: ${NOPE:-default})`},
		{name: "a secret without a client id is an error", oauth: `{"clientSecret": "x"}`,
			err: `server "acme": oauth.clientSecret needs oauth.clientId`},
		{name: "a port out of range is an error", oauth: `{"callbackPort": 70000}`,
			err: `server "acme": oauth.callbackPort must be a port number (1 to 65535)`},
		{name: "a redirect off the loopback is an error", oauth: `{"redirectUri": "http://example.com:80/cb"}`,
			err: `server "acme": oauth.redirectUri must be http://127.0.0.1:PORT/PATH (or localhost, [::1])`},
		{name: "a client metadata URL over http is an error", oauth: `{"clientMetadataUrl": "http://dsh.example.com/c.json"}`,
			err: `server "acme": oauth.clientMetadataUrl must be an https URL with a path`},
		{name: "empty scopes are an error", oauth: `{"scopes": " "}`,
			err: `server "acme": oauth.scopes must be a string of space-separated scopes or an array of strings`},
		{name: "oauth must be an object", oauth: `"yes"`, err: `server "acme": "oauth" must be an object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, warnings, err := mcp.ReadConfig(entry(tt.oauth), lookup)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != 1 || !reflect.DeepEqual(specs[0].OAuth, tt.want) {
				t.Errorf("oauth %#v, want %#v", specs[0].OAuth, tt.want)
			}
			if !reflect.DeepEqual(warnings, tt.warnings) {
				t.Errorf("warnings %q, want %q", warnings, tt.warnings)
			}
		})
	}
	t.Run("oauth on a command is an error", func(t *testing.T) {
		_, _, err := mcp.ReadConfig([]byte(`{"mcpServers": {"x": {"command": "srv", "oauth": {}}}}`), lookup)
		if want := `server "x": "oauth" applies to a url, not a command`; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	})
}
