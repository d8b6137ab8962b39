package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestProgressAndElicitationMessagesAreCut(t *testing.T) {
	long := strings.Repeat("m", engine.MaxProgressMessage+1)
	want := strings.Repeat("m", engine.MaxProgressMessage) + "… (truncated)"
	t.Run("a progress message over 16 KiB is cut, marked", func(t *testing.T) {
		var got string
		ctx := engine.WithProgress(context.Background(), func(p engine.Progress) { got = p.Message })
		engine.ReportProgress(ctx, engine.Progress{Progress: 1, Message: long})
		if got != want {
			t.Errorf("got %d bytes ending %q", len(got), got[max(0, len(got)-20):])
		}
	})
	t.Run("a progress message of 16 KiB is kept whole", func(t *testing.T) {
		var got string
		ctx := engine.WithProgress(context.Background(), func(p engine.Progress) { got = p.Message })
		engine.ReportProgress(ctx, engine.Progress{Progress: 1, Message: long[1:]})
		if got != long[1:] {
			t.Errorf("got %d bytes", len(got))
		}
	})
	t.Run("a question's message over 16 KiB is cut, marked", func(t *testing.T) {
		var got string
		ctx := engine.WithElicit(context.Background(), func(_ context.Context, e engine.Elicitation) (engine.ElicitResult, error) {
			got = e.Message
			return engine.ElicitResult{Action: "decline"}, nil
		})
		if _, err := engine.Elicit(ctx, engine.Elicitation{Message: long}); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("got %d bytes ending %q", len(got), got[max(0, len(got)-20):])
		}
	})
}
