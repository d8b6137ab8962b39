package js_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/ptc"
	"github.com/dsh-go/dsh/scripting/js"
)

func TestAnExceptionReportsTheTopTenFramesOfItsStack(t *testing.T) {
	rt, err := js.NewProgramRuntime(js.ProgramOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	res, err := rt.Run(context.Background(), ptc.Request{Program: "function f() { return f() }\nf()"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Err == nil || res.Err.Kind != ptc.KindException {
		t.Fatalf("got %+v", res)
	}
	msg := res.Err.Message
	if !strings.HasPrefix(msg, "RangeError: Maximum call stack size exceeded\n") || strings.Count(msg, "\n\tat ") != 10 ||
		!strings.Contains(msg, "\tat f (program.ts:1:") {
		t.Errorf("got %q", msg)
	}
}
