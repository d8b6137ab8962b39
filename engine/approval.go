package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

// ApprovalOutcome is an approval service's answer; the set is closed.
type ApprovalOutcome string

// The approval outcomes.
const (
	AllowedOnce ApprovalOutcome = "allowed-once"
	Rejected    ApprovalOutcome = "rejected"
	Cancelled   ApprovalOutcome = "cancelled"
	Unavailable ApprovalOutcome = "unavailable" // mounted, but nobody answers
)

// ApprovalRequest is what an ask decision puts to the approval service.
type ApprovalRequest struct {
	Agent         *Agent
	ToolName      string
	CallID        string
	Reason        string // the ask's reason; "" when it gave none
	DisplayReason string
}

// ApprovalTimeoutError is what an approval service returns when nobody
// answered its question within Timeout (the user walked away, the client
// never replies). It is not a failure of the service: the engine denies the
// call, saying how long it waited.
type ApprovalTimeoutError struct {
	Timeout time.Duration
}

func (e *ApprovalTimeoutError) Error() string {
	return fmt.Sprintf("approval timed out after %s", e.Timeout)
}

// ApprovalService answers ask decisions: a terminal prompt, an MCP
// elicitation. ctx is the call's own (caller's) context.
type ApprovalService interface {
	Approve(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)
}

// ApprovalFunc adapts a function to ApprovalService.
type ApprovalFunc func(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error)

// Approve calls f.
func (f ApprovalFunc) Approve(ctx context.Context, req ApprovalRequest) (ApprovalOutcome, error) {
	return f(ctx, req)
}

// approve maps an ask decision to allow or deny (§3.6); cancelled reports
// whether the approval itself was cancelled.
func (s *Service) approve(ctx context.Context, exec *Execution, ask PreDecision) (d PreDecision, cancelled bool, err error) {
	name := exec.name
	if s.approval == nil {
		if ask.Reason != "" {
			return Deny(ask.Reason), false, nil
		}
		return Deny(fmt.Sprintf("tool %q requires approval (not yet supported)", name)), false, nil
	}
	if exec.agent == nil {
		return Deny(fmt.Sprintf("tool %q requires approval, but the call has no agent to route it through", name)), false, nil
	}
	req := ApprovalRequest{Agent: exec.agent, ToolName: name, CallID: exec.callID, Reason: ask.Reason, DisplayReason: ask.DisplayReason}
	sp, start := s.tel.startApproval(ctx)
	outcome, err := callApproval(ctx, s.approval, req)
	var timeout *ApprovalTimeoutError
	switch {
	case errors.As(err, &timeout):
		endApproval(sp, start, "timeout", nil)
	case err != nil:
		endApproval(sp, start, "error", err)
	default:
		endApproval(sp, start, string(outcome), nil)
	}
	if timeout != nil {
		return Deny(fmt.Sprintf("approval for tool %q timed out after %s", name, timeout.Timeout)), false, nil
	}
	if err != nil {
		return PreDecision{}, false, err
	}
	switch outcome {
	case AllowedOnce:
		return Allow(), false, nil
	case Rejected:
		return Deny(fmt.Sprintf("the user rejected tool %q", name)), false, nil
	case Cancelled:
		return Deny(fmt.Sprintf("approval for tool %q was cancelled", name)), true, nil
	case Unavailable:
		return Deny(fmt.Sprintf("tool %q requires approval, but no approval channel is available", name)), false, nil
	}
	rendered, _ := dsl.Marshal(string(outcome))
	return PreDecision{}, false, fmt.Errorf("unreachable variant in ApprovalOutcome: %s", rendered)
}

func callApproval(ctx context.Context, a ApprovalService, req ApprovalRequest) (o ApprovalOutcome, err error) {
	defer recoverInto(&err)
	return a.Approve(ctx, req)
}
