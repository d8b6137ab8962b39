package dsl_test

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// nested returns leaf inside n arrays: [[…[leaf]…]].
func nested(n int, leaf any) any {
	v := leaf
	for range n {
		v = []any{v}
	}
	return v
}

func TestLimitsWithDefaults(t *testing.T) {
	got := dsl.Limits{MaxDepth: -1, MaxNodes: 7}.WithDefaults()
	want := dsl.Limits{MaxDepth: 100_000, MaxNodes: 7, MaxBytes: 64 << 20}
	if got != want {
		t.Fatalf("WithDefaults = %+v, want %+v", got, want)
	}
}

func TestSnapshotRefusesNestingDeeperThanTheLimit(t *testing.T) {
	t.Run("exactly the default depth is accepted", func(t *testing.T) {
		if _, err := dsl.Snapshot(nested(dsl.DefaultMaxDepth, 1.0)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one level more is refused with a short message", func(t *testing.T) {
		_, err := dsl.Snapshot(nested(dsl.DefaultMaxDepth+1, 1.0))
		want := "value" + strings.Repeat("[0]", 20) + "…(99,958 more)…" + strings.Repeat("[0]", 22) +
			": nesting deeper than 100000 levels"
		if err == nil || err.Error() != want {
			t.Fatalf("err = %v\nwant %s", err, want)
		}
		if !errors.Is(err, dsl.ErrLimit) {
			t.Fatal("the error does not wrap ErrLimit")
		}
	})
	t.Run("an empty container counts as a level", func(t *testing.T) {
		_, err := dsl.SnapshotWithin("value", []any{[]any{}}, dsl.Limits{MaxDepth: 1})
		if err == nil || err.Error() != "value[0]: nesting deeper than 1 levels" {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("CheckLossless has the same limit", func(t *testing.T) {
		err := dsl.CheckLossless(nested(dsl.DefaultMaxDepth+1, 1.0))
		var se *dsl.SnapshotError
		if !errors.As(err, &se) || se.Reason != "nesting deeper than 100000 levels" {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestSnapshotWithinCountsValuesAndBytes(t *testing.T) {
	big := strings.Repeat("x", 100)
	tests := []struct {
		name string
		v    any
		lim  dsl.Limits
		want string // the error, or "" for none
	}{
		{"values up to the limit pass", []any{1.0, 2.0}, dsl.Limits{MaxNodes: 3}, ""},
		{"one value more is refused where its container opens", obj("a", []any{1.0, 2.0, 3.0}), dsl.Limits{MaxNodes: 4},
			"value.a: more than 4 values"},
		{"a string at the root is measured", big, dsl.Limits{MaxBytes: 100 + dsl.ValueBytes}, ""},
		{"a string one byte over is refused", big, dsl.Limits{MaxBytes: 99 + dsl.ValueBytes},
			"value: more than 115 bytes"},
		{"a string inside an object is refused at its path", obj("a", obj("s", big)), dsl.Limits{MaxBytes: 100},
			"value.a.s: more than 100 bytes"},
		{"keys count as well as strings", obj(big, 1.0), dsl.Limits{MaxBytes: 100},
			`value.xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…: more than 100 bytes`},
		{"each value costs ValueBytes", make([]any, 10), dsl.Limits{MaxBytes: 10 * dsl.ValueBytes},
			"value: more than 160 bytes"},
		{"a named string type is measured too", []any{namedString(big)}, dsl.Limits{MaxBytes: 100},
			"value[0]: more than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := dsl.SnapshotWithin("value", tt.v, tt.lim)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			case tt.want != "" && !errors.Is(err, dsl.ErrLimit):
				t.Fatal("the error does not wrap ErrLimit")
			}
		})
	}
}

type namedString string

func TestWritePathKeepsPathsShort(t *testing.T) {
	index := func(b *strings.Builder, i int) { dsl.WritePathIndex(b, i) }
	long := strings.Repeat("k", 1000)
	tests := []struct {
		name string
		root string
		n    int
		step func(*strings.Builder, int)
		want string
	}{
		{"a short path is written whole", "value", 3, index, "value[0][1][2]"},
		{"a deep path keeps its ends and counts the middle", "value", 1000, index,
			"value[0][1][2][3][4][5][6][7][8][9][10][11][12][13][14][15][16][17]…(969 more)…" +
				"[987][988][989][990][991][992][993][994][995][996][997][998][999]"},
		{"long keys are cut", "value", 3, func(b *strings.Builder, i int) { dsl.WritePathKey(b, long) },
			"value" + strings.Repeat(".kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…", 3)},
		{"a long root keeps its ends", strings.Repeat("r", 100) + "end", 1, index,
			strings.Repeat("r", 30) + "…" + strings.Repeat("r", 27) + "end[0]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			dsl.WritePath(&b, tt.root, tt.n, tt.step)
			if b.String() != tt.want {
				t.Fatalf("path = %s\nwant   %s", b.String(), tt.want)
			}
		})
	}
}

func TestWritePathKeyCutsQuotedKeys(t *testing.T) {
	tests := []struct{ name, key, want string }{
		{"an identifier", "abc", ".abc"},
		{"a key with a space is quoted", "a b", `["a b"]`},
		{"control characters are escaped and count as written", strings.Repeat("\x01", 10), `["\u0001\u0001\u0001\u0001\u0001…"]`},
		{"a cut never splits a character", strings.Repeat("é", 40), `["` + strings.Repeat("é", 16) + `…"]`},
		{"invalid UTF-8 is escaped as Go does", "\xff", `["\xff"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			dsl.WritePathKey(&b, tt.key)
			if b.String() != tt.want {
				t.Fatalf("WritePathKey(%q) = %s, want %s", tt.key, b.String(), tt.want)
			}
		})
	}
}

// FuzzWritePath checks that no path, however deep and whatever its keys,
// renders longer than 250 bytes.
func FuzzWritePath(f *testing.F) {
	f.Add("value", 100000, "a")
	f.Add(strings.Repeat("é", 100), 3, strings.Repeat("\x01", 300))
	f.Fuzz(func(t *testing.T, root string, n int, key string) {
		if len(root) > 1000 {
			return
		}
		n = int(math.Abs(float64(n % 1_000_000))) // bounded, for speed
		var b strings.Builder
		dsl.WritePath(&b, root, n, func(b *strings.Builder, i int) {
			if i%2 == 0 {
				dsl.WritePathKey(b, key+strconv.Itoa(i))
			} else {
				dsl.WritePathIndex(b, i)
			}
		})
		if b.Len() > 250 {
			t.Fatalf("path of %d bytes: %s", b.Len(), b.String())
		}
	})
}
