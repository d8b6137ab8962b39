package ptc

import (
	"slices"
	"testing"
)

// TestEntryQueueIsFirstInFirstOut drives the queue through sequences of
// pushes (a positive step: that many) and pops (a negative one) and checks
// that entries come out in the order they went in, through its rewinds and
// compactions.
func TestEntryQueueIsFirstInFirstOut(t *testing.T) {
	tests := []struct {
		name  string
		steps []int
	}{
		{"entries pushed then popped come out in order", []int{5, -5}},
		{"a queue emptied and refilled keeps the order", []int{3, -3, 4, -2, 1, -3}},
		{"pushes into a full slice whose front was popped keep the order", []int{8, -6, 20, -10, 7, -19}},
		{"alternating pushes and pops at a steady length keep the order", []int{4, 1, -1, 1, -1, 1, -1, 1, -1, 1, -1, -4}},
		{"a long queue drained one at a time while growing keeps the order", []int{100, -1, 50, -60, 30, -119}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var q entryQueue
			var in, out []*subEntry
			for _, step := range tt.steps {
				for range step {
					e := &subEntry{}
					in = append(in, e)
					q.push(e)
				}
				for range -step {
					if q.front() != in[len(out)] {
						t.Fatalf("front is not entry %d", len(out))
					}
					out = append(out, q.pop())
				}
				if got, want := q.len(), len(in)-len(out); got != want {
					t.Fatalf("len() = %d, want %d", got, want)
				}
			}
			if !slices.Equal(out, in[:len(out)]) {
				t.Errorf("entries came out in another order than they went in")
			}
			for i, e := range q.items[:q.head] {
				if e != nil {
					t.Errorf("popped slot %d still holds its entry", i)
				}
			}
		})
	}
}
