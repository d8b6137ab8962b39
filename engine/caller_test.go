package engine_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestCallerTravelsOnTheContext(t *testing.T) {
	ctx := context.Background()
	if c := engine.CallerFrom(ctx); c != nil {
		t.Fatalf("a bare context carries caller %+v, want none", c)
	}
	want := &engine.Caller{Subject: "ada", ClientID: "cli", Scopes: []string{"tools:read"}}
	ctx = engine.WithCaller(ctx, want)
	if got := engine.CallerFrom(ctx); got != want {
		t.Fatalf("CallerFrom = %+v, want %+v", got, want)
	}
	if !want.HasScope("tools:read") || want.HasScope("tools:write") {
		t.Errorf("HasScope does not read the scopes %v", want.Scopes)
	}
	if engine.CallerFrom(engine.WithCaller(ctx, nil)) != nil {
		t.Error("WithCaller(nil) keeps the caller")
	}
	var none *engine.Caller
	if none.HasScope("x") {
		t.Error("a nil caller has a scope")
	}
}
