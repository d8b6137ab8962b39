package js

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js/internal/tsbuild"
)

// TestTheLoadDeadlineBoundsTheTransform checks that a plugin's load ends at
// its deadline while esbuild still runs (a transform no interrupt reaches),
// with the deadline's error, and that nothing of the plugin stays.
func TestTheLoadDeadlineBoundsTheTransform(t *testing.T) {
	release := make(chan struct{})
	exited := make(chan struct{})
	h := &Host{transform: func(rel string, code []byte) (*tsbuild.Output, error) {
		defer close(exited)
		<-release // a transform that outlives the deadline
		return tsbuild.Transform(rel, code)
	}}
	t.Cleanup(func() {
		close(release)
		<-exited // the goroutine left behind ends on its own
	})
	svc := engine.New()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{h}, LoadTimeout: 200 * time.Millisecond}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "slow.js"), `require("dsh").tools.register(require("dsh").defineTool({name: "slow", description: "", parameters: {},
  output: { schema: { type: "number" }, render: () => [] }, execute() { return 1 } }));`)
	start := time.Now()
	_, err := l.Load(context.Background(), root, "slow.js")
	took := time.Since(start)
	var d *scripting.Diagnostic
	if !errors.As(err, &d) {
		t.Fatalf("got %v, want a *scripting.Diagnostic", err)
	}
	if want := "slow.js: the transform did not finish within the load deadline (200ms)"; d.Error() != want {
		t.Errorf("got %q, want %q", d.Error(), want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not match context.DeadlineExceeded", err)
	}
	if took > 10*time.Second {
		t.Errorf("the load took %v, past its 200ms deadline by far", took)
	}
	if r := call(svc, "slow"); !r.IsError {
		t.Error("the plugin's tool is registered")
	}
}

// TestATransformThatEndsInTimeLoads checks the common case through the same
// path: the transform's result is used.
func TestATransformThatEndsInTimeLoads(t *testing.T) {
	calls := 0
	h := &Host{transform: func(rel string, code []byte) (*tsbuild.Output, error) {
		calls++
		return tsbuild.Transform(rel, code)
	}}
	svc := engine.New()
	l := &scripting.Loader{Service: svc, Hosts: []scripting.Host{h}, LoadTimeout: 30 * time.Second}
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "ok.ts"), `import { tools, defineTool } from "dsh";
tools.register(defineTool({name: "ok", description: "", parameters: {},
  output: { schema: { type: "number" }, render: () => [] }, execute() { return 1 } }));`)
	p, err := l.Load(context.Background(), root, "ok.ts")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Dispose(context.Background()) })
	if calls != 1 {
		t.Errorf("the transform ran %d times, want 1", calls)
	}
	if r := call(svc, "ok"); r.IsError {
		t.Errorf("the plugin's tool failed: %s", r.Error.Message)
	}
}

func call(svc *engine.Service, name string) *engine.Result {
	return svc.Call(context.Background(), engine.Input{CallID: "c", Name: name, Arguments: dsl.NewObject()})
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
