package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// approvalService returns the service --approve mode mounts, or nil for
// none. Every mode says on stderr what was asked and how it was answered:
// the prompt asks "Allow <tool> once? [y/N]", allow and deny report their
// answer. The prompt waits for an answer at most timeout (--approval-timeout).
func approvalService(mode string, answers *lineReader, timeout time.Duration, stderr io.Writer) engine.ApprovalService {
	switch mode {
	case approveAllow:
		return fixedApproval{outcome: engine.AllowedOnce, answer: "allowed once (--approve allow)", stderr: stderr}
	case approveDeny:
		return fixedApproval{outcome: engine.Rejected, answer: "rejected (--approve deny)", stderr: stderr}
	case approvePrompt:
		return &promptApproval{answers: answers, timeout: timeout, stderr: stderr}
	}
	return nil
}

// askLine is the line that says which tool asks and why.
func askLine(req engine.ApprovalRequest) string {
	reason := req.DisplayReason
	if reason == "" {
		reason = req.Reason
	}
	// The call id is the model's and the reason the policy's: each is
	// shown on the line escaped and bounded, so that neither can rewrite
	// the terminal the user answers on.
	callID := display.Line(req.CallID, display.MaxName)
	if reason == "" {
		return fmt.Sprintf("dsh: %s (%s) asks for approval", req.ToolName, callID)
	}
	return fmt.Sprintf("dsh: %s (%s) asks for approval: %s", req.ToolName, callID, display.Line(reason, display.MaxText))
}

// fixedApproval answers every ask the same way (--approve allow or deny).
type fixedApproval struct {
	outcome engine.ApprovalOutcome
	answer  string
	stderr  io.Writer
}

func (a fixedApproval) Approve(_ context.Context, req engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
	fmt.Fprintf(a.stderr, "%s\n  → %s\n", askLine(req), a.answer)
	return a.outcome, nil
}

// promptApproval asks on the terminal (--approve prompt): "y" or "yes"
// allows the call once, any other answer rejects it, the end of the input
// means nobody answers (unavailable), no answer within timeout denies the
// call as timed out, and an interrupt while it waits cancels the approval.
type promptApproval struct {
	mu      sync.Mutex // one question at a time
	answers *lineReader
	timeout time.Duration
	stderr  io.Writer
}

func (a *promptApproval) Approve(ctx context.Context, req engine.ApprovalRequest) (engine.ApprovalOutcome, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintf(a.stderr, "%s\nAllow %s once? [y/N] ", askLine(req), req.ToolName)
	wait, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	line, err := a.answers.readLine(wait)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(a.stderr)
		return engine.Cancelled, nil
	case wait.Err() != nil:
		fmt.Fprintf(a.stderr, "\n  → no answer within %s (--approval-timeout)\n", a.timeout)
		return "", &engine.ApprovalTimeoutError{Timeout: a.timeout}
	case err != nil:
		fmt.Fprintln(a.stderr)
		return engine.Unavailable, nil
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return engine.AllowedOnce, nil
	}
	return engine.Rejected, nil
}

// lineReader reads standard input a line at a time for the prompt, on a
// goroutine of its own so that a question can be abandoned when the call
// is cancelled. It starts on the first question; close stops it once its
// pending read returns.
type lineReader struct {
	in    io.Reader
	once  sync.Once
	lines chan lineOrErr
	done  chan struct{}
}

type lineOrErr struct {
	line string
	err  error
}

func newLineReader(in io.Reader) *lineReader {
	return &lineReader{in: in, lines: make(chan lineOrErr), done: make(chan struct{})}
}

// readLine returns the next line, the input's error (io.EOF at its end),
// or ctx's error.
func (r *lineReader) readLine(ctx context.Context) (string, error) {
	r.once.Do(func() { go r.pump() })
	select {
	case l := <-r.lines:
		return l.line, l.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (r *lineReader) pump() {
	br := bufio.NewReader(r.in)
	for {
		line, err := br.ReadString('\n')
		if err != nil && line != "" {
			err = nil // a last line without a newline still counts
		}
		select {
		case r.lines <- lineOrErr{line, err}:
		case <-r.done:
			return
		}
		if err != nil {
			// Later questions see the same end.
			for {
				select {
				case r.lines <- lineOrErr{"", err}:
				case <-r.done:
					return
				}
			}
		}
	}
}

// close stops the reader's goroutine (once a read it is blocked in returns).
func (r *lineReader) close() { close(r.done) }
