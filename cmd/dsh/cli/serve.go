package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/scripting"
)

// shutdownTimeout bounds how long stopping the HTTP server waits for its
// requests.
const shutdownTimeout = 5 * time.Second

func newServeCmd(o *options) *cobra.Command {
	var httpAddr, tokenFile string
	var watchDirs bool
	var debounce time.Duration
	var maxSessions int
	var pollAfter time.Duration
	var oauth oauthFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the tools to MCP clients (stdio, or streamable HTTP)",
		Long: `Serve loads the plugins and serves what the selected --executor shows the
model (the tools, or run_code under --executor ptc, its SDK in the server's
instructions and from a describe_tools tool) over the Model Context
Protocol: on standard input and output by default, or over streamable HTTP
with --http ADDR (loopback only unless ADDR names another interface; the
endpoint is /mcp). Every tools/call runs as a model-direct call of --agent
through the whole pipeline: policies, guards, timeouts, the --log.

An ask decision becomes an elicitation request to the client (--approve
prompt, the default here): accepting allows the call once, declining or
cancelling denies it, and so does a client without elicitation. --approve
allow, deny and none answer every ask as elsewhere.

Over HTTP, requests whose Host is not loopback (or the address's own host;
any name on 0.0.0.0 or ::) are refused (403), and so are those whose Origin
is neither loopback nor the address's own host, whatever the address (a
request without Origin passes); with --token-file every request must carry
"Authorization: Bearer <token>", the scheme in any case (401 otherwise). On
0.0.0.0 (or ::) the URL printed is http://127.0.0.1:PORT/mcp (or [::1]).
With --oauth-issuer URL and --oauth-audience URL (instead of --token-file)
the server is an OAuth protected resource: it publishes its metadata at
/.well-known/oauth-protected-resource (and .../mcp), and every request must
carry a JWT access token signed by the issuer (keys from its metadata's
jwks_uri; RS256, PS256, ES256 or EdDSA) for the audience, unexpired (60s
of skew); others get 401 with a challenge naming the metadata. A call runs
for the token's subject, client and scopes (exec.caller in policies and
tools), and with --oauth-tool-scopes FILE a token sees and calls only the
tools its scopes cover. --oauth-introspect URL checks every token at the
issuer's introspection endpoint instead (RFC 7662), as the client named by
$DSH_OAUTH_INTROSPECT_CLIENT_ID and $DSH_OAUTH_INTROSPECT_CLIENT_SECRET.
At most --http-max-sessions sessions (1000) are open at once: a new one
closes the session idle for longest, or gets 503 when every session is
busy. With --http-poll-after PERIOD, a call still running after PERIOD has
its response stream closed with a retry delay of 1s (SSE polling, for
clients of protocol 2025-11-25, whose streams start with a priming event):
the client reconnects with Last-Event-ID and gets the result there.

Plugins are loaded once, or, with --watch, reloaded as their files change,
as "dsh watch" does: each load, reload, unload and diagnostic is printed on
standard error, a version that fails to load leaves the old one serving,
and a change to the tool list reaches the connected clients as
notifications/tools/list_changed (so does a change in an imported --mcp
server's tools). Diagnostics go to standard error.

The --mcp and --mcp-config servers connect in the background: clients are
answered at once with the plugins' tools, and each server's tools join
the list (announced as above) when it connects or reconnects; a server
not reached is reported on standard error and retried.

Serve runs until the client closes standard input (stdio), or until it is
interrupted: on SIGINT it stops quietly with status 130, on SIGTERM with
143.

Exit status: 0 when the client left, 1 for problems the user must fix, 2
for a usage error, 130 when interrupted (143 for SIGTERM).`,
		Example: `  dsh --scripts scripts/examples/plugins serve
  dsh --scripts scripts/examples/plugins --executor ptc serve --http 127.0.0.1:8080 --token-file token.txt
  dsh --scripts scripts serve --watch
  dsh --scripts scripts serve --http 0.0.0.0:8080 --oauth-issuer https://auth.example.com \
    --oauth-audience https://mcp.example.com/mcp --oauth-tool-scopes tool-scopes.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !watchDirs && cmd.Flags().Changed("debounce") {
				return errors.New("--debounce needs --watch")
			}
			if watchDirs && debounce <= 0 {
				return fmt.Errorf("--debounce %v: the period must be positive", debounce)
			}
			if !watchDirs {
				debounce = 0
			}
			if cmd.Flags().Changed("http-max-sessions") && httpAddr == "" {
				return errors.New("--http-max-sessions needs --http")
			}
			if maxSessions < 1 {
				return fmt.Errorf("--http-max-sessions %d: the cap must be at least 1", maxSessions)
			}
			if cmd.Flags().Changed("http-poll-after") && httpAddr == "" {
				return errors.New("--http-poll-after needs --http")
			}
			if pollAfter < 0 {
				return fmt.Errorf("--http-poll-after %v: the period must not be negative (0 never polls)", pollAfter)
			}
			if err := oauth.check(httpAddr, tokenFile); err != nil {
				return err
			}
			err := serve(cmd.Context(), o, httpAddr, tokenFile, debounce, maxSessions, pollAfter, &oauth)
			if cmd.Context().Err() != nil {
				// Stopping on a signal is how a server ends, whatever it
				// was doing: no message, 130 (143 after SIGTERM).
				return exitWith(exitInterrupted)
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&watchDirs, "watch", false, "reload plugins as their files change, and tell the clients")
	cmd.Flags().DurationVar(&debounce, "debounce", scripting.DefaultDebounce, "with --watch, wait `PERIOD` of quiet after a change before reloading")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on `ADDR` (such as 127.0.0.1:8080) instead of stdio")
	cmd.Flags().StringVar(&tokenFile, "token-file", "", "require the bearer token in `FILE` on every HTTP request")
	cmd.Flags().IntVar(&maxSessions, "http-max-sessions", mcp.DefaultMaxSessions, "keep at most `N` HTTP sessions open: a new one closes the one idle for longest, or gets 503 when all are busy")
	oauth.register(cmd)
	cmd.Flags().DurationVar(&pollAfter, "http-poll-after", 0, "close the response stream of a call still running after `PERIOD`, for the client to resume it (SSE polling; 0: never)")
	return cmd
}

// serve runs the serve command; a positive debounce watches the plugins.
func serve(ctx context.Context, o *options, httpAddr, tokenFile string, debounce time.Duration, maxSessions int, pollAfter time.Duration, oauth *oauthFlags) error {
	if tokenFile != "" && httpAddr == "" {
		return errors.New("--token-file needs --http")
	}
	// Reload reports, the session's log and the server's own lines share
	// standard error.
	stderr := &lockedWriter{w: o.stderr}
	o.stderr = stderr
	var host, port string
	if httpAddr != "" {
		var err error
		if host, port, err = net.SplitHostPort(httpAddr); err != nil {
			return fmt.Errorf("--http %s: want HOST:PORT, such as 127.0.0.1:8080", httpAddr)
		}
		if host == "" {
			host = "127.0.0.1"
		}
	}
	var token string
	if tokenFile != "" {
		b, err := os.ReadFile(tokenFile)
		if err != nil {
			return userErrorf("--token-file %s: %v", tokenFile, pathErr(err))
		}
		if token = strings.TrimSpace(string(b)); token == "" {
			return userErrorf("--token-file %s: the file is empty", tokenFile)
		}
	}
	switch o.approve {
	case "", approvePrompt:
		// Under stdio, standard input is the protocol: the client asks.
		o.approval = mcp.Approval(nil)
	}

	o.logHandler = mcp.LogHandler // script log lines reach the calling client too
	s, err := newSession(o)
	if err != nil {
		return err
	}
	defer s.close()
	var log engine.EventLog
	l, err := o.openLog()
	if err != nil {
		return err
	}
	if l != nil {
		defer l.Close()
		log = l
	}
	if debounce > 0 {
		dirs, err := o.scriptDirs()
		if err != nil {
			return err
		}
		stopWatch, _, _, err := startReloader(ctx, s, dirs, debounce, stderr)
		if err != nil {
			return err
		}
		defer stopWatch()
	} else if _, err := s.loadPlugins(ctx); err != nil {
		return err
	}
	s.printDiagnostics(o.stderr)
	resource, toolScopes, err := oauth.resource(s.logger) // serve_oauth.go
	if err != nil {
		return err
	}
	srv, err := mcp.NewServer(ctx, s.svc, mcp.ServerOptions{
		Agent: s.agent, Name: "dsh", Version: mainVersion(), Logger: s.logger, Log: log,
		ApprovalTimeout: o.approvalTimeout, ToolScopes: toolScopes, TracerProvider: o.telemetry.tracerProvider(),
		MeterProvider: o.telemetry.meterProvider(),
	})
	if err != nil {
		return userErrorf("%v", err)
	}
	defer srv.Close()
	// The imports connect in the background, once the server follows the
	// engine's tools: a client is answered at once, and an import's tools
	// arrive with notifications/tools/list_changed when it connects.
	if err := s.startMCP(); err != nil {
		return err
	}
	if s.mcp != nil {
		// Their resources, templates and prompts too, as they list them.
		defer srv.Reexport(s.mcp)()
	}

	if httpAddr == "" {
		return serveStdio(ctx, o, srv)
	}
	return serveHTTP(ctx, o, srv, net.JoinHostPort(host, port), token, maxSessions, pollAfter, resource)
}

// serveStdio serves one client on the command's standard streams until it
// leaves or ctx is cancelled. (The SDK's Server.Run would do the same, but
// logs a cancellation as an error.)
func serveStdio(ctx context.Context, o *options, srv *mcp.Server) error {
	ss, err := srv.Server().Connect(ctx, stdio(o), nil)
	if err != nil {
		return userErrorf("serving MCP on stdio: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = ss.Close()
		<-done
		return nil
	}
	if err != nil && !clientGone(err) {
		return userErrorf("serving MCP on stdio: %v", err)
	}
	return nil
}

// clientGone reports whether err says the client closed its end of the
// stream (a notification written as it left, say): the normal end of a
// stdio session.
func clientGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, sdk.ErrConnectionClosed)
}

// stdio is the transport on the command's standard streams. A line of
// standard input the SDK would end the session on (over its frame bound,
// not JSON, too deep, a batch, not JSON-RPC 2.0) is answered with a
// JSON-RPC error and a warning, and the session goes on (see stdioLines);
// so is a request reusing an id in flight (see stdioConn). The SDK and
// those answers share one locked writer, and each writes a message in one
// Write, so two messages never interleave.
func stdio(o *options) sdk.Transport {
	var src io.Reader = io.NopCloser(o.stdin)
	if o.stdin == os.Stdin {
		src = os.Stdin // closed with the session, as the SDK's StdioTransport does
	}
	out := &lockedWriter{w: o.stdout}
	in := newStdioLines(src, out, func(line int, msg string) {
		fmt.Fprintf(o.stderr, "dsh: serving MCP on stdio: standard input line %d: %s: answered with an error\n", line, msg)
	})
	return &stdioTransport{in: in, out: out}
}

// endpointURL is the URL of the endpoint that a user can open, for a
// server listening on addr after being asked for host: on a wildcard
// address (every interface), which no client can connect to, it names
// the loopback address of the family asked for (127.0.0.1 for 0.0.0.0,
// [::1] for ::).
func endpointURL(host string, addr *net.TCPAddr) string {
	ip := addr.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if h := net.ParseIP(host); h != nil && h.To4() == nil {
			ip = net.IPv6loopback
		}
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(addr.Port)) + "/mcp"
}

// serveHTTP serves srv on addr until ctx is cancelled, after printing its
// URL on stderr.
func serveHTTP(ctx context.Context, o *options, srv *mcp.Server, addr, token string, maxSessions int, pollAfter time.Duration, resource *mcp.ResourceServer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return userErrorf("--http %s: %v", addr, err)
	}
	opts := mcp.HTTPOptions{Token: token, MaxSessions: maxSessions, PollAfter: pollAfter, Resource: resource}
	requested, _, _ := net.SplitHostPort(addr)
	if h := ln.Addr().(*net.TCPAddr).IP; !h.IsLoopback() {
		host := requested
		if h.IsUnspecified() {
			// Every interface: any name may reach it (Host), but browser
			// Origins stay loopback ones (see mcp.HTTPOptions).
			host = "*"
		}
		opts.AllowedHosts = []string{host}
		if token == "" && resource == nil {
			fmt.Fprintf(o.stderr, "dsh: warning: serving on %s, beyond loopback, without --token-file\n", addr)
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.HTTPHandler(opts))
	if resource != nil {
		mountMetadata(mux, resource)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(o.stderr, "dsh: serving MCP at %s\n", endpointURL(requested, ln.Addr().(*net.TCPAddr)))
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return userErrorf("--http %s: %v", addr, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-done
	return nil
}
