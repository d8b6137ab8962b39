package js

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The console inspector walked every hole of a sparse array one by one: 4
// billion of them for an array of length 2^32-1, past any budget.
func TestProgramConsoleCountsTheHolesOfHugeSparseArraysFromTheirElements(t *testing.T) {
	rt := newProgramRuntime(t, nil)
	for _, tt := range []struct {
		name, code string
		want       []string
	}{
		{"a sparse array of length 2^32-1", `const a = []; a.length = 2**32 - 1; a[5] = 1; a[1000] = 2; console.log(a)`,
			[]string{"[ <5 empty items>, 1, <994 empty items>, 2, <4294966294 empty items> ]"}},
		{"an empty array of length 2^32-1", `const a = []; a.length = 2**32 - 1; console.log(a)`,
			[]string{"[ <4294967295 empty items> ]"}},
		{"holes just past the one-by-one probe", `const a = [1]; a[66] = 2; console.log(a)`,
			[]string{"[ 1, <65 empty items>, 2 ]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			began := time.Now()
			res := runProgram(t, rt, context.Background(), nil, tt.code)
			if res.Err != nil {
				t.Fatalf("failed: %v", res.Err)
			}
			if !slices.Equal(res.Logs, tt.want) {
				t.Errorf("logs =\n%q\nwant\n%q", res.Logs, tt.want)
			}
			if d := time.Since(began); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
