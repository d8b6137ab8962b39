package cli

import (
	"errors"
	"log/slog"
	"net/http"
	"os"
	"slices"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/mcp"
)

// oauthFlags are serve's OAuth resource-server flags.
type oauthFlags struct {
	issuer, audience, toolScopes, introspect string
}

// The environment variables of the introspection client's credentials
// (never flags, which other users see in the process list).
const (
	introspectIDEnv     = "DSH_OAUTH_INTROSPECT_CLIENT_ID"
	introspectSecretEnv = "DSH_OAUTH_INTROSPECT_CLIENT_SECRET"
)

// register declares the flags on cmd.
func (f *oauthFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.issuer, "oauth-issuer", "", "with --http, accept only OAuth access tokens (JWTs) issued by the authorization server `URL`, checked against its JWKS")
	cmd.Flags().StringVar(&f.audience, "oauth-audience", "", "with --oauth-issuer, the resource `URL` clients reach the server at, which tokens must name in aud (such as https://mcp.example.com/mcp)")
	cmd.Flags().StringVar(&f.introspect, "oauth-introspect", "", "with --oauth-issuer, check every token at the introspection endpoint `URL` (RFC 7662) instead of as a JWT, as the client in $"+introspectIDEnv+" and $"+introspectSecretEnv)
	cmd.Flags().StringVar(&f.toolScopes, "oauth-tool-scopes", "", "with --oauth-issuer, the scopes a token needs for each tool: `FILE` of lines \"GLOB SCOPE...\", the first matching line deciding (a tool no line matches is hidden)")
}

// check reports a usage error in the flags' combination.
func (f *oauthFlags) check(httpAddr, tokenFile string) error {
	switch {
	case f.issuer == "" && f.audience != "":
		return errors.New("--oauth-audience needs --oauth-issuer")
	case f.issuer == "" && f.toolScopes != "":
		return errors.New("--oauth-tool-scopes needs --oauth-issuer")
	case f.issuer == "" && f.introspect != "":
		return errors.New("--oauth-introspect needs --oauth-issuer")
	case f.issuer == "":
		return nil
	case httpAddr == "":
		return errors.New("--oauth-issuer needs --http")
	case f.audience == "":
		return errors.New("--oauth-issuer needs --oauth-audience, the URL clients reach the server at")
	case tokenFile != "":
		return errors.New("--token-file and --oauth-issuer are exclusive: a request carries one bearer token, static or issued")
	}
	return nil
}

// resource returns the resource server and the tool scopes the flags name
// (nil, nil without --oauth-issuer).
func (f *oauthFlags) resource(logger *slog.Logger) (*mcp.ResourceServer, *mcp.ToolScopes, error) {
	if f.issuer == "" {
		return nil, nil, nil
	}
	var ts *mcp.ToolScopes
	if f.toolScopes != "" {
		file, err := os.Open(f.toolScopes)
		if err != nil {
			return nil, nil, userErrorf("--oauth-tool-scopes %s: %v", f.toolScopes, pathErr(err))
		}
		defer file.Close()
		if ts, err = mcp.ParseToolScopes(file); err != nil {
			return nil, nil, userErrorf("--oauth-tool-scopes %s: %v", f.toolScopes, err)
		}
	}
	ro := mcp.ResourceOptions{Issuer: f.issuer, Audience: f.audience, ToolScopes: ts, Logger: logger}
	if f.introspect != "" {
		ro.Introspection = &mcp.Introspection{URL: f.introspect, ClientID: os.Getenv(introspectIDEnv), ClientSecret: os.Getenv(introspectSecretEnv)}
		if ro.Introspection.ClientID == "" {
			return nil, nil, userErrorf("--oauth-introspect %s: set $%s (and $%s) to the resource server's client credentials", f.introspect, introspectIDEnv, introspectSecretEnv)
		}
	}
	rs, err := mcp.NewResourceServer(ro)
	if err != nil {
		return nil, nil, userErrorf("%v", err)
	}
	return rs, ts, nil
}

// mountMetadata serves rs's protected-resource metadata on mux, at the
// well-known path, suffixed with the audience's path and with /mcp.
func mountMetadata(mux *http.ServeMux, rs *mcp.ResourceServer) {
	paths := rs.MetadataPaths()
	if p := "/.well-known/oauth-protected-resource/mcp"; !slices.Contains(paths, p) {
		paths = append(paths, p)
	}
	for _, p := range paths {
		mux.Handle(p, rs.MetadataHandler())
	}
}
