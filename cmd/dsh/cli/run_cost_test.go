package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

// countingWriter counts the writes it is given (a plain io.Writer, as
// os.Stdout is one write per call whatever method the caller uses).
type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.buf.Write(p)
}

func (w *countingWriter) String() string { return w.buf.String() }

// TestRunWritesItsOutputAtOnce checks that dsh run hands its standard
// output the cards (or the JSON line) in one write, not one per card: on a
// pipe or a terminal each write is a system call (issue 29, "dsh run's own
// cost").
func TestRunWritesItsOutputAtOnce(t *testing.T) {
	dir := t.TempDir()
	plugin := `const { defineTool, tools } = require("dsh");
tools.register(defineTool({
  name: "hi", description: "Say hi.", parameters: {},
  output: { schema: { type: "string" }, render: (args, value) => [{ type: "text", text: value }] },
  isConcurrencySafe: () => true,
  async execute() { return "hi"; },
}));
`
	if err := os.WriteFile(filepath.Join(dir, "hi.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := `[{"id":"a","name":"hi","arguments":{}},{"id":"b","name":"hi","arguments":{}},{"id":"c","name":"hi","arguments":{}}]`
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"three cards and a summary go out in one write", nil,
			"✓ hi a\n  hi\n\n✓ hi b\n  hi\n\n✓ hi c\n  hi\n\n3 calls: 3 ok, 0 failed · ran a+b+c\n"},
		{"the JSON of a batch goes out in one write", []string{"--json"},
			`{"results":[{"callId":"a","result":{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}},` +
				`{"callId":"b","result":{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}},` +
				`{"callId":"c","result":{"isError":false,"value":"hi","content":[{"type":"text","text":"hi"}]}}],` +
				`"additionalContexts":[],"concluded":false}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out countingWriter
			var errOut bytes.Buffer
			args := append([]string{"--scripts", dir, "--workspace", dir}, tc.args...)
			args = append(args, "run", "-")
			code := Run(context.Background(), args, strings.NewReader(calls), &out, &errOut)
			if code != exitOK || out.String() != tc.want || errOut.String() != "" {
				t.Fatalf("status %d, stdout %q, stderr %q; want 0, %q, \"\"", code, out.String(), errOut.String(), tc.want)
			}
			if out.writes != 1 {
				t.Errorf("stdout was written %d times, want once", out.writes)
			}
		})
	}
}

// TestRecorderThatDropsKeepsNoRecords checks the recorder of a --json run:
// it numbers the events as the one that draws cards does, and logs them to
// --log's file, but keeps no record (no card will be drawn from them).
func TestRecorderThatDropsKeepsNoRecords(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		drop    bool
		wantIDs []string
		kept    int
	}{
		{"a recorder for cards keeps every event as a record", false, []string{"e1", "e2"}, 2},
		{"a recorder for --json numbers the events the same and keeps none", true, []string{"e1", "e2"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{drop: tc.drop}
			var ids []string
			for _, e := range []engine.Event{
				engine.ToolCallEvent(nil, "c1", "hi", nil),
				engine.ToolCallEvent(nil, "c2", "hi", nil),
			} {
				id, err := rec.Append(ctx, e)
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, id)
			}
			if strings.Join(ids, ",") != strings.Join(tc.wantIDs, ",") {
				t.Errorf("ids %q, want %q", ids, tc.wantIDs)
			}
			if n, all := rec.len(), len(rec.all()); n != tc.kept || all != tc.kept {
				t.Errorf("len %d, all %d records; want %d", n, all, tc.kept)
			}
		})
	}

	t.Run("a recorder for --json still writes every event to the --log file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "session.jsonl")
		l, err := engine.OpenJSONLLog(path)
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{drop: true, file: l}
		for _, id := range []string{"c1", "c2"} {
			if _, err := rec.Append(ctx, engine.ToolCallEvent(nil, id, "hi", nil)); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if lines := strings.Count(string(data), "\n"); lines != 2 || rec.len() != 0 {
			t.Errorf("%d log lines and %d records; want 2 and 0:\n%s", lines, rec.len(), data)
		}
	})
}
