package mcp_test

import (
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

func TestConfigMaxCatalog(t *testing.T) {
	const refused = `server "a": "maxCatalog" must be a whole number from 1 to 1000000`
	tests := []struct {
		name    string
		config  string
		want    int
		wantErr string
	}{
		{"maxCatalog caps the server's resources, templates and prompts", `{"mcpServers":{"a":{"command":"x","maxCatalog":25}}}`, 25, ""},
		{"without maxCatalog the spec leaves the default", `{"mcpServers":{"a":{"command":"x"}}}`, 0, ""},
		{"the largest cap is a million", `{"mcpServers":{"a":{"url":"http://h/mcp","maxCatalog":1000000}}}`, 1000000, ""},
		{"a cap of zero is refused", `{"mcpServers":{"a":{"command":"x","maxCatalog":0}}}`, 0, refused},
		{"a fractional cap is refused", `{"mcpServers":{"a":{"command":"x","maxCatalog":1.5}}}`, 0, refused},
		{"a cap as a string is refused", `{"mcpServers":{"a":{"command":"x","maxCatalog":"10"}}}`, 0, refused},
		{"a cap past a million is refused", `{"mcpServers":{"a":{"command":"x","maxCatalog":1e300}}}`, 0, refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			specs, err := mcp.ParseConfig([]byte(tt.config))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != 1 || specs[0].MaxCatalog != tt.want {
				t.Errorf("specs %+v, want MaxCatalog %d", specs, tt.want)
			}
		})
	}
}
