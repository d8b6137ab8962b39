package mcp

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"

	"github.com/dsh-go/dsh/dsl"
)

// configOAuth reads a server's "oauth" object, in the shape Claude Code
// writes it:
//
//	"oauth": {"clientId": "dsh-at-acme", "clientSecret": "${ACME_SECRET}",
//	          "scopes": "repo read:org", "callbackPort": 8765}
//
// "clientId" and "clientSecret" are a client registered beforehand (the
// secret is best given as ${VAR}: the strings are expanded as the entry's
// others are); "scopes" is one space-separated string (Claude Code) or an
// array of strings (replacing the scopes dsh would request);
// "callbackPort" the port of the loopback redirect
// http://127.0.0.1:PORT/callback, or "redirectUri" the whole redirect (a
// loopback http URL); "clientMetadataUrl" an https URL of a client ID
// metadata document naming dsh. The other keys are returned as unused
// ("oauth.KEY").
func configOAuth(x any, lookup func(string) (string, bool)) (*OAuthConfig, []string, error) {
	o, ok := x.(*dsl.Object)
	if !ok {
		return nil, nil, errors.New(`"oauth" must be an object`)
	}
	c := &OAuthConfig{}
	var unused []string
	str := func(k string, v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("oauth.%s must be a string", k)
		}
		return expandVars(s, "oauth."+k, lookup)
	}
	for k, v := range o.All() {
		var err error
		switch k {
		case "clientId":
			c.ClientID, err = str(k, v)
		case "clientSecret":
			c.ClientSecret, err = str(k, v)
		case "clientMetadataUrl":
			if c.ClientMetadataURL, err = str(k, v); err == nil {
				if u, perr := url.Parse(c.ClientMetadataURL); perr != nil || u.Scheme != "https" || u.Path == "" || u.Path == "/" {
					err = errors.New("oauth.clientMetadataUrl must be an https URL with a path")
				}
			}
		case "scopes":
			c.Scopes, err = configScopes(v, lookup)
		case "callbackPort":
			p, ok := v.(float64)
			if !ok || p != math.Trunc(p) || p < 1 || p > 65535 {
				err = errors.New("oauth.callbackPort must be a port number (1 to 65535)")
			}
			c.CallbackPort = int(p)
		case "redirectUri":
			if c.RedirectURI, err = str(k, v); err == nil {
				err = checkRedirect(c.RedirectURI)
			}
		default:
			unused = append(unused, "oauth."+k)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return nil, nil, errors.New("oauth.clientSecret needs oauth.clientId")
	}
	if c.CallbackPort != 0 && c.RedirectURI != "" {
		return nil, nil, errors.New("give oauth.callbackPort or oauth.redirectUri, not both")
	}
	return c, unused, nil
}

// configScopes reads oauth.scopes: a space-separated string or an array
// of strings.
func configScopes(v any, lookup func(string) (string, bool)) ([]string, error) {
	const bad = "oauth.scopes must be a string of space-separated scopes or an array of strings"
	var scopes []string
	switch v := v.(type) {
	case string:
		s, err := expandVars(v, "oauth.scopes", lookup)
		if err != nil {
			return nil, err
		}
		scopes = strings.Fields(s)
	case []any:
		for _, x := range v {
			s, ok := x.(string)
			if !ok || strings.TrimSpace(s) == "" || strings.ContainsAny(s, " \t\n") {
				return nil, errors.New(bad)
			}
			scopes = append(scopes, s)
		}
	default:
		return nil, errors.New(bad)
	}
	if len(scopes) == 0 {
		return nil, errors.New(bad)
	}
	return scopes, nil
}

// checkRedirect checks that a configured redirect is a loopback http URL
// dsh can listen on.
func checkRedirect(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("oauth.redirectUri must be http://127.0.0.1:PORT/PATH (or localhost, [::1])")
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return nil
	}
	return errors.New("oauth.redirectUri must be http://127.0.0.1:PORT/PATH (or localhost, [::1])")
}
