//go:build unix

package mcp_test

// BenchmarkGatewayCall measures issue 26's performance target: "an
// imported call through dsh serve costs at most 1.3× a direct call to the
// same server with the same client". One SDK client calls echo of an SDK
// server directly; another calls it imported into dsh (mcp.Connect) and
// served (mcp.Server), so the call takes two hops: client → dsh's server →
// dsh's pipeline → dsh's import client → the server. A third calls echo
// through relayServer, a gateway made of the SDK alone: the floor any
// gateway built on the SDK pays. The three take turns call by call, each
// going first in rotation, in one loop, so that the machine's noise falls
// on all; the benchmark reports each one's mean and the ratios to the
// direct call (BENCHMARKS.md, "MCP gateway (issue 26)"). The figures
// through the built binary and with the TypeScript SDK's client against a
// real npm server are tests/mcp_gateway_bench_test.go's.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

func BenchmarkGatewayCall(b *testing.B) {
	args := json.RawMessage(`{"text":"Ada"}`)
	for _, kind := range []string{stdio, memory} {
		for _, version := range []string{"", legacy} {
			name := kind
			if version != "" {
				name += "_" + version
			}
			b.Run(name, func(b *testing.B) {
				upstream := echoServer()
				svc := importEcho(b, upstream, kind)
				gw, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: engine.NewAgent("main", nil)})
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(gw.Close)
				direct := sdkClient(b, upstream, kind, version)
				served := sdkClient(b, gw.Server(), kind, version)
				relayed := sdkClient(b, relayServer(b, upstream, kind), kind, version)
				calls := [3]func(){
					func() { sdkCall(b, direct, "echo", args) },
					func() { sdkCall(b, served, "up__echo", args) },
					func() { sdkCall(b, relayed, "echo", args) },
				}
				var took [3]time.Duration
				i := 0
				for b.Loop() {
					// Each of the three goes first, second and third in turn.
					for k := range 3 {
						j := (i + k) % 3
						t0 := time.Now()
						calls[j]()
						took[j] += time.Since(t0)
					}
					i++
				}
				d, s, r := took[0], took[1], took[2]
				n := float64(b.N)
				b.ReportMetric(float64(d.Nanoseconds())/n, "direct-ns/call")
				b.ReportMetric(float64(s.Nanoseconds())/n, "served-ns/call")
				b.ReportMetric(float64(r.Nanoseconds())/n, "relay-ns/call")
				b.ReportMetric(float64(r)/float64(d), "relay-ratio")
				b.ReportMetric(float64(s)/float64(d), "ratio")
			})
		}
	}
}

// relayServer is the least gateway the SDK makes: an SDK server whose echo
// calls upstream's echo through an SDK client over a connection of kind,
// and returns its result unchanged. No validation, no pipeline, no log:
// the cost of a second hop alone.
func relayServer(tb testing.TB, upstream *sdk.Server, kind string) *sdk.Server {
	tb.Helper()
	up := sdkClient(tb, upstream, kind, "")
	srv := sdk.NewServer(&sdk.Implementation{Name: "relay", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return up.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: req.Params.Arguments})
	})
	return srv
}
