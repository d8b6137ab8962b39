package luavalue

import (
	"errors"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// The messages below are word for word those of jsvalue's limits_test.go:
// both languages refuse a value at the same size, in the same words.

// deepPathLua is the path of the innermost of 100,001 nested arrays, as every
// converter renders it: the middle levels counted, not written.
var deepPathLua = "value" + strings.Repeat("[0]", 20) + "…(99,958 more)…" + strings.Repeat("[0]", 22)

func TestToGoDefaultDepthLimit(t *testing.T) {
	// n nested tables, the innermost {1} so that each one is an array.
	const build = `local root = {1} for i = 2, %d do root = {root} end return root`
	t.Run("100,001 levels are refused in a short message naming the limit", func(t *testing.T) {
		e := newEnv(t, Limits{})
		_, err := e.c.ToGo(e.run(strings.Replace(build, "%d", "100001", 1)), "value", nil)
		wantSnapshotError(t, err, deepPathLua, "nesting deeper than 100000 levels")
		if !errors.Is(err, dsl.ErrLimit) {
			t.Fatal("the error does not wrap dsl.ErrLimit")
		}
		if n := len(err.Error()); n > 300 {
			t.Fatalf("a message of %d bytes", n)
		}
	})
	t.Run("a path under another root is as short", func(t *testing.T) {
		e := newEnv(t, Limits{MaxDepth: 1000})
		_, err := e.c.ToGo(e.run(strings.Replace(build, "%d", "1001", 1)), "arguments[0]", nil)
		wantSnapshotError(t, err, "arguments[0]"+strings.Repeat("[0]", 18)+"…(960 more)…"+strings.Repeat("[0]", 22),
			"nesting deeper than 1000 levels")
	})
}

func TestToLuaDefaultDepthLimit(t *testing.T) {
	e := newEnv(t, Limits{})
	_, err := e.c.TryToLua(nestedGo(100_001))
	wantSnapshotError(t, err, deepPathLua, "nesting deeper than 100000 levels")
}

// nestedGo is n nested arrays, the innermost empty.
func nestedGo(n int) any {
	var v any = []any{}
	for i := 1; i < n; i++ {
		v = []any{v}
	}
	return v
}

func TestToGoCountsBytes(t *testing.T) {
	// {s = <100 bytes>}: the object and its member count 2×16 bytes, the
	// key 1 and the string 100: 133 bytes. The same sizes as in JavaScript.
	tests := []struct {
		name, src string
		max       int
		path      string // "" when accepted
	}{
		{"an ASCII string exactly at the limit is accepted", `{s = string.rep("x", 100)}`, 133, ""},
		{"an ASCII string one byte over is refused", `{s = string.rep("x", 100)}`, 132, "value.s"},
		{"a string is measured in UTF-8 bytes", `{s = string.rep("\195\169", 50)}`, 133, ""},
		{"keys count, where their table opens", `{[string.rep("k", 100)] = 1}`, 131, "value"},
		{"elements count 16 bytes each", `{1, 2, 3}`, 63, "value"},
		{"a string at the root", `string.rep("x", 100)`, 115, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Limits{MaxBytes: tt.max})
			_, err := e.toGo(tt.src, nil)
			if tt.path == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantSnapshotError(t, err, tt.path, dsl.BytesError("", tt.max).Reason)
		})
	}
}

func TestToLuaLimits(t *testing.T) {
	tests := []struct {
		name string
		v    any
		lim  Limits
		path string
		msg  string
	}{
		{"too many values", []any{1.0, []any{2.0, 3.0}}, Limits{MaxNodes: 4}, "value[1]", "more than 4 values"},
		{"too deep", []any{[]any{[]any{}}}, Limits{MaxDepth: 2}, "value[0][0]", "nesting deeper than 2 levels"},
		{"a string too long", dsl.NewObject(dsl.Member{Key: "s", Value: strings.Repeat("x", 100)}), Limits{MaxBytes: 100},
			"value.s", "more than 100 bytes"},
		{"a key too long", dsl.NewObject(dsl.Member{Key: strings.Repeat("k", 100), Value: 1.0}), Limits{MaxBytes: 100},
			"value.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…", "more than 100 bytes"},
		{"a string at the root", strings.Repeat("x", 100), Limits{MaxBytes: 100}, "value", "more than 100 bytes"},
		{"a map normalised by dsl is limited too", map[string]any{"a": strings.Repeat("x", 200)}, Limits{MaxBytes: 100},
			"value.a", "more than 100 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.lim)
			_, err := e.c.TryToLua(tt.v)
			wantSnapshotError(t, err, tt.path, tt.msg)
		})
	}
}
