package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// greetEngine is an engine with greet, the engine benchmarks' trivial tool
// (one string parameter → {greeting}, rendered to one text block), written
// against the raw Definition, and the agent the calls run as.
func greetEngine(tb testing.TB) (*engine.Service, *engine.Agent) {
	tb.Helper()
	params, err := dsl.Params(dsl.Prop("name", dsl.String().Required())).Compile()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := dsl.ObjectOf(false, dsl.Prop("greeting", dsl.String().Required())).Compile()
	if err != nil {
		tb.Fatal(err)
	}
	svc := engine.New()
	_, err = svc.Global().Register(&engine.Definition{
		Name:        "greet",
		Description: "Greet someone by name.",
		Parameters:  params,
		Output: engine.Output{
			Schema: out,
			Render: func(_, v any) ([]engine.Block, error) {
				g, _ := v.(*dsl.Object).Get("greeting")
				return []engine.Block{engine.Text(g.(string))}, nil
			},
		},
		Execute: func(_ context.Context, args any, _ *engine.Run) (any, error) {
			n, _ := args.(*dsl.Object).Get("name")
			return dsl.NewObject(dsl.Member{Key: "greeting", Value: "Hello, " + n.(string) + "!"}), nil
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return svc, engine.NewAgent("main", nil)
}

// greetServer serves greetEngine's tools over MCP as its agent.
func greetServer(tb testing.TB) (*mcp.Server, *engine.Service, *engine.Agent) {
	tb.Helper()
	svc, agent := greetEngine(tb)
	srv, err := mcp.NewServer(context.Background(), svc, mcp.ServerOptions{Agent: agent})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(srv.Close)
	return srv, svc, agent
}

// loadEnv, when set, makes TestHTTPLoad run the load (50 sessions ×
// 200 calls) and log its figures.
const loadEnv = "DSH_MCP_LOAD"

// loadRig is greet served over streamable HTTP on a loopback listener, with
// sessions connected to it, each with an HTTP client of its own as separate
// clients have (one shared http.Transport makes its idle-pool lock the
// bottleneck).
type loadRig struct {
	sessions   []*sdk.ClientSession
	transports []*http.Transport
}

// newLoadRig serves greet and connects n sessions; all is closed when the
// test ends.
func newLoadRig(tb testing.TB, n int) *loadRig {
	tb.Helper()
	srv, _, _ := greetServer(tb)
	hs := httptest.NewServer(srv.HTTPHandler(mcp.HTTPOptions{}))
	tb.Cleanup(hs.Close)
	rig := &loadRig{}
	tb.Cleanup(func() {
		for _, cs := range rig.sessions {
			_ = cs.Close()
		}
		for _, tr := range rig.transports {
			tr.CloseIdleConnections()
		}
	})
	for range n {
		tr := &http.Transport{}
		rig.transports = append(rig.transports, tr)
		client := sdk.NewClient(&sdk.Implementation{Name: "load", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{
			Endpoint:   hs.URL,
			HTTPClient: &http.Client{Transport: tr},
			MaxRetries: -1,
		}, nil)
		if err != nil {
			tb.Fatal(err)
		}
		rig.sessions = append(rig.sessions, cs)
	}
	return rig
}

// loadRound is what one round of calls measured.
type loadRound struct {
	latencies []time.Duration // one per call that succeeded
	errs      []error         // one per call that failed or answered wrong
	elapsed   time.Duration   // from the first call's start to the last's end
}

// round makes every session call greet calls times, the sessions at once,
// each call with a name of its own, checked in the answer.
func (r *loadRig) round(calls int) loadRound {
	var (
		mu    sync.Mutex
		out   loadRound
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for s, cs := range r.sessions {
		wg.Go(func() {
			lat := make([]time.Duration, 0, calls)
			var errs []error
			<-start
			for c := range calls {
				name := fmt.Sprintf("s%dc%d", s, c)
				t0 := time.Now()
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{
					Name:      "greet",
					Arguments: json.RawMessage(`{"name":"` + name + `"}`),
				})
				d := time.Since(t0)
				switch want := "Hello, " + name + "!"; {
				case err != nil:
					errs = append(errs, fmt.Errorf("session %d call %d: %w", s, c, err))
				case res.IsError || text(res) != want:
					errs = append(errs, fmt.Errorf("session %d call %d: isError=%v %q, want %q", s, c, res.IsError, text(res), want))
				default:
					lat = append(lat, d)
				}
			}
			mu.Lock()
			out.latencies = append(out.latencies, lat...)
			out.errs = append(out.errs, errs...)
			mu.Unlock()
		})
	}
	t0 := time.Now()
	close(start)
	wg.Wait()
	out.elapsed = time.Since(t0)
	return out
}

// percentile is the p-th percentile (0 < p ≤ 100) of sorted, by the
// nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*p/100+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// TestHTTPLoad runs sessions calling at once over streamable HTTP: 5 × 20
// calls always, the 50 × 200 with DSH_MCP_LOAD set (its figures
// are logged, not asserted: go test -v -run TestHTTPLoad ./mcp/).
func TestHTTPLoad(t *testing.T) {
	sessions, calls := 5, 20
	if os.Getenv(loadEnv) != "" {
		sessions, calls = 50, 200
	}
	t.Run(fmt.Sprintf("%d sessions of %d calls each get every answer right", sessions, calls), func(t *testing.T) {
		rig := newLoadRig(t, sessions)
		r := rig.round(calls)
		for i, err := range r.errs {
			if i == 5 {
				t.Errorf("… and %d more", len(r.errs)-5)
				break
			}
			t.Error(err)
		}
		if got, want := len(r.latencies)+len(r.errs), sessions*calls; got != want {
			t.Errorf("%d calls made, want %d", got, want)
		}
		slices.Sort(r.latencies)
		t.Logf("%d calls in %v: %.0f calls/s, p50 %v, p99 %v, max %v", len(r.latencies), r.elapsed,
			float64(len(r.latencies))/r.elapsed.Seconds(), percentile(r.latencies, 50),
			percentile(r.latencies, 99), percentile(r.latencies, 100))
	})
}
