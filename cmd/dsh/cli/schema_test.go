package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nestedItems is a schema of depth levels: arrays of arrays … of strings.
func nestedItems(depth int) string {
	return strings.Repeat(`{"type":"array","items":`, depth-1) + `{"type":"string"}` + strings.Repeat("}", depth-1)
}

// TestSchemaCheckAndValidateGiveOneVerdict checks that "schema check" and
// "schema validate" judge a schema alike: a schema nested past the 100,000
// levels a JSON value may have is refused by both, with the same message,
// and one just inside that bound is accepted by both.
func TestSchemaCheckAndValidateGiveOneVerdict(t *testing.T) {
	// The path dsl names a value by: its first ten steps, how many are left
	// out, its last eleven.
	tooDeep := "schema is not lossless JSON: value" + strings.Repeat(".items", 10) + "…(99,979 more)…" +
		strings.Repeat(".items", 11) + ": nesting deeper than 100000 levels"
	value := filepath.Join(t.TempDir(), "value.json")
	if err := os.WriteFile(value, []byte(`["x"]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		schema     string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"check refuses a schema 200,000 levels deep, naming the bound", nestedItems(200_000),
			[]string{"schema", "check", "-"}, exitViolations, "<stdin>: " + tooDeep + "\n", ""},
		{"validate refuses it with the same violation", nestedItems(200_000),
			[]string{"schema", "validate", "-", value}, exitTrouble, "",
			"<stdin>: " + tooDeep + "\ndsh: <stdin>: the schema is outside the supported subset; nothing was validated\n"},
		{"check reports it in --json too", nestedItems(200_000),
			[]string{"--json", "schema", "check", "-"}, exitViolations,
			`{"files":[{"file":"<stdin>","violations":["` + tooDeep + `"]}]}` + "\n", ""},
		{"check passes a schema 99,999 levels deep", nestedItems(99_999),
			[]string{"schema", "check", "-"}, exitOK, "", ""},
		{"validate accepts the same schema, and validates a value against it", nestedItems(99_999),
			[]string{"schema", "validate", "-", value}, exitViolations, "\"value[0]\" must be an array\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.schema, tc.args...)
			if code != tc.wantCode || stdout != tc.wantStdout || stderr != tc.wantStderr {
				t.Errorf("status %d, stdout %.300q, stderr %.300q\nwant %d, %.300q, %.300q", code, stdout, stderr, tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}
