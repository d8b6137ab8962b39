package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// rawServer answers dsh's handshake and tool listing (no tools) on conn,
// by hand, so that the test decides what else the server reads and writes.
func rawServer(ctx context.Context, t *testing.T, conn sdk.Connection) {
	t.Helper()
	for {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Errorf("the server's handshake: %v", err)
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			continue
		}
		var result string
		switch req.Method {
		case "server/discover": // a server of 2025-06-18: initialize follows
			if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found"}}); err != nil {
				t.Errorf("the server's handshake: %v", err)
				return
			}
			continue
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"v1"}}`
		case "tools/list":
			result = `{"tools":[]}`
		default:
			t.Errorf("the server got %s during the handshake", req.Method)
			return
		}
		if err := conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: json.RawMessage(result)}); err != nil {
			t.Errorf("the server's handshake: %v", err)
			return
		}
		if req.Method == "tools/list" {
			return
		}
	}
}

// intID is the JSON-RPC request ID i.
func intID(i int) jsonrpc.ID {
	id, _ := jsonrpc.MakeID(float64(i))
	return id
}

func TestAServerSendingRequestsWithoutReadingTheAnswersIsBounded(t *testing.T) {
	const max, sent = 8, 400
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dshSide, srvSide := sdk.NewInMemoryTransports()
	conn, err := srvSide.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	handshake := make(chan struct{})
	go func() {
		defer close(handshake)
		rawServer(ctx, t, conn)
	}()
	dial := func(context.Context, mcp.ServerSpec) (sdk.Transport, error) { return dshSide, nil }
	client, diags := mcp.Connect(ctx, engine.New(), []mcp.ServerSpec{{Name: "flood", Command: "unused"}},
		mcp.Options{Dial: dial, MaxPendingRequests: max})
	// The server's end closes first: dsh's answers being written end.
	defer func() {
		_ = conn.Close()
		_ = client.Close()
	}()
	<-handshake
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	before := runtime.NumGoroutine()

	// The server sends its requests and reads nothing: dsh's answers
	// cannot be written, and dsh must stop reading rather than pile them up.
	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		for i := range sent {
			req := &jsonrpc.Request{ID: intID(i + 1), Method: "roots/list", Params: json.RawMessage(`{}`)}
			if err := conn.Write(ctx, req); err != nil {
				wrote <- err
				return
			}
			written.Add(1)
		}
		wrote <- nil
	}()
	// Wait for the writes to stop moving (or to end: the bound is missing).
	last, still := int64(-1), 0
	for still < 5 {
		select {
		case err := <-wrote:
			t.Fatalf("the server wrote all %d requests without reading an answer (error %v): dsh holds them all", sent, err)
		case <-time.After(100 * time.Millisecond):
		}
		if n := written.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	// In flight: max handled, one being refused, one decoded, one buffered.
	if n := written.Load(); n > max+3 {
		t.Errorf("dsh read %d requests it cannot answer, want at most %d", n, max+3)
	}
	if n := runtime.NumGoroutine(); n > before+max+10 {
		t.Errorf("%d goroutines with the server stalled, %d before", n, before)
	}

	// Once the server reads, every request gets one answer: a result, or
	// the error of the cap.
	want := fmt.Sprintf("too many requests in flight from this server: at most %d at once", max)
	answered := map[int64]bool{}
	refused := 0
	for len(answered) < sent {
		msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("reading the answers (%d of %d): %v", len(answered), sent, err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("the server got %T, want answers only", msg)
		}
		id, _ := resp.ID.Raw().(int64)
		if answered[id] {
			t.Fatalf("request %d answered twice", id)
		}
		answered[id] = true
		if resp.Error != nil {
			werr, ok := resp.Error.(*jsonrpc.Error)
			if !ok || werr.Code != mcp.CodeTooManyRequests || werr.Message != want {
				t.Fatalf("request %d got %v, want code %d %q", id, resp.Error, mcp.CodeTooManyRequests, want)
			}
			refused++
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if refused == 0 {
		t.Error("no request was refused")
	}

	// And the next request is served.
	if err := conn.Write(ctx, &jsonrpc.Request{ID: intID(sent + 1), Method: "roots/list", Params: json.RawMessage(`{}`)}); err != nil {
		t.Fatal(err)
	}
	msg, err := conn.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if resp, ok := msg.(*jsonrpc.Response); !ok || resp.Error != nil {
		t.Fatalf("the next request got %#v, want a result", msg)
	}
}
