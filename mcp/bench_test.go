//go:build unix

package mcp_test

// Benchmarks of issue 17 §4 (BENCHMARKS.md, "MCP (issue 17 §4)"):
//
//   - BenchmarkServeCall: a trivial Go tool called through the engine as the
//     server's run calls it (a batch of one through Scope.Execute), and
//     through an SDK client, a transport (os.Pipe pairs as on stdio, or in
//     memory) and the Server; BenchmarkServeOverhead measures the stdio
//     overhead interleaved, call by call.
//   - BenchmarkHTTPLoad: 50 sessions × 200 calls over streamable HTTP on
//     loopback (TestHTTPLoad in load_test.go is its small, always-run form).
//   - BenchmarkImportCall and BenchmarkImportOverhead: a call of an imported
//     tool against a direct SDK call of the same server tool (its round trip)
//     and against a local Go tool.
//
// Besides wall time, most report the process's CPU time per call
// (getrusage, hence unix only), which the load of other processes on a
// shared machine does not inflate.

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// greetArgs are the arguments of every benchmark call of greet.
const greetArgs = `{"name":"Ada"}`

// directCall runs greet as the server's run does: the tool set resolved, then
// a batch of one through Scope.Execute.
func directCall(tb testing.TB, scope *engine.Scope, agent *engine.Agent, id string) {
	ctx := context.Background()
	set, err := scope.Resolve(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	res, err := scope.Execute(ctx, engine.Batch{
		Calls:   []engine.ToolCallBlock{{ID: id, Name: "greet", Arguments: greetArgs}},
		Agent:   agent,
		ToolSet: set,
	})
	if err != nil {
		tb.Fatal(err)
	}
	if r := res.Results[0].Result; r.IsError {
		tb.Fatal(r.Error.Message)
	}
}

// Transports, for the kinds of connection the benchmarks open.
const (
	stdio  = "stdio"  // newline-delimited JSON over two os.Pipe pairs
	memory = "memory" // sdk.NewInMemoryTransports (net.Pipe)
)

// transports returns the two ends of a connection of kind.
func transports(kind string) (client, server sdk.Transport, err error) {
	if kind == memory {
		ct, st := sdk.NewInMemoryTransports()
		return ct, st, nil
	}
	// Each end reads the pipe the other writes, as a parent and its child
	// server do over the child's stdin and stdout.
	up, toServer, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	fromServer, down, err := os.Pipe()
	if err != nil {
		up.Close()
		toServer.Close()
		return nil, nil, err
	}
	return &sdk.IOTransport{Reader: fromServer, Writer: toServer}, &sdk.IOTransport{Reader: up, Writer: down}, nil
}

// sdkClient connects an SDK client speaking version ("" for the SDK's
// latest) to srv over a connection of kind, closed when the test ends.
func sdkClient(tb testing.TB, srv *sdk.Server, kind, version string) *sdk.ClientSession {
	tb.Helper()
	ct, st, err := transports(kind)
	if err != nil {
		tb.Fatal(err)
	}
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// sdkCall calls name with args and fails on a protocol error or a tool
// failure.
func sdkCall(tb testing.TB, cs *sdk.ClientSession, name string, args json.RawMessage) {
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError {
		tb.Fatalf("%s failed: %+v", name, res.Content)
	}
}

// BenchmarkServeCall is one call of greet: through the engine as the
// server runs it ("engine"), and from an SDK client through the server over
// os.Pipe pairs ("stdio") or in memory ("memory"), on the SDK's latest
// protocol version (2026-07-28, where the server runs each call on a
// goroutine of its own so it can ask inside the result) and on 2025-11-25
// (the call runs on the request's goroutine).
func BenchmarkServeCall(b *testing.B) {
	b.Run("engine", func(b *testing.B) {
		_, svc, agent := greetServer(b)
		scope := svc.Scope(agent)
		i := 0
		loopCPU(b, func() {
			i++
			directCall(b, scope, agent, "mcp-"+strconv.Itoa(i))
		})
	})
	for _, kind := range []string{stdio, memory} {
		for _, version := range []string{"", legacy} {
			name := kind
			if version != "" {
				name += "_" + version
			}
			b.Run(name, func(b *testing.B) {
				srv, _, _ := greetServer(b)
				cs := sdkClient(b, srv.Server(), kind, version)
				args := json.RawMessage(greetArgs)
				loopCPU(b, func() { sdkCall(b, cs, "greet", args) })
			})
		}
	}
}

// BenchmarkServeOverhead alternates a call through the engine, one through
// the server over os.Pipe pairs, and one of a plain SDK server's trivial
// tool over os.Pipe pairs (the SDK's own floor), and reports each one's
// mean, the overhead of serving (overhead-ns/call: stdio minus engine) and
// what dsh's server adds beyond the SDK's floor and the engine
// (adapter-ns/call), so that the machine's noise falls on all of them.
func BenchmarkServeOverhead(b *testing.B) {
	srv, svc, agent := greetServer(b)
	scope := svc.Scope(agent)
	cs := sdkClient(b, srv.Server(), stdio, "")
	plain := sdkClient(b, echoServer(), stdio, "")
	args, echo := json.RawMessage(greetArgs), json.RawMessage(`{"text":"Ada"}`)
	var direct, served, floor time.Duration
	i := 0
	for b.Loop() {
		i++
		t0 := time.Now()
		directCall(b, scope, agent, "mcp-"+strconv.Itoa(i))
		t1 := time.Now()
		sdkCall(b, cs, "greet", args)
		t2 := time.Now()
		sdkCall(b, plain, "echo", echo)
		direct += t1.Sub(t0)
		served += t2.Sub(t1)
		floor += time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(direct.Nanoseconds())/n, "engine-ns/call")
	b.ReportMetric(float64(served.Nanoseconds())/n, "stdio-ns/call")
	b.ReportMetric(float64(floor.Nanoseconds())/n, "sdk-ns/call")
	b.ReportMetric(float64((served-direct).Nanoseconds())/n, "overhead-ns/call")
	b.ReportMetric(float64((served-direct-floor).Nanoseconds())/n, "adapter-ns/call")
}

// echoServer is an SDK server with one trivial tool, echo.
func echoServer() *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "up", Version: "v1"}, nil)
	srv.AddTool(&sdk.Tool{
		Name:        "echo",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Text string }
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil
	})
	return srv
}

