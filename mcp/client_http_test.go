package mcp_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/mcp"
)

// TestImportOverHTTP imports, over streamable HTTP, the tools a dsh
// server serves behind a bearer token.
func TestImportOverHTTP(t *testing.T) {
	f := newFixture(t)
	hs := httptest.NewServer(f.srv.HTTPHandler(mcp.HTTPOptions{Token: "s3cret"}))
	defer hs.Close()
	connect := func(t *testing.T, headers map[string]string) (*engine.Service, []mcp.Diagnostic) {
		t.Helper()
		svc := engine.New()
		client, diags := mcp.Connect(context.Background(), svc,
			[]mcp.ServerSpec{{Name: "up", URL: hs.URL, Headers: headers}}, mcp.Options{})
		t.Cleanup(func() { _ = client.Close() })
		return svc, diags
	}
	t.Run("the configured headers go with every request, so the token is accepted", func(t *testing.T) {
		svc, diags := connect(t, map[string]string{"Authorization": "Bearer s3cret"})
		if len(diags) != 0 {
			t.Fatalf("diagnostics %v", diags)
		}
		if names := impToolNames(svc); !slices.Contains(names, "up__word_count") {
			t.Fatalf("tools %v, want up.word_count", names)
		}
		r := impCall(svc, context.Background(), "up__word_count", impObj(t, `{"text":"a b c"}`))
		if text, _ := dsl.Marshal(r.Value); r.IsError || string(text) != `{"words":3}` {
			t.Errorf("result %s", impJSON(t, r))
		}
	})
	t.Run("without them the server refuses, and that is a diagnostic", func(t *testing.T) {
		svc, diags := connect(t, nil)
		if len(diags) != 1 || diags[0].Server != "up" || !strings.HasPrefix(diags[0].Reason, "cannot connect: ") || !strings.Contains(diags[0].Reason, "Unauthorized") {
			t.Errorf("diagnostics %#v, want one that says the server refused", diags)
		}
		if names := impToolNames(svc); len(names) != 0 {
			t.Errorf("tools %v, want none", names)
		}
	})
}
