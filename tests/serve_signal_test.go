//go:build unix

package tests

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeStopsQuietlyOnASignal runs the dsh binary's serve with a client
// connected on stdio, and stops it with a signal: it says nothing on
// standard error (no "server run cancelled" log line) and exits 130 for
// SIGINT, 143 for SIGTERM.
func TestServeStopsQuietlyOnASignal(t *testing.T) {
	bin := buildDsh(t)
	for _, tc := range []struct {
		name string
		sig  os.Signal
		code int
	}{
		{"SIGINT exits 130", syscall.SIGINT, 130},
		{"SIGTERM exits 143", syscall.SIGTERM, 143},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--scripts", t.TempDir(), "serve")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := client.Connect(context.Background(), &sdk.IOTransport{Reader: stdout, Writer: stdin}, nil)
			if err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("connecting: %v\nstderr: %s", err, stderr.String())
			}
			defer cs.Close()
			// The session is up once the server answers.
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code || stderr.String() != "" {
				t.Errorf("exit status %d, stderr %q; want %d and nothing", code, stderr.String(), tc.code)
			}
		})
	}
}
