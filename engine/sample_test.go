package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestSampleGoesToTheCallersFunction(t *testing.T) {
	t.Run("without one nobody can be asked", func(t *testing.T) {
		if _, err := engine.Sample(context.Background(), json.RawMessage(`{}`)); !errors.Is(err, engine.ErrNoSampling) {
			t.Errorf("error %v, want ErrNoSampling", err)
		}
	})
	t.Run("with one the request and the answer pass unchanged", func(t *testing.T) {
		ctx := engine.WithSample(context.Background(), func(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
			return append(json.RawMessage(`{"asked":`), append(req, '}')...), nil
		})
		got, err := engine.Sample(ctx, json.RawMessage(`{"maxTokens":3}`))
		if err != nil || string(got) != `{"asked":{"maxTokens":3}}` {
			t.Errorf("Sample = %s, %v", got, err)
		}
	})
	t.Run("a nil function removes it", func(t *testing.T) {
		ctx := engine.WithSample(engine.WithSample(context.Background(), func(context.Context, json.RawMessage) (json.RawMessage, error) {
			return nil, nil
		}), nil)
		if _, err := engine.Sample(ctx, nil); !errors.Is(err, engine.ErrNoSampling) {
			t.Errorf("error %v, want ErrNoSampling", err)
		}
	})
}
