package cli

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The connection of "dsh serve" on stdio hands over the messages of the
// lines it takes, answers the others, writes a message as one line, and
// Close unblocks a Read waiting for input, which returns io.EOF.
func TestLineConnReadsWritesAndCloses(t *testing.T) {
	inR, inW := io.Pipe()
	var out strings.Builder
	w := &lockedWriter{w: &out}
	conn := newLineConn(newStdioLines(inR, w, func(int, string) {}), w)
	go func() {
		_, _ = io.WriteString(inW, "[]\n"+`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	}()
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "ping" {
		t.Fatalf("read %#v, want the ping", msg)
	}
	if err := conn.Write(context.Background(), &jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Result: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}` + "\n" +
		`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	if out.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", out.String(), want)
	}
	read := make(chan error, 1)
	go func() {
		_, err := conn.Read(context.Background())
		read <- err
	}()
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

// Each line of standard input is decoded once, by the check that decides
// whether the SDK can take it: it used to be decoded there and then twice
// more by the SDK's IOTransport (as a batch first), each of the SDK's
// decodes allocating a 32 KiB buffer, two for a request (its envelope,
// then its method): about 160 KiB a request, now 64 KiB
// (BENCHMARKS.md, "MCP gateway (issue 26)").
func TestLineConnDecodesEachLineOnce(t *testing.T) {
	const n = 200
	inR, inW := io.Pipe()
	conn := newLineConn(newStdioLines(inR, io.Discard, func(int, string) {}), io.Discard)
	defer conn.Close()
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"Ada"}}}` + "\n"
	go func() {
		for range n + 1 {
			if _, err := io.WriteString(inW, line); err != nil {
				return
			}
		}
	}()
	if _, err := conn.Read(context.Background()); err != nil { // the reader's start
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		if _, err := conn.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if got, limit := (after.TotalAlloc-before.TotalAlloc)/n, uint64(96<<10); got > limit {
		t.Errorf("reading a line allocates %d bytes, want at most %d (one decode)", got, limit)
	}
}
