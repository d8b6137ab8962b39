package scripting_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting"
)

func TestTheMessageOfAnInterruptedTopLevel(t *testing.T) {
	passed := func() context.Context {
		ctx, cancel := scripting.WithLoadDeadline(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		<-ctx.Done()
		return ctx
	}
	cancelled := func() context.Context {
		ctx, cancel := scripting.WithLoadDeadline(context.Background(), time.Hour)
		cancel()
		return ctx
	}
	tests := []struct {
		name string
		ctx  func() context.Context
		want string
	}{
		{"a load deadline that passed gives its value", passed, "the top level did not finish within the load deadline (20ms)"},
		{"a load cancelled before its deadline says so", cancelled, "the top level was interrupted: context canceled"},
		{"a load without a cause keeps the plain text", context.Background, "the top level did not finish within the load deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scripting.LoadInterrupted(tt.ctx()); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	t.Run("the cause of a passed load deadline is a DeadlineExceeded", func(t *testing.T) {
		cause := context.Cause(passed())
		var le *scripting.LoadDeadlineError
		if !errors.As(cause, &le) || le.Timeout != 20*time.Millisecond || !errors.Is(cause, context.DeadlineExceeded) {
			t.Errorf("cause %#v", cause)
		}
	})
}