// importEcho imports srv's tools as "up.*" into a new engine that also has
// greet, over connections of kind, and returns the engine.
func importEcho(tb testing.TB, srv *sdk.Server, kind string) *engine.Service {
	tb.Helper()
	svc, _ := greetEngine(tb)
	var mu sync.Mutex
	var sessions []*sdk.ServerSession
	dial := func(ctx context.Context, _ mcp.ServerSpec) (sdk.Transport, error) {
		ct, st, err := transports(kind)
		if err != nil {
			return nil, err
		}
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sessions = append(sessions, ss)
		mu.Unlock()
		return ct, nil
	}
	client, diags := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{{Name: "up", Command: "unused"}}, mcp.Options{Dial: dial})
	tb.Cleanup(func() {
		_ = client.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, ss := range sessions {
			_ = ss.Wait()
		}
	})
	if len(diags) > 0 {
		tb.Fatalf("importing: %v", diags)
	}
	return svc
}

// engineCall calls name through the engine's whole pipeline, as a
// model-direct call or a program's call of an imported tool is made.
func engineCall(tb testing.TB, svc *engine.Service, name string, args any) {
	r := svc.Call(context.Background(), engine.Input{CallID: "c1", Name: name, Arguments: args})
	if r.IsError {
		tb.Fatal(r.Error.Message)
	}
}

