package eventloop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/dop251/goja"
)

func TestAbandon(t *testing.T) {
	t.Run("Abandon returns at once and its channel closes when a work function that ignores its context returns", func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{})
		l := newLoop(t, Options{})
		_, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
			l.Go(vm, nil, func(context.Context) (any, error) {
				close(started)
				<-release // ignores its context
				return nil, nil
			}, nil)
			return goja.Undefined(), nil
		}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		start := time.Now()
		gone := l.Abandon()
		if d := time.Since(start); d > time.Second {
			t.Errorf("Abandon took %v", d)
		}
		if _, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) { return goja.Undefined(), nil }, nil, nil); !errors.Is(err, ErrClosed) {
			t.Errorf("a Run after Abandon: %v", err)
		}
		select {
		case <-gone:
			t.Fatal("the channel closed while a work function still ran")
		case <-time.After(20 * time.Millisecond):
		}
		close(release)
		select {
		case <-gone:
		case <-time.After(5 * time.Second):
			t.Fatal("the channel never closed")
		}
		if l.Abandon() != gone {
			t.Error("a second Abandon returned another channel")
		}
	})
	t.Run("Abandon called from a work function of the loop does not wait for itself", func(t *testing.T) {
		l := newLoop(t, Options{})
		done := make(chan (<-chan struct{}), 1)
		ran := make(chan struct{})
		_, err := l.Run(context.Background(), func(vm *goja.Runtime) (goja.Value, error) {
			l.Go(vm, nil, func(context.Context) (any, error) {
				<-ran // after the Run returned: Abandon could otherwise stop it first
				done <- l.Abandon()
				return nil, nil
			}, nil)
			return goja.Undefined(), nil
		}, nil, nil)
		close(ran)
		if err != nil {
			t.Fatal(err)
		}
		select {
		case gone := <-done:
			select {
			case <-gone:
			case <-time.After(5 * time.Second):
				t.Fatal("the loop never finished exiting")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Abandon from a work function blocked")
		}
	})
}
