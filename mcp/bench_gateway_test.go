//go:build unix

package mcp_test

// BenchmarkGatewayCall measures issue 26's performance target: "an
// imported call through dsh serve costs at most 1.3× a direct call to the
// same server with the same client". One SDK client calls echo of an SDK
// server directly; another calls it imported into dsh (mcp.Connect) and
// served (mcp.Server), so the call takes two hops: client → dsh's server →
// dsh's pipeline → dsh's import client → the server. The two alternate
// call by call, in one loop, so that the machine's noise falls on both;
// the benchmark reports each one's mean and their ratio
// (BENCHMARKS.md, "MCP gateway (issue 26)"). The figures through the built
// binary and with the TypeScript SDK's client against a real npm server
// are tests/mcp_gateway_bench_test.go's.

import (
	"context"
	"encoding/json"
	"testing"
	"time"

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
				var d, s time.Duration
				i := 0
				for b.Loop() {
					i++
					t0 := time.Now()
					if i%2 == 0 {
						sdkCall(b, direct, "echo", args)
						t1 := time.Now()
						sdkCall(b, served, "up__echo", args)
						d += t1.Sub(t0)
						s += time.Since(t1)
					} else {
						sdkCall(b, served, "up__echo", args)
						t1 := time.Now()
						sdkCall(b, direct, "echo", args)
						s += t1.Sub(t0)
						d += time.Since(t1)
					}
				}
				n := float64(b.N)
				b.ReportMetric(float64(d.Nanoseconds())/n, "direct-ns/call")
				b.ReportMetric(float64(s.Nanoseconds())/n, "served-ns/call")
				b.ReportMetric(float64(s)/float64(d), "ratio")
			})
		}
	}
}
