package eventloop

import (
	"context"
	"errors"
	"testing"
)

// TestAttachOneReaction pins the Go-side attachment of a Run to its pending
// promise: one reaction closure serves both outcomes (the settled promise
// says which), passed through an argument list made once, so neither a
// fulfilment nor a rejection is lost, and scripts that tamper with arrays
// or Reflect.apply change nothing.
func TestAttachOneReaction(t *testing.T) {
	cases := []struct {
		name, setup, src string
		want             any
		wantErr          string
	}{
		{
			name: "a promise fulfilled in the microtask queue gives its value",
			src:  `(async () => { await null; return 7 })()`,
			want: int64(7),
		},
		{
			name:    "a promise rejected in the microtask queue gives its reason",
			src:     `(async () => { await null; throw new TypeError("no") })()`,
			wantErr: "TypeError: no",
		},
		{
			name: "a promise fulfilled by a timer gives its value",
			src:  `new Promise(resolve => setTimeout(() => resolve("late"), 1))`,
			want: "late",
		},
		{
			name:    "a promise rejected by a timer gives its reason",
			src:     `new Promise((_, reject) => setTimeout(() => reject(new RangeError("late")), 1))`,
			wantErr: "RangeError: late",
		},
		{
			name:    "a promise rejected with undefined is still a rejection",
			src:     `new Promise((_, reject) => setTimeout(() => reject(undefined), 1))`,
			wantErr: "undefined",
		},
		{
			name: "array index setters and a replaced Reflect.apply do not reach the attachment",
			setup: `Object.defineProperty(Array.prototype, "0", { set() { throw new Error("setter 0") }, get() { return 0 } });
Object.defineProperty(Array.prototype, "1", { set() { throw new Error("setter 1") }, get() { return 1 } });
Reflect.apply = () => { throw new Error("apply") };`,
			src:  `(async () => { await null; return "kept" })()`,
			want: "kept",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := newLoop(t, Options{})
			if tc.setup != "" {
				mustRun(t, l, tc.setup)
			}
			// Twice: the argument list made once serves every attachment.
			for range 2 {
				got, err := runJS(l, context.Background(), tc.src)
				if tc.wantErr != "" {
					var je *JSError
					if !errors.As(err, &je) {
						t.Fatalf("err = %v, want a *JSError %q", err, tc.wantErr)
					}
					if je.Error() != tc.wantErr {
						t.Fatalf("err = %q, want %q", je.Error(), tc.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if got != tc.want {
					t.Fatalf("got %#v, want %#v", got, tc.want)
				}
			}
		})
	}
}

// TestAttachAllocations bounds what awaiting a pending promise costs: the
// attachment makes one reaction closure and reuses its argument list, where
// it made two closures and an array (122 allocations a Run at this goja;
// 110 with one closure).
func TestAttachAllocations(t *testing.T) {
	l, fn, done := loopCalling(t, "(async function () { await null; return 1 })")
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := l.Run(ctx, fn, nil, done); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 116 {
		t.Fatalf("an awaited Run made %.0f allocations, want at most 116", allocs)
	}
}
