package hostapi

import (
	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// CallerJSON is exec.caller as the hosts convert it: {subject, clientId,
// scopes}, scopes an array (empty, never null, for a token without
// scopes). A nil c is nil: the call has no verified caller, and exec.caller
// is absent.
func CallerJSON(c *engine.Caller) any {
	if c == nil {
		return nil
	}
	scopes := make([]any, len(c.Scopes))
	for k, s := range c.Scopes {
		scopes[k] = s
	}
	return dsl.NewObject(
		dsl.Member{Key: "subject", Value: c.Subject},
		dsl.Member{Key: "clientId", Value: c.ClientID},
		dsl.Member{Key: "scopes", Value: scopes},
	)
}
