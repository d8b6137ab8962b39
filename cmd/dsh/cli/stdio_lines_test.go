package cli

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

// stdioClient drives "dsh serve" on stdio through pipes, a line at a time.
// Its input is written by a goroutine of its own, in order, as the server
// may answer a line before it reads the next.
type stdioClient struct {
	t      *testing.T
	in     chan io.Reader
	out    *bufio.Reader
	stderr *syncbuf.Buffer
	code   chan int
}

// startStdioServe starts "dsh serve" on stdio over scripts, and initializes
// its session.
func startStdioServe(t *testing.T, scripts string) *stdioClient {
	t.Helper()
	c := startStdioServeBare(t, scripts)
	c.send(strings.NewReader(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	if got := c.next(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":"init","result":`) {
		t.Fatalf("initialize answered %s", got)
	}
	return c
}

// startStdioServeBare starts "dsh serve" on stdio over scripts, its session
// not initialized.
func startStdioServeBare(t *testing.T, scripts string) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, in: make(chan io.Reader, 8), out: bufio.NewReaderSize(outR, 1<<20), stderr: &syncbuf.Buffer{}, code: make(chan int, 1)}
	go func() {
		c.code <- Run(context.Background(), []string{"--scripts", scripts, "--memory-limit", "0", "serve"}, inR, outW, c.stderr)
		outW.Close()
		inR.Close() // a server gone early fails the writes, rather than blocking them
	}()
	wrote := make(chan error, 1)
	go func() {
		var err error
		for r := range c.in {
			if err == nil {
				_, err = io.Copy(inW, r)
			}
		}
		inW.Close()
		wrote <- err
	}()
	t.Cleanup(func() {
		close(c.in)
		if err := <-wrote; err != nil {
			t.Errorf("writing to dsh serve: %v", err)
		}
		go func() { _, _ = io.Copy(io.Discard, outR) }()
		if code := <-c.code; code != exitOK {
			t.Errorf("exit status %d, want 0; stderr:\n%s", code, c.stderr)
		}
	})
	return c
}

// send has r written to the server's standard input, after what was sent
// before.
func (c *stdioClient) send(r io.Reader) { c.in <- r }

// next returns the next line the server writes, without its newline.
func (c *stdioClient) next() string {
	c.t.Helper()
	line, err := c.out.ReadString('\n')
	if err != nil {
		c.t.Fatalf("reading from dsh serve: %v (read %q); stderr:\n%s", err, line, c.stderr)
	}
	return strings.TrimSuffix(line, "\n")
}

