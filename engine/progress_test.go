package engine_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/dsh-go/dsh/engine"
)

func TestReportProgress(t *testing.T) {
	var got []engine.Progress
	ctx := engine.WithProgress(context.Background(), func(p engine.Progress) { got = append(got, p) })
	cases := []struct {
		name  string
		p     engine.Progress
		heard bool
	}{
		{"a report with a total is heard", engine.Progress{Progress: 1, Total: 4, Message: "one"}, true},
		{"a report without a total is heard", engine.Progress{Progress: 2}, true},
		{"a NaN progress is dropped", engine.Progress{Progress: math.NaN()}, false},
		{"an infinite progress is dropped", engine.Progress{Progress: math.Inf(1)}, false},
		{"an infinite total is dropped", engine.Progress{Progress: 1, Total: math.Inf(1)}, false},
		{"a negative total is dropped", engine.Progress{Progress: 1, Total: -1}, false},
	}
	var want []engine.Progress
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if heard := engine.ReportProgress(ctx, c.p); heard != c.heard {
				t.Errorf("heard = %v, want %v", heard, c.heard)
			}
		})
		if c.heard {
			want = append(want, c.p)
		}
	}
	t.Run("the function hears the reports in order", func(t *testing.T) {
		if !slices.Equal(got, want) {
			t.Errorf("heard %v, want %v", got, want)
		}
	})
	t.Run("HasProgress says whether a function listens", func(t *testing.T) {
		if !engine.HasProgress(ctx) || engine.HasProgress(context.Background()) || engine.HasProgress(engine.WithProgress(ctx, nil)) {
			t.Error("HasProgress is wrong")
		}
	})
	t.Run("a context without a function hears nothing", func(t *testing.T) {
		if engine.ReportProgress(context.Background(), engine.Progress{Progress: 1}) {
			t.Error("reported to nobody")
		}
		if engine.ReportProgress(engine.WithProgress(ctx, nil), engine.Progress{Progress: 1}) {
			t.Error("a nil function heard a report")
		}
	})
}
