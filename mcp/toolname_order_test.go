package mcp

import (
	"maps"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestCollisionOutcomeDoesNotDependOnListingOrder(t *testing.T) {
	listing := []string{"x.y", "x_y", "x y", "p.q", "p q", "ok"}
	served := func(order []string) map[string]string {
		tools := make([]*sdk.Tool, len(order))
		for i, n := range order {
			tools[i] = &sdk.Tool{Name: n}
		}
		names, diags := servedNames("t", "t__", tools)
		got := map[string]string{}
		for i, n := range order {
			got[n] = names[i]
		}
		if len(diags) != 4 {
			t.Errorf("order %q: %d diagnostics: %q", order, len(diags), diags)
		}
		return got
	}
	want := map[string]string{"x.y": "", "x_y": "t__x_y", "x y": "", "p.q": "", "p q": "", "ok": "t__ok"}
	reversed := slices.Clone(listing)
	slices.Reverse(reversed)
	for label, order := range map[string][]string{"in one order": listing, "in the reverse order": reversed} {
		t.Run("a listing "+label+" serves the name served unchanged and drops the mapped ones", func(t *testing.T) {
			if got := served(order); !maps.Equal(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
	t.Run("a name the server lists twice is served for neither", func(t *testing.T) {
		names, diags := servedNames("t", "t__", []*sdk.Tool{{Name: "a"}, {Name: "a"}})
		if names[0] != "" || names[1] != "" || len(diags) != 2 {
			t.Errorf("names %q, diagnostics %q", names, diags)
		}
	})
}
