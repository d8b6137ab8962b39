package engine_test

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestAToolFilterHidesToolsFromCalls(t *testing.T) {
	svc := greetService(t)
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	for _, tt := range []struct {
		name    string
		ctx     context.Context
		unknown bool
	}{
		{"a context without a filter reaches every tool", context.Background(), false},
		{"a filter that admits the tool lets the call run", engine.WithToolFilter(context.Background(), all), false},
		{"a filter that hides the tool makes it unknown", engine.WithToolFilter(context.Background(), none), true},
		{"an inner filter cannot widen an outer one", engine.WithToolFilter(engine.WithToolFilter(context.Background(), none), all), true},
		{"a nil filter changes nothing", engine.WithToolFilter(context.Background(), nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := svc.Call(tt.ctx, greetInput())
			if !tt.unknown {
				if r.IsError {
					t.Fatalf("the call failed: %+v", r.Error)
				}
				return
			}
			if !r.IsError || r.Error.Info == nil || r.Error.Info.Code != engine.CodeUnknownTool || r.Error.Message != `unknown tool "greet"` {
				t.Fatalf("the call ended %+v, want UNKNOWN_TOOL `unknown tool \"greet\"`", r.Error)
			}
		})
	}
}
