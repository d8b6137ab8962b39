package jsvalue

import "testing"

// TestFastPathLayout fails when goja's structures are no longer the ones the
// fast path reads (see fast.go): ToGo then still works, but slower.
func TestFastPathLayout(t *testing.T) {
	if discover() == nil {
		t.Fatal("the fast path found no layout in goja's structures")
	}
	if fastLayout() == nil {
		t.Fatal("the fast path's layout did not pass its verification on probe values")
	}
}
