package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

func TestDiffLines(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string
		want     string
		newFile  bool
	}{
		{name: "equal texts give no lines", old: "a\nb\n", new: "a\nb\n", want: ""},
		{name: "a new file is every line added", newFile: true, new: "x\ny\n", want: "+x|+y"},
		{name: "a changed line keeps its context", old: "a\nb\nc\nd\ne\n", new: "a\nb\nC\nd\ne\n",
			want: "@@@ -1,5 +1,5 @@| a| b|-c|+C| d| e"},
		{name: "far apart changes make two hunks", old: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", new: "0\n2\n3\n4\n5\n6\n7\n8\nX\n",
			want: "@@@ -1,3 +1,3 @@|-1|+0| 2| 3|@@@ -7,3 +7,3 @@| 7| 8|-9|+X"},
		{name: "near changes share a hunk", old: "1\n2\n3\n4\n5\n", new: "0\n2\n3\n4\nX\n",
			want: "@@@ -1,5 +1,5 @@|-1|+0| 2| 3| 4|-5|+X"},
		{name: "lines added at the end", old: "a\n", new: "a\nb\nc\n", want: "@@@ -1,1 +1,3 @@| a|+b|+c"},
		{name: "everything removed", old: "a\nb\n", new: "", want: "@@@ -1,2 +0,0 @@|-a|-b"},
		{name: "carriage returns are line endings", old: "a\r\nb\r\n", new: "a\nb\n", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var old []string
			if !tc.newFile {
				old = splitLines(tc.old)
				if old == nil {
					old = []string{}
				}
			}
			var got []string
			for _, op := range diffLines(old, splitLines(tc.new)) {
				got = append(got, string(op.kind)+op.text)
			}
			if s := strings.Join(got, "|"); s != tc.want {
				t.Errorf("diff = %q, want %q", s, tc.want)
			}
		})
	}
}

func TestDiffLinesTooBigToCompare(t *testing.T) {
	old := make([]string, 1500)
	new := make([]string, 1500)
	for i := range old {
		old[i] = "old " + string(rune('a'+i%26))
		new[i] = "new " + string(rune('a'+i%26))
	}
	ops := diffLines(old, new)
	minus, plus := 0, 0
	for _, op := range ops {
		switch op.kind {
		case '-':
			minus++
		case '+':
			plus++
		}
	}
	if minus != 1500 || plus != 1500 {
		t.Errorf("a change past the table's size shows %d removed and %d added lines, want 1500 each", minus, plus)
	}
}

