package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverPipes returns the two ends dsh holds of a stdio server's streams
// (its output to read, its input to write) and the server's ends.
func serverPipes(t *testing.T) (out io.ReadCloser, in io.WriteCloser, serverOut, serverIn *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ir, iw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(); ir.Close() })
	return r, iw, w, ir
}

// The connection to a stdio server reads what the SDK's IOTransport reads:
// one message a line, a message spanning lines, a batch taken apart in
// order; and fails as it does on trailing data and at the end.
func TestFrameConnReadsWhatTheSDKReads(t *testing.T) {
	for _, c := range []struct {
		name, input string
		want        []string // the messages' methods or ids, in order
		wantErr     string
	}{
		{"one message a line", `{"jsonrpc":"2.0","method":"a"}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", []string{"a", "1"}, "EOF"},
		{"a message spanning lines", "{\"jsonrpc\":\"2.0\",\n  \"method\":\"a\"}\n", []string{"a"}, "EOF"},
		{"a batch, in order", `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":2,"result":{}}]` + "\n" + `{"jsonrpc":"2.0","method":"b"}` + "\n", []string{"a", "2", "b"}, "EOF"},
		{"trailing data ends the connection", `{"jsonrpc":"2.0","method":"a"} x` + "\n", nil, "invalid trailing data at the end of a message"},
		{"an empty batch ends it", "[]\n", nil, "empty batch"},
		{"a message over 16 MiB ends it", "[" + strings.Repeat(" ", maxFrame) + "]\n", nil, errFrameTooLarge.Error()},
		{"a message that is not JSON-RPC ends it", `{"jsonrpc":"2.0"}` + "\n", nil, "invalid request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, in, serverOut, _ := serverPipes(t)
			conn := newFrameConn(out, in)
			defer conn.Close()
			go func() {
				_, _ = io.WriteString(serverOut, c.input)
				serverOut.Close()
			}()
			var got []string
			var err error
			for {
				var msg jsonrpc.Message
				msg, err = conn.Read(context.Background())
				if err != nil {
					break
				}
				switch m := msg.(type) {
				case *jsonrpc.Request:
					got = append(got, m.Method)
				case *jsonrpc.Response:
					got = append(got, fmt.Sprint(m.ID.Raw()))
				}
			}
			if strings.Join(got, " ") != strings.Join(c.want, " ") {
				t.Errorf("read %q, want %q", got, c.want)
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("ended with %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// Close unblocks a Read waiting for the server, which returns io.EOF; a
// written message is one line.
func TestFrameConnCloseUnblocksARead(t *testing.T) {
	out, in, _, serverIn := serverPipes(t)
	conn := newFrameConn(out, in)
	if err := conn.Write(context.Background(), &jsonrpc.Request{Method: "ping"}); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 100)
	n, _ := serverIn.Read(line)
	if got, want := string(line[:n]), `{"jsonrpc":"2.0","method":"ping"}`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		read <- err
	}()
	time.Sleep(10 * time.Millisecond) // the Read is waiting, most likely
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-read:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Read after Close returned %v, want io.EOF", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not unblock the Read")
	}
}

// bytesPerMessage is how many bytes reading n messages of the server
// through conn allocates, per message.
func bytesPerMessage(t *testing.T, n int, conn func(io.ReadCloser, io.WriteCloser) sdk.Connection) uint64 {
	out, in, serverOut, _ := serverPipes(t)
	c := conn(out, in)
	defer c.Close()
	msg := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Ada"}]}}` + "\n"
	go func() {
		for range n + 1 {
			if _, err := io.WriteString(serverOut, msg); err != nil {
				return
			}
		}
	}()
	if _, err := c.Read(context.Background()); err != nil { // the reader's start
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	return (after.TotalAlloc - before.TotalAlloc) / uint64(n)
}

// Each message read from a stdio server is decoded once: the SDK's
// IOTransport decodes each twice (as a batch first), each decode
// allocating a 32 KiB buffer, which made most of a gateway's allocations
// (BENCHMARKS.md, "MCP gateway (issue 26)").
func TestFrameConnDecodesEachMessageOnce(t *testing.T) {
	got := bytesPerMessage(t, 200, func(r io.ReadCloser, w io.WriteCloser) sdk.Connection { return newFrameConn(r, w) })
	if limit := uint64(48 << 10); got > limit {
		t.Errorf("reading a message allocates %d bytes, want at most %d (one decode)", got, limit)
	}
}
