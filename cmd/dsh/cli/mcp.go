package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/scripting"
)

// mcpFlagHelp and mcpConfigFlagHelp document --mcp and --mcp-config.
const (
	mcpFlagHelp = "import an MCP server's tools as NAME.tool: `NAME=COMMAND ARGS...` (stdio, one quoted\n" +
		"argument) or NAME=URL (streamable HTTP); repeatable"
	mcpConfigFlagHelp = "import the MCP servers of `FILE` ({\"mcpServers\": ...}, as Claude Desktop and Claude Code write it)"
)

// checkMCP validates the --mcp values: a malformed one is a usage error.
func (o *options) checkMCP() error {
	for _, v := range o.mcp {
		if _, err := mcp.ParseSpec(v); err != nil {
			return fmt.Errorf("--mcp %s: %v", display.Line(v, display.MaxText), err)
		}
	}
	return nil
}

// mcpSpecs are the servers to import: those of --mcp-config, then --mcp's.
// A file that cannot be read or parsed, or a name given twice, is a
// problem the user must fix; a key of the file dsh does not use is a
// warning on standard error.
func (o *options) mcpSpecs() ([]mcp.ServerSpec, error) {
	var specs []mcp.ServerSpec
	if o.mcpConfig != "" {
		var warnings []string
		var err error
		if specs, warnings, err = mcp.LoadConfig(o.mcpConfig); err != nil {
			return nil, userErrorf("--mcp-config %s: %v", display.Line(o.mcpConfig, display.MaxText), pathErr(err))
		}
		for _, w := range warnings {
			fmt.Fprintf(o.stderr, "dsh: warning: --mcp-config %s: %s\n", display.Line(o.mcpConfig, display.MaxText), w)
		}
	}
	for _, v := range o.mcp {
		spec, err := mcp.ParseSpec(v)
		if err != nil { // checked by options.check already
			return nil, fmt.Errorf("--mcp %s: %v", display.Line(v, display.MaxText), err)
		}
		specs = append(specs, spec)
	}
	if err := mcp.CheckNames(specs); err != nil {
		return nil, userErrorf("%v", err)
	}
	return specs, nil
}

// connectMCP imports the MCP servers of the flags into the engine. A tool
// outside the schema subset, or a server not reached (it is retried in the
// background), is a diagnostic named "mcp:NAME", printed with the plugins'.
// With --verbose the servers' standard error is passed through.
func (s *session) connectMCP(ctx context.Context) error {
	specs, err := s.opts.mcpSpecs()
	if err != nil || len(specs) == 0 {
		return err
	}
	var stderr io.Writer
	if s.opts.verbose {
		stderr = s.opts.stderr
	}
	client, diags := mcp.Connect(ctx, s.svc, specs, mcp.Options{Logger: s.logger, Stderr: stderr, Roots: s.opts.mcpRoots(), OAuth: s.opts.oauthOptions(), TracerProvider: s.opts.telemetry.tracerProvider(), MeterProvider: s.opts.telemetry.meterProvider()})
	s.mcp = client
	unreached := map[string]bool{}
	for _, d := range diags {
		s.diags = append(s.diags, mcpDiagnostic(d))
		if !d.IsTool() {
			unreached[d.Server] = true
		}
	}
	for _, spec := range specs {
		if !unreached[spec.Name] {
			s.imported = append(s.imported, importedServer{name: spec.Name, tools: client.Tools(spec.Name)})
		}
	}
	return nil
}

// startMCP imports the MCP servers of the flags without waiting for them,
// for serve: the server answers its clients at once, and each import
// registers its tools when it connects, which the served tool list follows
// (notifications/tools/list_changed). The diagnostics of each server's
// first attempt are printed on standard error as it ends, as connectMCP's
// are by printDiagnostics; later ones are logged, as under connectMCP.
// s.imported stays empty: what a server registers is known only later.
func (s *session) startMCP() error {
	specs, err := s.opts.mcpSpecs()
	if err != nil || len(specs) == 0 {
		return err
	}
	var stderr io.Writer
	if s.opts.verbose {
		stderr = s.opts.stderr
	}
	w := s.opts.stderr
	s.mcp = mcp.Start(s.svc, specs, mcp.Options{Logger: s.logger, Stderr: stderr, Roots: s.opts.mcpRoots(), OAuth: s.opts.oauthOptions(), TracerProvider: s.opts.telemetry.tracerProvider(), MeterProvider: s.opts.telemetry.meterProvider()}, func(_ string, diags []mcp.Diagnostic) {
		var b strings.Builder
		for _, d := range diags {
			b.WriteString(mcpDiagnostic(d).String() + "\n")
		}
		if b.Len() > 0 {
			_, _ = io.WriteString(w, b.String()) // one write: the lines stay together
		}
	})
	return nil
}

// mcpRoots are the roots the imported servers are offered (roots/list):
// the --workspace directory. Without the flag there are none (an empty
// list), so that a server given its directories as arguments, such as
// the npm filesystem server, which replaces them with the client's roots,
// keeps them.
func (o *options) mcpRoots() []string {
	if o.workspace == "" {
		return nil
	}
	return []string{o.workspace}
}

// mcpDiagnostic is d as a session diagnostic, named "mcp:SERVER".
func mcpDiagnostic(d mcp.Diagnostic) diagnostic {
	path := "mcp:" + d.Server
	return diagnostic{path: path, d: &scripting.Diagnostic{File: path, Message: d.Error(), Err: d}}
}

// importedServer is an MCP server the session reached, with the tools its
// first listing registered (SERVER.tool), in presentation order.
type importedServer struct {
	name  string
	tools []string
}

// closeMCP disconnects the imported servers.
func (s *session) closeMCP() {
	if s.mcp != nil {
		_ = s.mcp.Close()
	}
}
