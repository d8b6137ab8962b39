package ptc

import (
	"context"
	"errors"
	"testing"
)

func TestRuns(t *testing.T) {
	t.Run("Close stops the runs in flight and waits for them to leave, and refuses later ones", func(t *testing.T) {
		var runs Runs[*int]
		a, b := new(int), new(int)
		if !runs.Join(a) || !runs.Join(b) {
			t.Fatal("a run could not join an open runtime")
		}
		runs.Leave(b)
		var stopped []*int
		runs.Close(func(r *int) {
			stopped = append(stopped, r)
			runs.Leave(r) // the run ends once stopped
		})
		if len(stopped) != 1 || stopped[0] != a {
			t.Fatalf("stopped %v, want only the run still in flight", stopped)
		}
		if runs.Join(new(int)) {
			t.Fatal("a run joined after Close")
		}
		runs.Close(func(*int) { t.Error("a second Close stopped a run") })
	})
	t.Run("the cause of a context's end is the abort's reason", func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errors.New("user-cancel"))
		if got := CauseText(ctx); got != "user-cancel" {
			t.Errorf("got %q", got)
		}
		ctx2, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if got := CauseText(ctx2); got != "context canceled" {
			t.Errorf("got %q", got)
		}
	})
}
