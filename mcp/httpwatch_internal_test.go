package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestWatchedEventStreams(t *testing.T) {
	stream := ": a comment\r\n" +
		"event: message\r\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\r\ndata: \"method\":\"roots/list\"}\r\n\r\n" +
		"data:{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":\"s\",\"method\":\"sampling/createMessage\"}\r\r" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"t\",\"execution\":{\"taskSupport\":\"required\"}}]}}\n\n" +
		"data: " + strings.Repeat("x", 200) + "\n\n" // too large to read: skipped
	cases := []struct {
		name string
		r    func(io.Reader) io.Reader
	}{
		{"read whole", func(r io.Reader) io.Reader { return r }},
		{"read a byte at a time", iotest.OneByteReader},
	}
	for _, c := range cases {
		t.Run("a stream "+c.name+" passes unchanged, its requests counted and its tools/list read", func(t *testing.T) {
			tasks := newTaskWatch()
			logs := &logSeq{}
			tasks.logs = logs
			id, _ := jsonrpc.MakeID(float64(1))
			tasks.sent(&jsonrpc.Request{ID: id, Method: "tools/list"})
			w := &httpWatch{maxMessage: 150, tasks: tasks, pending: newHTTPPending(10)}
			b := &watchedBody{rc: io.NopCloser(c.r(strings.NewReader(stream))), w: w, ctx: context.Background(), sse: true, closed: make(chan struct{})}
			got, err := io.ReadAll(b)
			if err != nil || string(got) != stream {
				t.Fatalf("read %q, %v; want the stream unchanged", got, err)
			}
			if n := len(w.pending.ids); n != 2 {
				t.Errorf("%d requests pending, want 2 (ids 7 and \"s\"): %v", n, w.pending.ids)
			}
			if req := tasks.take(); !req["t"] {
				t.Errorf("tools requiring tasks %v, want t", req)
			}
			if logs.read != 1 {
				t.Errorf("%d log lines read, want 1", logs.read)
			}
		})
	}
	t.Run("at the cap, a stream waits for an answer before reading on", func(t *testing.T) {
		two := "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"roots/list\"}\n\n" +
			"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"roots/list\"}\n\n"
		w := &httpWatch{maxMessage: 1 << 10, pending: newHTTPPending(1)}
		ctx, cancel := context.WithCancel(context.Background())
		b := &watchedBody{rc: io.NopCloser(strings.NewReader(two)), w: w, ctx: ctx, sse: true, closed: make(chan struct{})}
		buf := make([]byte, 1<<10)
		n, err := b.Read(buf)
		if err != nil || string(buf[:n]) != two[:len(two)/2] {
			t.Fatalf("first read %q, %v; want the first event alone", buf[:n], err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := b.Read(buf)
			done <- err
		}()
		id, _ := jsonrpc.MakeID(float64(1))
		w.pending.answered(id)
		if err := <-done; err != nil {
			t.Fatalf("the read after the answer: %v", err)
		}
		go func() {
			_, err := b.Read(buf)
			done <- err
		}()
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("a read at the cap after the request ended: %v, want %v", err, context.Canceled)
		}
	})
}
