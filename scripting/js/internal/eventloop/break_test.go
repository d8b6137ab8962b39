package eventloop

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBreakStopsTheScriptAndEveryRunGetsItsCause(t *testing.T) {
	l := newLoop(t, Options{})
	cause := errors.New("over the memory limit")
	spinning := make(chan error, 1)
	go func() {
		_, err := runJS(l, context.Background(), "for (;;) {}")
		spinning <- err
	}()
	time.Sleep(20 * time.Millisecond) // let the spin start
	pending := make(chan error, 1)
	go func() {
		_, err := runJS(l, context.Background(), "1")
		pending <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it queue behind the spin
	l.Break(cause)
	l.Break(errors.New("a second cause is ignored"))
	for _, tc := range []struct {
		name string
		errc chan error
	}{
		{"the running script's Run", spinning},
		{"a Run queued behind it", pending},
	} {
		t.Run(tc.name+" returns an error matching ErrBroken and the cause", func(t *testing.T) {
			select {
			case err := <-tc.errc:
				if !errors.Is(err, ErrBroken) || !errors.Is(err, cause) {
					t.Fatalf("err = %v, want it to match ErrBroken and %v", err, cause)
				}
				if want := "eventloop: broken: over the memory limit"; err.Error() != want {
					t.Errorf("message %q, want %q", err, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the Run did not return after Break")
			}
		})
	}
	t.Run("the loop is broken and later Runs fail with the cause", func(t *testing.T) {
		select {
		case <-l.Interrupted():
		default:
			t.Error("Interrupted is not closed")
		}
		if !l.Broken() {
			t.Error("Broken() = false")
		}
		if _, err := runJS(l, context.Background(), "1"); !errors.Is(err, cause) {
			t.Errorf("a later Run: %v, want the cause", err)
		}
	})
}
