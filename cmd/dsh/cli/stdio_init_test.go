package cli

import (
	"strings"
	"testing"
)

// A request the SDK refuses before initialize gets a JSON-RPC error with
// code -32600 (invalid request), where the SDK answers one with code 0;
// ping before initialize is served, and the session is initialized
// afterwards as usual. A second initialize is an invalid request too.
func TestServeAnswersARequestBeforeInitializeWithAnInvalidRequest(t *testing.T) {
	c := startStdioServeBare(t, t.TempDir())
	for _, step := range []struct{ name, send, want string }{
		{
			name: "tools/list before initialize gets an invalid request naming the method",
			send: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			want: `{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"method \"tools/list\" is invalid before initialize: send initialize first"}}`,
		},
		{
			name: "tools/call before initialize too",
			send: `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"x","arguments":{}}}`,
			want: `{"jsonrpc":"2.0","id":"c","error":{"code":-32600,"message":"method \"tools/call\" is invalid before initialize: send initialize first"}}`,
		},
		{
			name: "ping before initialize is answered",
			send: `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			want: `{"jsonrpc":"2.0","id":2,"result":{}}`,
		},
		{
			name: "initialize is answered afterwards",
			send: `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			want: `{"jsonrpc":"2.0","id":5,"result":{`,
		},
		{
			name: "and tools/list is served once initialized",
			send: `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
			want: `{"jsonrpc":"2.0","id":6,"result":{`,
		},
		{
			name: "a second initialize gets an invalid request",
			send: `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			want: `{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"duplicate \"initialize\" received"}}`,
		},
	} {
		c.send(strings.NewReader(step.send + "\n"))
		if got := c.next(); !strings.HasPrefix(got, step.want) {
			t.Fatalf("%s: answered\n%s\nwant\n%s\nstderr:\n%s", step.name, got, step.want, c.stderr)
		}
	}
}

// The sessionless requests of protocol 2026-07-28, which carry their
// protocol version in _meta, need no initialize: the SDK serves them on a
// fresh stdio session, and dsh leaves them to it.
func TestServeServesSessionlessRequestsWithoutInitialize(t *testing.T) {
	c := startStdioServeBare(t, t.TempDir())
	sessionless := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, step := range []struct{ name, send, want string }{
		{
			name: "a sessionless tools/list of protocol 2026-07-28 is served",
			send: `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + sessionless + `}}`,
			want: `{"jsonrpc":"2.0","id":3,"result":{"resultType":"complete",`,
		},
		{
			name: "a server/discover of protocol 2026-07-28 is served",
			send: `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{` + sessionless + `}}`,
			want: `{"jsonrpc":"2.0","id":4,"result":{`,
		},
	} {
		c.send(strings.NewReader(step.send + "\n"))
		if got := c.next(); !strings.HasPrefix(got, step.want) {
			t.Fatalf("%s: answered\n%s\nwant\n%s\nstderr:\n%s", step.name, got, step.want, c.stderr)
		}
	}
}
