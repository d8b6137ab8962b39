package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/engine"
)

func TestPromptApprovalTimesOutWhenNobodyAnswers(t *testing.T) {
	r, w := io.Pipe() // nobody types, and the input stays open
	defer w.Close()
	answers := newLineReader(r)
	defer answers.close()
	var stderr strings.Builder
	a := approvalService(approvePrompt, answers, 50*time.Millisecond, &stderr)
	got, err := a.Approve(context.Background(), engine.ApprovalRequest{ToolName: "t", CallID: "c1"})
	var timeout *engine.ApprovalTimeoutError
	if got != "" || !errors.As(err, &timeout) || timeout.Timeout != 50*time.Millisecond {
		t.Errorf("Approve = %q, %v; want the timeout error after 50ms", got, err)
	}
	if want := "Allow t once? [y/N] \n  → no answer within 50ms (--approval-timeout)\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to end with %q", stderr.String(), want)
	}
	w.CloseWithError(errors.New("done")) // lets the reader's goroutine end
}