func FuzzDiffLines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n")
	f.Add("", "x\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		old, new := splitLines(a), splitLines(b)
		if old == nil {
			old = []string{}
		}
		// Applying the script's removals and additions to old gives new.
		script := lineDiff(old, new)
		var gotOld, gotNew []string
		for _, e := range script {
			if e.kind != '+' {
				gotOld = append(gotOld, e.text)
			}
			if e.kind != '-' {
				gotNew = append(gotNew, e.text)
			}
		}
		if strings.Join(gotOld, "\n") != strings.Join(old, "\n") || strings.Join(gotNew, "\n") != strings.Join(new, "\n") {
			t.Fatalf("the edit script of %q -> %q does not rebuild both texts", a, b)
		}
		diffLines(old, new) // the hunks of any script render
	})
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text is kept", "héllo\tworld", "héllo\tworld"},
		{"escape sequences are shown in caret notation", "\x1b[31mred\x1b[0m", "^[[31mred^[[0m"},
		{"other controls too", "bell\a nul\x00 del\x7f", "bell^G nul^@ del^?"},
		{"C1 controls as code points", "a\u009bb", `a\u009bb`},
		{"invalid UTF-8 becomes U+FFFD", "a\xffb", "a\uFFFDb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clean(tc.in); got != tc.want {
				t.Errorf("clean(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCardsWithoutViewsShowTheContent(t *testing.T) {
	var b strings.Builder
	writeCards(&b, style{}, []card{
		{callID: "c1", name: "t", hasResult: true, content: []engine.Block{engine.Text("a\nb"), engine.RawBlock{Value: dsl.NewObject(dsl.Member{Key: "type", Value: "image"})}}},
		{callID: "c2", name: "t", hasResult: true, isError: true, code: "BOOM", content: []engine.Block{engine.Text("Error: x")}},
		{callID: "c3", name: "t"},
	})
	want := "✓ t c1\n  a\n  b\n  [image content]\n\n✗ t c2 [BOOM]\n  Error: x\n\n… t c3 (no result)\n\n"
	if b.String() != want {
		t.Errorf("cards:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestLongBodiesAreCut(t *testing.T) {
	var b strings.Builder
	lines := make([]string, 20)
	for i := range lines {
		lines[i] = "line"
	}
	exit := 0
	writeCards(&b, style{}, []card{
		{callID: "c1", name: "t", hasResult: true, content: []engine.Block{engine.Text(strings.Join(lines, "\n"))}},
		{callID: "c2", name: "sh", hasResult: true, result: &engine.ResultView{Card: engine.CardTerminal, Output: strings.Join(lines, "\n"), ExitCode: &exit}},
	})
	out := b.String()
	if !strings.Contains(out, "  … 8 more lines\n") {
		t.Errorf("content past %d lines is not counted:\n%s", maxBodyLines, out)
	}
	if !strings.Contains(out, "  … 8 lines before\n") || !strings.HasSuffix(out, "  line\n  exit 0\n\n") {
		t.Errorf("a terminal's output does not keep its last lines:\n%s", out)
	}
}

func TestParseCalls(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"ids default to their position", `[{"name":"a"},{"id":"x","name":"b"},{"name":"c"}]`, "c1 a ''|x b ''|c3 c ''"},
		{"object arguments become canonical text, in order", `[{"name":"a","arguments":{"z":1,"a":[true,null]}}]`, `c1 a '{"z":1,"a":[true,null]}'`},
		{"text arguments are kept byte for byte", `[{"name":"a","arguments":" {\"a\" : 1} "}]`, `c1 a ' {"a" : 1} '`},
		{"an agent per call, or null for none", `[{"name":"a","agent":"w"},{"name":"b","agent":null}]`, "c1 a '' @w|c2 b '' @"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := dsl.Unmarshal([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			calls, err := parseCalls(v)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range calls {
				s := c.block.ID + " " + c.block.Name + " '" + c.block.Arguments + "'"
				if c.hasAgent {
					s += " @" + c.agent
				}
				got = append(got, s)
			}
			if s := strings.Join(got, "|"); s != tc.want {
				t.Errorf("calls = %s, want %s", s, tc.want)
			}
		})
	}
}

func FuzzParseCalls(f *testing.F) {
	f.Add(`[{"id":"c1","name":"a","arguments":"{}"}]`)
	f.Add(`[{"name":"a","arguments":{"x":[1,2]},"agent":null}]`)
	f.Add(`{"name":"a"}`)
	f.Fuzz(func(t *testing.T, text string) {
		v, err := dsl.Unmarshal([]byte(text))
		if err != nil {
			return
		}
		calls, err := parseCalls(v)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		for _, c := range calls {
			if c.block.ID == "" || c.block.Name == "" {
				t.Fatalf("a call without an id or name: %+v", c)
			}
		}
	})
}

func FuzzReadRecords(f *testing.F) {
	f.Add(`{"id":"e1","type":"tool/call","agent":"main","time":"t","callId":"c1","name":"a","arguments":{}}` + "\n" +
		`{"id":"e2","type":"tool/result","callId":"c1","content":[],"isError":false,"callEvent":"e1"}`)
	f.Add("\n\n{}\n")
	f.Fuzz(func(t *testing.T, text string) {
		log, err := readRecords(strings.NewReader(text), "log")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "log") {
				t.Fatalf("error %q does not name the log", err)
			}
			return
		}
		for _, r := range log.recs {
			if r.id == "" || r.typ == "" {
				t.Fatalf("a record without id or type: %+v", r)
			}
		}
		n := 0
		for _, b := range splitBatches(log.recs) {
			n += len(b)
			sources(b)
			schedule(b)
		}
		if n != len(log.recs) {
			t.Fatalf("the batches hold %d records of %d", n, len(log.recs))
		}
	})
}

func TestSchedule(t *testing.T) {
	rec := func(id, typ, call, cites string) record {
		o := dsl.NewObject(dsl.Member{Key: "callId", Value: call})
		if cites != "" {
			o.Set("callEvent", cites)
		}
		return record{id: id, typ: typ, data: o}
	}
	skipped := func(id, call, cites string) record {
		r := rec(id, engine.EventToolResult, call, cites)
		r.data.Set("isError", true)
		r.data.Set("error", dsl.NewObject(dsl.Member{Key: "message", Value: "tool call aborted before dispatch"},
			dsl.Member{Key: "code", Value: engine.CodeAbortedBeforeDispatch}))
		return r
	}
	for _, tc := range []struct {
		name         string
		recs         []record
		ran, notRun  string
		cardsInOrder string
	}{
		{
			name: "calls started before an earlier one committed share its group, and a call without a result comes last",
			recs: []record{
				rec("e1", engine.EventToolCall, "a", ""), rec("e2", engine.EventToolResult, "a", "e1"),
				rec("e3", engine.EventToolCall, "b", ""), rec("e4", engine.EventToolCall, "c", ""),
				rec("e5", engine.EventToolResult, "b", "e3"), rec("e6", engine.EventToolCall, "d", ""),
				rec("e7", engine.EventToolResult, "c", "e4"), rec("e8", engine.EventToolResult, "d", "e6"),
				rec("e9", engine.EventToolCall, "e", ""),
			},
			ran: "a | b+c+d | e", cardsInOrder: "a,b,c,d,e",
		},
		{
			name: "the calls skipped after an interrupt did not run",
			recs: []record{
				rec("e1", engine.EventToolCall, "a", ""), rec("e2", engine.EventToolResult, "a", "e1"),
				rec("e3", engine.EventToolCall, "b", ""), skipped("e4", "b", "e3"),
				rec("e5", engine.EventToolCall, "c", ""), skipped("e6", "c", "e5"),
			},
			ran: "a", notRun: "b,c", cardsInOrder: "a,b,c",
		},
		{
			name: "a call aborted before dispatch inside a parallel group leaves the others their group",
			recs: []record{
				rec("e1", engine.EventToolCall, "a", ""), rec("e2", engine.EventToolCall, "b", ""),
				skipped("e3", "b", "e2"), rec("e4", engine.EventToolCall, "c", ""),
				rec("e5", engine.EventToolResult, "a", "e1"), rec("e6", engine.EventToolResult, "c", "e4"),
			},
			ran: "a+c", notRun: "b", cardsInOrder: "b,a,c",
		},
		{
			name: "when nothing ran there is no group",
			recs: []record{rec("e1", engine.EventToolCall, "a", ""), skipped("e2", "a", "e1")},
			ran:  "", notRun: "a", cardsInOrder: "a",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups, notRun := schedule(tc.recs)
			var got []string
			for _, g := range groups {
				got = append(got, strings.Join(g, "+"))
			}
			if s := strings.Join(got, " | "); s != tc.ran {
				t.Errorf("ran %q, want %q", s, tc.ran)
			}
			if s := strings.Join(notRun, ","); s != tc.notRun {
				t.Errorf("not run %q, want %q", s, tc.notRun)
			}
			var order []string
			for _, src := range sources(tc.recs) {
				order = append(order, src.call.str("callId"))
			}
			if s := strings.Join(order, ","); s != tc.cardsInOrder {
				t.Errorf("cards in order %s, want %s", s, tc.cardsInOrder)
			}
		})
	}
}

