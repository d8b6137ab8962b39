package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// silentClient is a client that declares elicitation and never answers:
// its handler waits until the server withdraws the question (or the test
// ends). asked receives each question's message as it arrives, withdrawn
// each question's context error once the server withdrew it.
type silentClient struct {
	asked     chan string
	withdrawn chan error
	release   chan struct{}
	once      sync.Once
}

func newSilentClient(t *testing.T) *silentClient {
	c := &silentClient{asked: make(chan string, 4), withdrawn: make(chan error, 4), release: make(chan struct{})}
	t.Cleanup(func() { c.once.Do(func() { close(c.release) }) })
	return c
}

func (c *silentClient) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			c.asked <- req.Params.Message
			select {
			case <-ctx.Done():
				c.withdrawn <- ctx.Err()
				return nil, ctx.Err()
			case <-c.release:
				return nil, context.Canceled
			}
		},
		// A multi-round-trip client is asked inside results; the SDK
		// client would answer through the handler above.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}
}

// callAsync calls name on cs in a goroutine; the channel gets its result
// (nil when the call failed at the protocol level).
func callAsync(cs *sdk.ClientSession, name string) <-chan *sdk.CallToolResult {
	out := make(chan *sdk.CallToolResult, 1)
	go func() {
		r, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: json.RawMessage(`{}`)})
		if err != nil {
			r = nil
		}
		out <- r
	}()
	return out
}

// within waits for ch at most d, failing the test past it.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: nothing within %s", what, d)
		panic("unreachable")
	}
}

// The questions' bound in these tests: short, and far below the generous
// bound the tests wait for anything (a minute).
const (
	questionTimeout = 200 * time.Millisecond
	generous        = time.Minute
)

func TestAQuestionNobodyAnswersEndsAtTheApprovalTimeout(t *testing.T) {
	t.Run("on "+legacy+", an unanswered approval denies the call as timed out, and the question is withdrawn", func(t *testing.T) {
		f := newFixtureWith(t, mcp.ServerOptions{ApprovalTimeout: questionTimeout})
		c := newSilentClient(t)
		cs := f.connect(t, legacy, c.options())
		start := time.Now()
		r := within(t, callAsync(cs, "guarded"), generous, "the call's result")
		if r == nil {
			t.Fatal("the call failed at the protocol level")
		}
		if took := time.Since(start); took < questionTimeout {
			t.Errorf("the call ended after %s, before the timeout", took)
		}
		const want = `approval for tool "guarded" timed out after 200ms`
		if !r.IsError || text(r) != "Error: "+want {
			t.Errorf("result isError=%v %q, want the failure %q", r.IsError, text(r), "Error: "+want)
		}
		if msg := within(t, f.guarded, generous, "the tools/result"); msg != want {
			t.Errorf("the result the engine finished with: %q, want %q", msg, want)
		}
		if err := within(t, c.withdrawn, generous, "the withdrawal"); err == nil {
			t.Error("the question was not withdrawn")
		}
		if len(f.ran) != 0 {
			t.Error("the tool ran")
		}
	})

	// (A multi-round-trip client's unanswered question is
	// TestAQuestionNobodyAnswersInTimeTimesOut's.)
	for _, version := range []string{legacy} {
		t.Run("on "+version+", an unanswered elicitation answers cancel", func(t *testing.T) {
			srv, err := mcp.NewServer(context.Background(), askEngine(t), mcp.ServerOptions{
				Agent: engine.NewAgent("main", nil), ApprovalTimeout: questionTimeout,
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Close)
			f := &fixture{srv: srv}
			c := newSilentClient(t)
			cs := f.connect(t, version, c.options())
			r := within(t, callAsync(cs, "ask"), generous, "the call's result")
			if r == nil {
				t.Fatal("the call failed at the protocol level")
			}
			if want := `{"action":"cancel","content":null}`; r.IsError || text(r) != want {
				t.Errorf("result isError=%v %q, want %q", r.IsError, text(r), want)
			}
		})
	}
}

func TestAQuestionEndsWithItsSession(t *testing.T) {
	// The timeout is long: only the session's end can end these calls.
	opts := mcp.ServerOptions{ApprovalTimeout: time.Hour}
	const cancelled = "tool call aborted before dispatch"

	t.Run("on "+legacy+", a client that leaves cancels the call waiting on its approval", func(t *testing.T) {
		f := newFixtureWith(t, opts)
		c := newSilentClient(t)
		ct, st := sdk.NewInMemoryTransports()
		ss, err := f.srv.Server().Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		leaving := &leavingTransport{Transport: ct}
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, c.options()).
			Connect(context.Background(), leaving, &sdk.ClientSessionOptions{ProtocolVersion: legacy})
		if err != nil {
			t.Fatal(err)
		}
		res := callAsync(cs, "guarded")
		within(t, c.asked, generous, "the question")
		// The client goes away (its process ends): the stream closes
		// under both ends, with nothing said.
		if err := leaving.conn.Close(); err != nil {
			t.Error(err)
		}
		defer func() {
			_ = cs.Close()
			_ = ss.Wait()
		}()
		if msg := within(t, f.guarded, generous, "the tools/result"); msg != cancelled {
			t.Errorf("the call ended with %q, want %q", msg, cancelled)
		}
		within(t, res, generous, "the client's call")
	})

	t.Run("over HTTP on "+legacy+", a DELETE of the session cancels the call and is answered", func(t *testing.T) {
		f := newFixtureWith(t, opts)
		hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{}))
		defer hs.Close()
		c := newSilentClient(t)
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, c.options()).
			Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, &sdk.ClientSessionOptions{ProtocolVersion: legacy})
		if err != nil {
			t.Fatal(err)
		}
		res := callAsync(cs, "guarded")
		within(t, c.asked, generous, "the question")
		del, err := http.NewRequest(http.MethodDelete, hs.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		del.Header.Set("Mcp-Session-Id", cs.ID())
		deleted := make(chan int, 1)
		go func() {
			r, err := hs.Client().Do(del)
			if err != nil {
				deleted <- 0
				return
			}
			r.Body.Close()
			deleted <- r.StatusCode
		}()
		if code := within(t, deleted, generous, "the DELETE's answer"); code != http.StatusNoContent {
			t.Errorf("DELETE: status %d, want %d", code, http.StatusNoContent)
		}
		if msg := within(t, f.guarded, generous, "the tools/result"); msg != cancelled {
			t.Errorf("the call ended with %q, want %q", msg, cancelled)
		}
		_ = cs.Close()
		within(t, res, generous, "the client's call")
	})

	t.Run("on "+legacy+", the end of the server's context cancels the waiting call (an interrupted dsh serve)", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		srv, err := mcp.NewServer(ctx, askEngine(t), mcp.ServerOptions{Agent: engine.NewAgent("main", nil), ApprovalTimeout: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
		f := &fixture{srv: srv}
		c := newSilentClient(t)
		cs := f.connect(t, legacy, c.options())
		res := callAsync(cs, "ask")
		within(t, c.asked, generous, "the question")
		cancel()
		// The body's elicitation ends with the call's cancellation, and
		// the body fails with it.
		const want = "Error: context canceled"
		if r := within(t, res, generous, "the call's result"); r == nil || !r.IsError || text(r) != want {
			t.Errorf("result %v, want the failure %q", r, want)
		}
	})
}

// leavingTransport keeps its connection, so that a test can close it under
// the session, as a client process that ends does.
type leavingTransport struct {
	sdk.Transport
	conn sdk.Connection
}

func (l *leavingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := l.Transport.Connect(ctx)
	l.conn = c
	return c, err
}
