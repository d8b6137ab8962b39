package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
	"github.com/dsh-go/dsh/scripting/capability"
)

// escaperServerArg makes the test binary an MCP server on stdio that first
// starts a daemon of its own (setsid sleep) that nothing of the server's
// group holds.
const escaperServerArg = "mcp-test-escaper"

// markerEnv is the sleep duration naming the escaper's daemon.
const markerEnv = "DSH_TEST_MARKER"

func init() {
	if len(os.Args) > 1 && os.Args[1] == escaperServerArg {
		daemon := exec.Command("setsid", "sleep", os.Getenv(markerEnv))
		if err := daemon.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		srv := impServer(nil, nil)
		sdk.AddTool(srv, &sdk.Tool{Name: "crash", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *sdk.CallToolRequest, any) (*sdk.CallToolResult, any, error) {
				os.Exit(3)
				return nil, nil, nil
			})
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// holding lists the live processes whose command line holds m.
func holding(t *testing.T, m string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmd, []byte(m)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitHolding waits (10 s at most) until n processes hold m, and returns
// them.
func waitHolding(t *testing.T, m string, n int) []int {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if pids := holding(t, m); len(pids) == n {
			return pids
		}
	}
	t.Fatalf("%d processes hold the marker, want %d", len(holding(t, m)), n)
	return nil
}

func TestImportStdioLeavesNothing(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid program")
	}
	// dsh is a subreaper: the server's daemon is reparented to it when the
	// server exits.
	if err := capability.BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0) })
	m := fmt.Sprintf("600.%d", time.Now().UnixNano()%1000000000)
	t.Cleanup(func() {
		for _, pid := range holding(t, m) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	svc := engine.New()
	spec := mcp.ServerSpec{Name: "esc", Command: os.Args[0], Args: []string{escaperServerArg}, Env: map[string]string{markerEnv: m}}
	client, _ := mcp.Connect(context.Background(), svc, []mcp.ServerSpec{spec}, mcp.Options{MinBackoff: 1})
	first := waitHolding(t, m, 1)

	t.Run("a reconnect ends what the previous server process started", func(t *testing.T) {
		swapped := impSwaps(t, svc)
		if r := impCall(svc, context.Background(), "esc__crash", nil); !r.IsError {
			t.Errorf("the crash call succeeded: %s", impJSON(t, r))
		}
		select {
		case <-swapped: // the new process's tools
		case <-time.After(30 * time.Second):
			t.Fatal("the server was not reconnected")
		}
		now := waitHolding(t, m, 1)
		if slices.Equal(now, first) {
			t.Errorf("the first server's daemon %v is still alive", first)
		}
	})
	t.Run("closing the client ends what the server started", func(t *testing.T) {
		client.Close()
		if pids := holding(t, m); len(pids) > 0 {
			t.Errorf("the server's daemon outlived the client: %v", pids)
		}
	})
}
