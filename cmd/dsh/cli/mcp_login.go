package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/internal/display"
	"github.com/dsh-go/dsh/mcp"
)

// browserEnv names a program dsh runs with the authorization URL of an
// import's login as its one argument, instead of the system's browser
// opener. Setting it also lets any command start a login, terminal or not
// (a headless browser, a test).
const browserEnv = "DSH_OAUTH_BROWSER"

func newMCPCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:                        "mcp",
		Short:                      "Log in to the MCP servers dsh imports, and out",
		RunE:                       runGroup,
		SuggestionsMinimumDistance: 2,
	}
	cmd.AddCommand(uses(newMCPLoginCmd(o), kindPlugins), uses(newMCPLogoutCmd(o), kindPlugins))
	return cmd
}

func newMCPLoginCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "login NAME",
		Short: "Authorize dsh with an imported MCP server that asks for OAuth",
		Long: `Login runs the OAuth authorization flow of the HTTP server NAME, which
--mcp or --mcp-config names: it prints the authorization URL, opens it in a
browser where one exists (xdg-open or open; DSH_OAUTH_BROWSER names another
program), and receives the code on a loopback redirect
(http://127.0.0.1:PORT/callback, the config's oauth.callbackPort or a free
port). The tokens are stored in the user's config directory (dsh/oauth,
files only the user can read) and refreshed by themselves; later runs use
them. A server that does not ask for a login is an error.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := o.mcpServer(args[0])
			if err != nil {
				return err
			}
			err = mcp.Login(cmd.Context(), spec, o.oauthOptions())
			if errors.Is(err, mcp.ErrNoLogin) {
				return userErrorf("MCP server %s does not ask for a login", spec.Name)
			}
			if err != nil {
				return userErrorf("MCP server %s: login failed: %s", spec.Name, display.Line(err.Error(), display.MaxText))
			}
			_, err = fmt.Fprintf(o.stderr, "dsh: logged in to MCP server %s\n", spec.Name)
			return err
		},
	}
}

func newMCPLogoutCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the OAuth tokens of an imported MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			spec, err := o.mcpServer(args[0])
			if err != nil {
				return err
			}
			if err := mcp.Logout(spec, nil); err != nil {
				return userErrorf("MCP server %s: %v", spec.Name, pathErr(err))
			}
			return nil
		},
	}
}

// mcpServer is the HTTP server name of --mcp or --mcp-config.
func (o *options) mcpServer(name string) (mcp.ServerSpec, error) {
	specs, err := o.mcpSpecs()
	if err != nil {
		return mcp.ServerSpec{}, err
	}
	for _, s := range specs {
		if s.Name != name {
			continue
		}
		if s.URL == "" {
			return mcp.ServerSpec{}, userErrorf("MCP server %s is a command: a login applies to an HTTP server", display.Quote(name))
		}
		return s, nil
	}
	return mcp.ServerSpec{}, userErrorf("no MCP server %s: name it with --mcp or --mcp-config", display.Quote(name))
}

// oauthOptions are the authorization settings of the imports: a flow may
// start on a terminal (standard input and error) or with DSH_OAUTH_BROWSER
// set; the URL is printed on standard error and opened in a browser.
func (o *options) oauthOptions() mcp.OAuthOptions {
	browser := os.Getenv(browserEnv)
	interactive := browser != ""
	if in, ok := o.stdin.(*os.File); ok && isTerminal(in) {
		if errf, ok := o.stderr.(*os.File); ok && isTerminal(errf) {
			interactive = true
		}
	}
	return mcp.OAuthOptions{Interactive: interactive, Prompt: o.stderr, Open: openBrowser(browser)}
}

// openBrowser opens a URL with program, or the system's opener (xdg-open,
// open) when it is empty; nil when there is none.
func openBrowser(program string) func(ctx context.Context, url string) error {
	if program == "" {
		opener := "xdg-open"
		if runtime.GOOS == "darwin" {
			opener = "open"
		}
		p, err := exec.LookPath(opener)
		if err != nil {
			return nil
		}
		program = p
	}
	return func(_ context.Context, url string) error {
		// Not killed with the flow: a browser the opener started runs on.
		return exec.Command(program, url).Run()
	}
}
