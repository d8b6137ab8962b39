package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
)

func TestApprovalTimeout(t *testing.T) {
	t.Run("an unanswered approval denies the call naming the timeout, and post-execute sees the denial", func(t *testing.T) {
		svc := engine.New(engine.WithApproval(engine.ApprovalFunc(func(context.Context, engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
			return "", fmt.Errorf("asking the client: %w", &engine.ApprovalTimeoutError{Timeout: 200 * time.Millisecond})
		})))
		body := cfBodyCounter(t, svc, "echo")
		post := cfPostCounter(svc)
		svc.Global().OnPreExecute(cfPre(func(*engine.Execution) (engine.PreDecision, error) { return engine.Ask("please"), nil }))
		cfExpect(t, cfCallAs(svc, engine.NewAgent("a", nil), "echo", cfObj()), cfFail(t, `approval for tool "echo" timed out after 200ms`))
		if body.get() != 0 || post.get() != 1 {
			t.Errorf("body %d (want 0), post %d (want 1: a denial is a post-result)", body.get(), post.get())
		}
	})

	t.Run("the timeout error says how long nobody answered", func(t *testing.T) {
		err := &engine.ApprovalTimeoutError{Timeout: 10 * time.Minute}
		if got, want := err.Error(), "approval timed out after 10m0s"; got != want {
			t.Errorf("Error() = %q, want %q", got, want)
		}
	})
}