// Each line of standard input the SDK's reader would end the session on
// is answered with the JSON-RPC error it earns, naming the request's id
// where it can be read, and the server answers the next request: each of
// these lines used to end "dsh serve" with exit status 1, or, over 16 MiB,
// without an answer.
func TestServeAnswersABadStdioLineAndGoesOn(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	long := func(before, after string) io.Reader {
		return io.MultiReader(strings.NewReader(before), &repeatReader{c: 'y', n: 17 << 20}, strings.NewReader(after))
	}
	cases := []struct {
		name, warning string
		line          io.Reader
		want          string
	}{
		{
			name: "a line that is not JSON gets a parse error with a null id",
			line: strings.NewReader("hello\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'h' looking for beginning of value"}}`,
		},
		{
			name: "a line cut short after its id gets a parse error naming the id",
			line: strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/li` + "\n"),
			want: `{"jsonrpc":"2.0","id":9,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input"}}`,
		},
		{
			name: `a message without "jsonrpc" gets an invalid request naming its id`,
			line: strings.NewReader(`{"id":3,"method":"tools/list"}` + "\n"),
			want: `{"jsonrpc":"2.0","id":3,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`,
		},
		{
			name: `a message with "jsonrpc" "1.0" gets an invalid request naming its id`,
			line: strings.NewReader(`{"jsonrpc":"1.0","id":"s","method":"tools/list"}` + "\n"),
			want: `{"jsonrpc":"2.0","id":"s","error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`,
		},
		{
			name: "a batch gets an invalid request with a null id",
			line: strings.NewReader(`[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]` + "\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch requests are not supported"}}`,
		},
		{
			name: "a call with arguments nested 10,000 deep gets an invalid request naming its id",
			line: strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x","arguments":{"a":` + deep + "}}}\n"),
			want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: the message is nested deeper than the 1000 levels it may have"}}`,
		},
		{
			name: "a message nested 10,000 deep before its id gets an invalid request naming its id still",
			line: strings.NewReader(`{"jsonrpc":"2.0","params":` + deep + `,"id":5,"method":"tools/call"}` + "\n"),
			want: `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: the message is nested deeper than the 1000 levels it may have"}}`,
		},
		{
			name: "a message that is not an object gets an invalid request with a null id",
			line: strings.NewReader("42\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message is a JSON object"}}`,
		},
		{
			name: "an id that is an object gets an invalid request with a null id",
			line: strings.NewReader(`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}` + "\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: \"id\" must be a string, a number or null"}}`,
		},
		{
			name: "a message with neither a method nor an id gets an invalid request with a null id",
			line: strings.NewReader(`{"jsonrpc":"2.0","result":{}}` + "\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message has a \"method\", or answers an \"id\""}}`,
		},
		{
			name:    "a 17 MiB line gets an invalid request naming the id it begins with",
			line:    long(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"x":"`, `"}}`+"\n"),
			want:    `{"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"invalid request: the message has 17825856 bytes, over the 16777216 a message may have"}}`,
			warning: "dsh: serving MCP on stdio: standard input line 3: invalid request: the message has 17825856 bytes, over the 16777216 a message may have: answered with an error\n",
		},
		{
			name: "a 17 MiB line whose id comes last gets an invalid request with a null id",
			line: long(`{"jsonrpc":"2.0","method":"tools/list","params":{"x":"`, `"},"id":6}`+"\n"),
			want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message has 17825856 bytes, over the 16777216 a message may have"}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := startStdioServe(t, t.TempDir())
			c.send(io.MultiReader(tc.line, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")))
			if got := c.next(); got != tc.want {
				t.Errorf("the bad line was answered\n%s\nwant\n%s", got, tc.want)
			}
			if got, want := c.next(), `{"jsonrpc":"2.0","id":2,"result":`; !strings.HasPrefix(got, want) {
				t.Errorf("the next request was answered %s, want %s…", got, want)
			}
			if tc.warning != "" && !strings.Contains(c.stderr.String(), tc.warning) {
				t.Errorf("stderr lacks %q:\n%s", tc.warning, c.stderr)
			}
		})
	}
}

// A request reusing the id of a request still in flight is answered with an
// error (the SDK dropped it without an answer), the request in flight is
// not disturbed, and the id is free again once that request is answered.
func TestServeAnswersARequestReusingAnIDInFlight(t *testing.T) {
	dir := t.TempDir()
	plugin := `import { defineTool, tools } from "dsh";
tools.register(defineTool({
  name: "hang",
  description: "Waits until aborted.",
  parameters: {},
  output: { schema: { type: "string" }, render: (a, v) => [{ type: "text", text: v }] },
  async execute(_args, exec) {
    await new Promise((resolve) => exec.signal.addEventListener("abort", resolve));
    return "stopped";
  },
}));
`
	if err := os.WriteFile(filepath.Join(dir, "hang.js"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startStdioServe(t, dir)
	c.send(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hang","arguments":{}}}` + "\n" +
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n"))
	if got, want := c.next(), `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"request id already in use"}}`; got != want {
		t.Fatalf("the second request with id 7 was answered\n%s\nwant\n%s\nstderr:\n%s", got, want, c.stderr)
	}
	c.send(strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}` + "\n"))
	if got, want := c.next(), `{"jsonrpc":"2.0","id":7,`; !strings.HasPrefix(got, want) {
		t.Fatalf("the cancelled call was answered %s, want %s…", got, want)
	}
	c.send(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/list"}` + "\n"))
	if got, want := c.next(), `{"jsonrpc":"2.0","id":7,"result":{`; !strings.HasPrefix(got, want) {
		t.Errorf("id 7 reused once answered got %s, want %s…", got, want)
	}
}
