package cli

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestServeReportsACatalogueConflictAndGoesOn serves two imports that list
// the same resource URI and resource template: dsh serve prints each
// conflict on standard error as a diagnostic of the server that lost it
// (the second in the configuration), re-exports the first server's, and
// goes on serving both servers' other entries.
func TestServeReportsACatalogueConflictAndGoesOn(t *testing.T) {
	server := "='" + os.Args[0] + "' " + mcpCatalogServerArg
	changed := make(chan struct{}, 16)
	cs, stderr, wait := serveInProcess(t, []string{"--scripts", t.TempDir(), "--memory-limit", "0",
		"--mcp", "one" + server, "--mcp", "two" + server, "serve"}, &sdk.ClientOptions{
		PromptListChangedHandler: func(context.Context, *sdk.PromptListChangedRequest) {
			select {
			case changed <- struct{}{}:
			default:
			}
		},
	})
	ctx := context.Background()
	prompts := func(t *testing.T) []string {
		t.Helper()
		var out []string
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p.Name)
		}
		return out
	}
	diags := []string{
		`mcp:two: resource "memo://notes": not re-exported: the server "one", first in the configuration, lists it too`,
		`mcp:two: resource template "memo://items/{id}": not re-exported: the server "one", first in the configuration, lists it too`,
	}

	t.Run("both imports' prompts arrive", func(t *testing.T) {
		want := []string{"one__greet", "two__greet"}
		for !slices.Equal(prompts(t), want) {
			select {
			case <-changed:
			case <-time.After(30 * time.Second):
				t.Fatalf("no prompts/list_changed brought %q; prompts %q, stderr %q", want, prompts(t), stderr)
			}
		}
	})
	t.Run("each conflict is a diagnostic on standard error", func(t *testing.T) {
		deadline := time.Now().Add(30 * time.Second)
		for {
			missing := slices.DeleteFunc(slices.Clone(diags), func(d string) bool { return strings.Contains(stderr.String(), d) })
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("standard error lacks %q:\n%s", missing, stderr)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	t.Run("the resource URI is re-exported once, from the first server", func(t *testing.T) {
		var got []string
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, r.Name+" "+r.URI)
		}
		if want := []string{"one__notes_txt memo://notes"}; !slices.Equal(got, want) {
			t.Errorf("resources %q, want %q", got, want)
		}
	})
	t.Run("the server goes on serving: a read and the second server's prompt", func(t *testing.T) {
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "memo://notes"})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Contents) != 1 || r.Contents[0].Text != "the notes" {
			t.Errorf("reading memo://notes: %+v, want the notes", r.Contents)
		}
		p, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "two__greet", Arguments: map[string]string{"who": "Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Messages) != 1 || p.Messages[0].Content.(*sdk.TextContent).Text != "Say hello to Ada." {
			t.Errorf("messages %+v, want Say hello to Ada.", p.Messages)
		}
	})

	if c := wait(); c != exitOK {
		t.Errorf("exit status %d, want 0; stderr:\n%s", c, stderr)
	}
}
