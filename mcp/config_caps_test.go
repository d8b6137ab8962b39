package mcp_test

import (
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/mcp"
)

// oneSpec parses config, a config of one server, and returns its spec. With
// wantErr set it checks that the config is refused with exactly that error
// and returns ok false.
func oneSpec(t *testing.T, config, wantErr string) (spec mcp.ServerSpec, ok bool) {
	t.Helper()
	specs, err := mcp.ParseConfig([]byte(config))
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("error %v, want %q", err, wantErr)
		}
		return mcp.ServerSpec{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(specs) != 1 {
		t.Fatalf("%d specs, want 1: %+v", len(specs), specs)
	}
	return specs[0], true
}

func TestConfigCaps(t *testing.T) {
	for _, field := range []struct {
		key, caps string
		of        func(mcp.ServerSpec) int
	}{
		{"maxTools", "the server's tools", func(s mcp.ServerSpec) int { return s.MaxTools }},
		{"maxCatalog", "the server's resources, templates and prompts", func(s mcp.ServerSpec) int { return s.MaxCatalog }},
	} {
		refused := fmt.Sprintf(`server "a": %q must be a whole number from 1 to 1000000`, field.key)
		for _, tt := range []struct {
			name    string
			server  string // the server's members, with %s for the cap's
			value   string
			want    int
			wantErr string
		}{
			{field.key + " caps " + field.caps, `"command":"x"%s`, "25", 25, ""},
			{"without " + field.key + " the spec leaves the default", `"command":"x"%s`, "", 0, ""},
			{"the largest cap is a million", `"url":"http://h/mcp"%s`, "1000000", 1000000, ""},
			{"a cap of zero is refused", `"command":"x"%s`, "0", 0, refused},
			{"a negative cap is refused", `"command":"x"%s`, "-1", 0, refused},
			{"a fractional cap is refused", `"command":"x"%s`, "1.5", 0, refused},
			{"a cap as a string is refused", `"command":"x"%s`, `"10"`, 0, refused},
			{"a cap past a million is refused", `"command":"x"%s`, "1e300", 0, refused},
		} {
			t.Run(field.key+"/"+tt.name, func(t *testing.T) {
				member := ""
				if tt.value != "" {
					member = fmt.Sprintf(",%q:%s", field.key, tt.value)
				}
				config := `{"mcpServers":{"a":{` + fmt.Sprintf(tt.server, member) + `}}}`
				spec, ok := oneSpec(t, config, tt.wantErr)
				if ok && field.of(spec) != tt.want {
					t.Errorf("spec %+v, want %s %d", spec, field.key, tt.want)
				}
			})
		}
	}
}