func TestPromptApproval(t *testing.T) {
	req := engine.ApprovalRequest{ToolName: "write", CallID: "c1", Reason: "why", DisplayReason: "Write it?"}
	for _, tc := range []struct {
		name, input string
		want        engine.ApprovalOutcome
	}{
		{"y allows once", "y\n", engine.AllowedOnce},
		{"yes in any case allows once", " YES \n", engine.AllowedOnce},
		{"a last line without a newline counts", "y", engine.AllowedOnce},
		{"anything else rejects", "sure\n", engine.Rejected},
		{"an empty line rejects", "\n", engine.Rejected},
		{"the end of the input is unavailable", "", engine.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			answers := newLineReader(strings.NewReader(tc.input))
			defer answers.close()
			a := approvalService(approvePrompt, answers, defaultApprovalTimeout, &stderr)
			got, err := a.Approve(context.Background(), req)
			if err != nil || got != tc.want {
				t.Errorf("Approve = %q, %v; want %q", got, err, tc.want)
			}
			if want := "dsh: write (c1) asks for approval: Write it?\nAllow write once? [y/N] "; !strings.HasPrefix(stderr.String(), want) {
				t.Errorf("prompt %q, want %q", stderr.String(), want)
			}
		})
	}
}

func TestPromptApprovalLaterQuestionsSeeTheEnd(t *testing.T) {
	answers := newLineReader(strings.NewReader("y\n"))
	defer answers.close()
	a := approvalService(approvePrompt, answers, defaultApprovalTimeout, io.Discard)
	for i, want := range []engine.ApprovalOutcome{engine.AllowedOnce, engine.Unavailable, engine.Unavailable} {
		got, _ := a.Approve(context.Background(), engine.ApprovalRequest{ToolName: "t"})
		if got != want {
			t.Errorf("question %d: %q, want %q", i+1, got, want)
		}
	}
}

func TestPromptApprovalIsCancelledWithItsCall(t *testing.T) {
	r, w := io.Pipe() // nobody types
	defer w.Close()
	answers := newLineReader(r)
	defer answers.close()
	a := approvalService(approvePrompt, answers, defaultApprovalTimeout, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	got, err := a.Approve(ctx, engine.ApprovalRequest{ToolName: "t"})
	if err != nil || got != engine.Cancelled {
		t.Errorf("Approve = %q, %v; want cancelled", got, err)
	}
	w.CloseWithError(errors.New("done")) // lets the reader's goroutine end
}

func TestFixedApprovals(t *testing.T) {
	for mode, want := range map[string]engine.ApprovalOutcome{approveAllow: engine.AllowedOnce, approveDeny: engine.Rejected} {
		var stderr strings.Builder
		got, err := approvalService(mode, nil, defaultApprovalTimeout, &stderr).Approve(context.Background(), engine.ApprovalRequest{ToolName: "t", CallID: "c1"})
		if err != nil || got != want {
			t.Errorf("--approve %s: %q, %v; want %q", mode, got, err, want)
		}
		if !strings.HasPrefix(stderr.String(), "dsh: t (c1) asks for approval\n  → ") {
			t.Errorf("--approve %s says %q", mode, stderr.String())
		}
	}
	if approvalService(approveNone, nil, defaultApprovalTimeout, io.Discard) != nil {
		t.Error("--approve none mounts a service")
	}
}
