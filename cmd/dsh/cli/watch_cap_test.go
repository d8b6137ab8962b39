package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One line of watch's input over 64 MiB is read through without being held,
// reported and skipped: the session serves the next line (it used to end).
func TestWatchSkipsALineOver64MiB(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "echo.js"), []byte(`import { defineTool, tools } from "dsh";
tools.register(defineTool({
  name: "echo", parameters: {},
  output: { schema: { type: "string" }, render: (_a, v) => [{ type: "text", text: v }] },
  async execute() { return "echoed"; },
}));
`), 0o644); err != nil {
		t.Fatal(err)
	}
	stdin := io.MultiReader(strings.NewReader(`{"id":"a","name":"echo"}`+"\n"+`{"id":"huge","name":"echo","arguments":"`),
		&repeatReader{c: 'x', n: maxCallLine}, strings.NewReader(`"}`+"\n"+`{"id":"b","name":"echo"}`+"\n"))
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"--scripts", dir, "--memory-limit", "0", "watch"}, stdin, &stdout, &stderr)
	if code != exitViolations {
		t.Errorf("exit status %d, want %d", code, exitViolations)
	}
	for _, id := range []string{"a", "b"} {
		if !strings.Contains(stdout.String(), `{"callId":"`+id+`","result":{"isError":false,"value":"echoed"`) {
			t.Errorf("no result for %s:\n%s", id, stdout.String())
		}
	}
	if want := "dsh: standard input line 2: the line has 67108906 bytes, over the 67108864 a line may have: skipped\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
}
