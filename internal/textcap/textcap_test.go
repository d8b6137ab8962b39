package textcap

import (
	"strings"
	"testing"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
		cut      bool
	}{
		{"text within the bound is kept whole", "abc", 3, "abc", false},
		{"text over the bound keeps a prefix and the marker", "abcdef", 3, "abc… (truncated)", true},
		{"a cut never splits a character", "aé", 2, "a… (truncated)", true},
		{"a four-byte character is dropped whole", "😀x", 3, "… (truncated)", true},
		{"a zero bound keeps only the marker", "x", 0, "… (truncated)", true},
		{"a negative bound keeps only the marker", "x", -1, "… (truncated)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := Cut(tc.in, tc.n)
			if got != tc.want || cut != tc.cut {
				t.Errorf("Cut(%q, %d) = %q, %v; want %q, %v", tc.in, tc.n, got, cut, tc.want, tc.cut)
			}
		})
	}
}

func TestCutOfAHugeTextCostsItsBound(t *testing.T) {
	big := strings.Repeat("x", 64<<20)
	allocs := testing.AllocsPerRun(5, func() { _ = String(big, 16) })
	if allocs > 1 {
		t.Errorf("Cut allocated %v times; want at most 1 (the prefix and marker)", allocs)
	}
	if got := String(big, 16); len(got) != 16+len(Marker) {
		t.Errorf("len = %d; want %d", len(got), 16+len(Marker))
	}
}
