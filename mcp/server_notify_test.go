package mcp_test

//lint:file-ignore SA1019 MCP logging is deprecated as of protocol 2026-07-28, and issue 17 asks for it: clients on 2025-11-25 use it, and servers keep it through the deprecation window.

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/syncbuf"
	"github.com/dsh-go/dsh/mcp"
)

// notesFixture serves "work": it logs at each level through a logger whose
// handler is mcp.LogHandler, as the script hosts do, reports progress
// (1, 1 again, 2 and 3 of 3), and returns whether anyone heard the first
// report. stderr holds what the wrapped handler wrote.
type notesFixture struct {
	*fixture
	stderr *syncbuf.Buffer
	later  chan func() // logs once the call is over
}

func newNotesFixture(t *testing.T) *notesFixture {
	t.Helper()
	stderr := &syncbuf.Buffer{}
	logger := slog.New(mcp.LogHandler(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))).With("plugin", "work.js")
	later := make(chan func(), 1)
	svc := engine.New()
	def, err := engine.DefineTool(engine.ToolOptions[any, any]{
		Name: "work", Output: dsl.String(), Render: renderString,
		Execute: func(ctx context.Context, _ any, _ *engine.Run) (any, error) {
			logger.DebugContext(ctx, "a detail")
			logger.InfoContext(ctx, "starting", "files", 3.0)
			heard := engine.ReportProgress(ctx, engine.Progress{Progress: 1, Total: 3, Message: "one"})
			engine.ReportProgress(ctx, engine.Progress{Progress: 1, Total: 3, Message: "one again"})
			engine.ReportProgress(ctx, engine.Progress{Progress: 2, Total: 3})
			engine.ReportProgress(ctx, engine.Progress{Progress: 3, Total: 3, Message: "done"})
			logger.WarnContext(ctx, strings.Repeat("w", 20000))
			logger.ErrorContext(ctx, "failed once", "err", "EIO", "big", strings.Repeat("x", 70000))
			later <- func() { logger.ErrorContext(ctx, "too late") }
			if heard {
				return "heard", nil
			}
			return "unheard", nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Global().Register(def); err != nil {
		t.Fatal(err)
	}
	return &notesFixture{fixture: serveEngine(t, svc), stderr: stderr, later: later}
}

// heard collects a client's notifications.
type heard struct {
	mu       sync.Mutex
	logs     []*sdk.LoggingMessageParams
	progress []*sdk.ProgressNotificationParams
	more     chan struct{}
}

func (h *heard) options() *sdk.ClientOptions {
	h.more = make(chan struct{}, 64)
	return &sdk.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			h.mu.Lock()
			h.logs = append(h.logs, r.Params)
			h.mu.Unlock()
			h.more <- struct{}{}
		},
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			h.mu.Lock()
			h.progress = append(h.progress, r.Params)
			h.mu.Unlock()
			h.more <- struct{}{}
		},
	}
}

// wait waits until n notifications came.
func (h *heard) wait(n int) {
	for i := 0; i < n; i++ {
		<-h.more
	}
}

func TestACallsLogsAndProgressReachItsClient(t *testing.T) {
	for _, version := range []string{legacy, multiRoundTrip} {
		t.Run("on "+version, func(t *testing.T) {
			f := newNotesFixture(t)
			h := &heard{}
			cs := f.connect(t, version, h.options())
			params := &sdk.CallToolParams{Name: "work", Arguments: json.RawMessage(`{}`),
				Meta: sdk.Meta{sdk.MetaKeyLogLevel: "info"}}
			if version == legacy {
				params.Meta = nil
				if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			params.SetProgressToken("tok")
			r, err := cs.CallTool(context.Background(), params)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(r); got != "heard" {
				t.Errorf("result %q, want heard (the progress function was set)", got)
			}
			h.wait(3 + 3)
			h.mu.Lock()
			defer h.mu.Unlock()

			t.Run("log lines at or above the client's level arrive, named by their plugin", func(t *testing.T) {
				var got []string
				for _, l := range h.logs {
					got = append(got, string(l.Level)+" "+l.Logger)
				}
				if want := "info work.js|warning work.js|error work.js"; strings.Join(got, "|") != want {
					t.Errorf("logs %q, want %q", strings.Join(got, "|"), want)
				}
			})
			t.Run("the data is the message and the fields", func(t *testing.T) {
				if got := dataJSON(h.logs[0]); got != `{"files":3,"message":"starting"}` {
					t.Errorf("data %s", got)
				}
			})
			t.Run("a long message is cut, and fields past 64 KiB are left out", func(t *testing.T) {
				var warn struct{ Message string }
				_ = json.Unmarshal([]byte(dataJSON(h.logs[1])), &warn)
				if len(warn.Message) != 16<<10+len("… (truncated)") || !strings.HasSuffix(warn.Message, "… (truncated)") {
					t.Errorf("message of %d bytes, want 16 KiB and the mark", len(warn.Message))
				}
				if got := dataJSON(h.logs[2]); got != `{"fields":"(left out: over 64 KiB)","message":"failed once"}` {
					t.Errorf("data %.200s", got)
				}
			})
			t.Run("progress arrives in order, a report that does not increase dropped", func(t *testing.T) {
				var got []string
				for _, p := range h.progress {
					b, _ := json.Marshal(p)
					got = append(got, string(b))
				}
				want := []string{
					`{"progressToken":"tok","message":"one","progress":1,"total":3}`,
					`{"progressToken":"tok","progress":2,"total":3}`,
					`{"progressToken":"tok","message":"done","progress":3,"total":3}`,
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("progress\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			})
			t.Run("the wrapped handler still gets the lines at its own level", func(t *testing.T) {
				if s := f.stderr.String(); strings.Contains(s, "starting") || !strings.Contains(s, "failed once") {
					t.Errorf("stderr %.300q", s)
				}
			})
		})
	}
}

func TestNotificationsStayWithTheirCall(t *testing.T) {
	f := newNotesFixture(t)
	h := &heard{}
	cs := f.connect(t, legacy, h.options())
	if err := cs.SetLoggingLevel(context.Background(), &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	r := call(t, cs, "work", `{}`)
	t.Run("a call without a progress token reports to nobody", func(t *testing.T) {
		if got := text(r); got != "unheard" {
			t.Errorf("result %q, want unheard", got)
		}
	})
	h.wait(4)
	t.Run("a line logged after the call is over is not sent", func(t *testing.T) {
		(<-f.later)()
		call(t, cs, "work", `{}`) // its notifications follow anything sent before
		h.wait(4)
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, l := range h.logs {
			if strings.Contains(dataJSON(l), "too late") {
				t.Errorf("a line of a finished call was sent: %s", l.Data)
			}
		}
		if len(h.progress) != 0 {
			t.Errorf("progress without a token: %v", h.progress)
		}
	})
}

// dataJSON is a log notification's data as JSON (keys sorted).
func dataJSON(l *sdk.LoggingMessageParams) string {
	b, _ := json.Marshal(l.Data)
	return string(b)
}
