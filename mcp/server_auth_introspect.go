package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// maxIntrospectionBytes caps an introspection response.
const maxIntrospectionBytes = 1 << 20

// Introspection configures token introspection (RFC 7662): the resource
// server asks the authorization server about every token instead of
// verifying JWTs itself, which also tells it of revoked tokens and
// accepts opaque ones.
type Introspection struct {
	// URL is the introspection endpoint (https, or http on loopback).
	URL string
	// ClientID and ClientSecret authenticate the resource server to it
	// (HTTP Basic, RFC 7662 §2.1).
	ClientID, ClientSecret string
}

// introspection is the response's members dsh reads.
type introspection struct {
	Active   bool            `json:"active"`
	Scope    string          `json:"scope"`
	ClientID string          `json:"client_id"`
	Sub      string          `json:"sub"`
	Exp      int64           `json:"exp"`
	Nbf      int64           `json:"nbf"`
	Iss      string          `json:"iss"`
	Aud      json.RawMessage `json:"aud"`
}

// introspect asks the endpoint about token: it must be active, of the
// issuer and for the audience where the answer names them, unexpired
// (within TokenSkew), and have a subject.
func (rs *ResourceServer) introspect(ctx context.Context, token string) (*auth.TokenInfo, error) {
	in := rs.opts.Introspection
	ctx, cancel := context.WithTimeout(ctx, issuerTimeout)
	defer cancel()
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, in.URL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &tokenError{reason: "the introspection endpoint: " + err.Error(), issuer: true}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.ClientID), url.QueryEscape(in.ClientSecret))
	resp, err := rs.opts.Client.Do(req)
	if err != nil {
		// The error names the URL, never the form (the token).
		return nil, &tokenError{reason: "the introspection endpoint: " + err.Error(), issuer: true}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &tokenError{reason: fmt.Sprintf("the introspection endpoint %s: %s", in.URL, resp.Status), issuer: true}
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxIntrospectionBytes+1))
	if err != nil || len(b) > maxIntrospectionBytes {
		return nil, &tokenError{reason: fmt.Sprintf("the introspection endpoint %s: an unreadable or oversized answer", in.URL), issuer: true}
	}
	var r introspection
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, &tokenError{reason: fmt.Sprintf("the introspection endpoint %s: an answer that is not its JSON", in.URL), issuer: true}
	}
	now := rs.opts.Now()
	switch {
	case !r.Active:
		return nil, &tokenError{reason: "the token is not active (introspection)"}
	case r.Iss != "" && r.Iss != rs.opts.Issuer:
		return nil, &tokenError{reason: "the token is not from the issuer (iss)"}
	case len(r.Aud) > 0 && !audienceHas(r.Aud, rs.opts.Audience):
		return nil, &tokenError{reason: "the token is not for this resource (aud)"}
	case r.Exp != 0 && now.After(time.Unix(r.Exp, 0).Add(TokenSkew)):
		return nil, &tokenError{reason: "the token has expired"}
	case r.Nbf != 0 && now.Add(TokenSkew).Before(time.Unix(r.Nbf, 0)):
		return nil, &tokenError{reason: "the token is not valid yet"}
	case r.Sub == "":
		return nil, &tokenError{reason: "the token has no subject"}
	}
	ti := &auth.TokenInfo{
		Scopes: strings.Fields(r.Scope),
		UserID: rs.opts.Issuer + " " + r.Sub,
		Extra:  map[string]any{"sub": r.Sub, "client_id": r.ClientID},
	}
	if r.Exp != 0 {
		ti.Expiration = time.Unix(r.Exp, 0)
	}
	return ti, nil
}

// audienceHas reports whether aud, a string or a list of strings, names
// want.
func audienceHas(aud json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(aud, &many) == nil && slices.Contains(many, want)
}
