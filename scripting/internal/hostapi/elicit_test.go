package hostapi_test

import (
	"context"
	"errors"
	"testing"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

func TestElicit(t *testing.T) {
	t.Run("the answer comes back", func(t *testing.T) {
		ctx := engine.WithElicit(context.Background(), func(context.Context, engine.Elicitation) (engine.ElicitResult, error) {
			return engine.ElicitResult{Action: "decline"}, nil
		})
		if r, err := hostapi.Elicit(ctx, engine.Elicitation{Message: "?"}); err != nil || r.Action != "decline" {
			t.Errorf("got %+v, %v", r, err)
		}
	})
	t.Run("without a function it is ErrNoElicitation", func(t *testing.T) {
		if _, err := hostapi.Elicit(context.Background(), engine.Elicitation{}); !errors.Is(err, engine.ErrNoElicitation) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("an end of ctx returns its cause though the function never returns", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		asked := make(chan struct{})
		ctx, cancel := context.WithCancelCause(engine.WithElicit(context.Background(), func(context.Context, engine.Elicitation) (engine.ElicitResult, error) {
			close(asked)
			<-release
			return engine.ElicitResult{}, nil
		}))
		cause := errors.New("the call was cancelled")
		go func() { <-asked; cancel(cause) }()
		if _, err := hostapi.Elicit(ctx, engine.Elicitation{}); err != cause {
			t.Errorf("err = %v, want the cause", err)
		}
	})
	t.Run("a panic is an error", func(t *testing.T) {
		ctx := engine.WithElicit(context.Background(), func(context.Context, engine.Elicitation) (engine.ElicitResult, error) {
			panic("boom")
		})
		if _, err := hostapi.Elicit(ctx, engine.Elicitation{}); err == nil || err.Error() != "asking the user panicked: boom" {
			t.Errorf("err = %v", err)
		}
	})
}
