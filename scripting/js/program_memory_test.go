package js_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hosttest"
	"github.com/dsh-go/dsh/scripting/js"
)

func TestAProgramPastTheMemoryLimitFailsAsWorkerExitAndTheNextRunWorks(t *testing.T) {
	guard, msg := hosttest.MemoryGuard(t, 96*scripting.MiB)
	var limit int64
	if _, err := fmt.Sscanf(msg, "script exceeded the memory limit (%d MiB)", &limit); err != nil {
		t.Fatal(err)
	}
	rt, err := js.NewProgramRuntime(js.ProgramOptions{Memory: guard})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(context.Background(), ptc.Request{Program: `const kept = []; for (;;) kept.push(new Uint8Array(8 << 20))`})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("worker exceeded its memory limit (%d MiB)", limit)
	if res.Err == nil || res.Err.Kind != ptc.KindWorkerExit || res.Err.Message != want {
		t.Fatalf("got %+v, want worker-exit %q", res.Err, want)
	}
	res, err = rt.Run(context.Background(), ptc.Request{Program: `return 1 + 1`})
	if err != nil || res.Err != nil || res.Value != float64(2) {
		t.Fatalf("the next run: %+v, %v", res, err)
	}
}
