package mcp_test

import (
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

func TestConfigMaxTools(t *testing.T) {
	const refused = `server "a": "maxTools" must be a whole number from 1 to 1000000`
	tests := []struct {
		name    string
		config  string
		want    int
		wantErr string
	}{
		{"maxTools caps the server's tools", `{"mcpServers":{"a":{"command":"x","maxTools":25}}}`, 25, ""},
		{"without maxTools the spec leaves the default", `{"mcpServers":{"a":{"command":"x"}}}`, 0, ""},
		{"the largest cap is a million", `{"mcpServers":{"a":{"url":"http://h/mcp","maxTools":1000000}}}`, 1000000, ""},
		{"a cap of zero is refused", `{"mcpServers":{"a":{"command":"x","maxTools":0}}}`, 0, refused},
		{"a negative cap is refused", `{"mcpServers":{"a":{"command":"x","maxTools":-1}}}`, 0, refused},
		{"a fractional cap is refused", `{"mcpServers":{"a":{"command":"x","maxTools":1.5}}}`, 0, refused},
		{"a cap as a string is refused", `{"mcpServers":{"a":{"command":"x","maxTools":"10"}}}`, 0, refused},
		{"a cap past a million is refused", `{"mcpServers":{"a":{"command":"x","maxTools":1e300}}}`, 0, refused},
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
			if len(specs) != 1 || specs[0].MaxTools != tt.want {
				t.Errorf("specs %+v, want MaxTools %d", specs, tt.want)
			}
		})
	}
}