// BenchmarkImportCall is one call of a trivial tool: greet, a local Go tool
// ("local"); echo of an SDK server, called by an SDK client ("sdk_*", the
// round trip), and imported into dsh and called through its pipeline
// ("imported_*"), over os.Pipe pairs and in memory.
func BenchmarkImportCall(b *testing.B) {
	greet := dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})
	echo := dsl.NewObject(dsl.Member{Key: "text", Value: "Ada"})
	b.Run("local", func(b *testing.B) {
		svc, _ := greetEngine(b)
		loopCPU(b, func() { engineCall(b, svc, "greet", greet) })
	})
	for _, kind := range []string{stdio, memory} {
		b.Run("sdk_"+kind, func(b *testing.B) {
			cs := sdkClient(b, echoServer(), kind, "")
			args := json.RawMessage(`{"text":"Ada"}`)
			loopCPU(b, func() { sdkCall(b, cs, "echo", args) })
		})
		b.Run("imported_"+kind, func(b *testing.B) {
			svc := importEcho(b, echoServer(), kind)
			loopCPU(b, func() { engineCall(b, svc, "up__echo", echo) })
		})
	}
}

// BenchmarkImportOverhead alternates a local call, a direct SDK call of the
// server's echo and a call of the imported echo, and reports each one's
// mean and what the import adds to the round trip (import-ns/call).
func BenchmarkImportOverhead(b *testing.B) {
	greet := dsl.NewObject(dsl.Member{Key: "name", Value: "Ada"})
	echo := dsl.NewObject(dsl.Member{Key: "text", Value: "Ada"})
	args := json.RawMessage(`{"text":"Ada"}`)
	for _, kind := range []string{stdio, memory} {
		b.Run(kind, func(b *testing.B) {
			srv := echoServer()
			svc := importEcho(b, srv, kind)
			cs := sdkClient(b, srv, kind, "")
			var local, direct, imported time.Duration
			for b.Loop() {
				t0 := time.Now()
				engineCall(b, svc, "greet", greet)
				t1 := time.Now()
				sdkCall(b, cs, "echo", args)
				t2 := time.Now()
				engineCall(b, svc, "up__echo", echo)
				local += t1.Sub(t0)
				direct += t2.Sub(t1)
				imported += time.Since(t2)
			}
			n := float64(b.N)
			b.ReportMetric(float64(local.Nanoseconds())/n, "local-ns/call")
			b.ReportMetric(float64(direct.Nanoseconds())/n, "sdk-ns/call")
			b.ReportMetric(float64(imported.Nanoseconds())/n, "imported-ns/call")
			b.ReportMetric(float64((imported-direct).Nanoseconds())/n, "import-ns/call")
		})
	}
}

// BenchmarkHTTPLoad is a round of 50 sessions calling greet 200 times each
// at once over streamable HTTP on loopback; it reports the calls' p50 and
// p99 latency and the throughput over all rounds, and fails on any error.
func BenchmarkHTTPLoad(b *testing.B) {
	const sessions, calls = 50, 200
	rig := newLoadRig(b, sessions)
	var all []time.Duration
	var elapsed time.Duration
	cpu0 := processCPU(b)
	for b.Loop() {
		r := rig.round(calls)
		if len(r.errs) > 0 {
			b.Fatalf("%d calls failed, the first: %v", len(r.errs), r.errs[0])
		}
		all = append(all, r.latencies...)
		elapsed += r.elapsed
	}
	slices.Sort(all)
	b.ReportMetric(float64(percentile(all, 50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(all, 99).Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(len(all)), "cpu-µs/call")
}

// processCPU is the CPU time the process (client, server and collector)
// has used so far: on the shared VM, a figure other processes' load does
// not inflate as it does wall time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loopCPU runs call b.N times with b.Loop and reports the process's CPU
// time per call (cpu-ns/op) besides the wall time.
func loopCPU(b *testing.B, call func()) {
	b.ReportAllocs()
	cpu0 := processCPU(b)
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64((processCPU(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
