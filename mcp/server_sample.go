//lint:file-ignore SA1019 sampling is deprecated in protocol 2026-07-28 (SEP-2577), and still what clients on older versions take.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
)

// errNoSamplingMRT is why a multi-round-trip client is not asked: its
// protocol has no server-to-client requests, and dsh does not put
// sampling in a result's inputRequests.
var errNoSamplingMRT = fmt.Errorf("%w (sampling is not forwarded on a multi-round-trip protocol version)", engine.ErrNoSampling)

// sample is the engine.SampleFunc of served calls: a sampling request
// made while the call runs (an imported server's sampling/createMessage)
// becomes a sampling/createMessage request to the calling client, which
// must have declared the sampling capability ([engine.ErrNoSampling]
// otherwise). It waits for the answer at most the server's
// ApprovalTimeout, as a question does; past it the request is cancelled
// and the error says so.
func sample(ctx context.Context, req json.RawMessage) (json.RawMessage, error) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	if st == nil || !canSample(st.session) {
		return nil, engine.ErrNoSampling
	}
	if st.events != nil {
		return nil, errNoSamplingMRT
	}
	var params sdk.CreateMessageParams
	if err := json.Unmarshal(req, &params); err != nil {
		return nil, fmt.Errorf("the sampling request: %w", err)
	}
	qctx, cancel := context.WithTimeoutCause(ctx, st.timeout, errAbandoned)
	defer cancel()
	res, err := st.session.CreateMessage(qctx, &params)
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil && errors.Is(context.Cause(qctx), errAbandoned):
		return nil, fmt.Errorf("the client did not answer the sampling request within %v", st.timeout)
	case err != nil:
		return nil, err
	}
	return json.Marshal(res)
}

// canSample reports whether the client declared the sampling capability.
func canSample(ss *sdk.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Sampling != nil
}
