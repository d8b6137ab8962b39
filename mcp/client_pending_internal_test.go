package mcp

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRequestsPastTheCapAreRefusedWhileHandlersWait(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{})
	handler := pendingMiddleware(2)(func(ctx context.Context, method string, _ sdk.Request) (sdk.Result, error) {
		if method == "elicitation/create" {
			entered <- struct{}{}
			<-release
		}
		return nil, nil
	})
	done := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := handler(context.Background(), "elicitation/create", nil)
			done <- err
		}()
		<-entered
	}
	_, err := handler(context.Background(), "elicitation/create", nil)
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeTooManyRequests || werr.Message != "too many requests in flight from this server: at most 2 at once" {
		t.Fatalf("the third request got %v, want the cap's error", err)
	}
	if _, err := handler(context.Background(), "notifications/progress", nil); err != nil {
		t.Fatalf("a notification got %v, want it handled", err)
	}
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := handler(context.Background(), "roots/list", nil); err != nil {
		t.Fatalf("a request once the others ended got %v, want it handled", err)
	}
}
