package jsguard_test

import (
	"errors"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsguard"
)

func TestCallsThatCouldFindTooManyMatchesRunOnABudget(t *testing.T) {
	const opts = 1 << 20 // 4096 matches
	for _, c := range []struct{ name, src, want string }{
		{"a global replace of every character", `"x".repeat(5000).replace(/x/g, "yy")`,
			"RangeError: RegExp.prototype[Symbol.replace]: more than 4096 matches"},
		{"a global match of every character", `"x".repeat(5000).match(/x/g)`,
			"RangeError: RegExp.prototype[Symbol.match]: more than 4096 matches"},
		{"a replaceAll by a regular expression", `"x".repeat(5000).replaceAll(/x/g, "")`,
			"RangeError: RegExp.prototype[Symbol.replace]: more than 4096 matches"},
		{"a split at every character", `"x,".repeat(5000).split(/,/)`,
			"RangeError: RegExp.prototype[Symbol.split]: more than 4096 matches"},
		{"a global replace on the backtracking engine", `"é".repeat(5000).replace(/é/g, "e")`,
			"RangeError: RegExp.prototype[Symbol.replace]: more than 4096 matches"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxAllocBytes: opts})
			if got := thrown(t, vm, c.src); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for _, c := range []struct{ name, src, want string }{
		{"a long string with few matches", `"x".repeat(10000).replace(/x{5000}/g, "y").length`, "2"},
		{"a split into few pieces", `("x".repeat(5000) + ",").split(/,/).length`, "2"},
		{"a replace with a function", `"ab".repeat(3000).replace(/a/g, function () { return "" }).length`, "3000"},
		{"matches with captures", `"a1b2".repeat(2000).match(/[a-z](\d)/g).length`, "4000"},
		{"a replace on the backtracking engine within the budget", `"é".repeat(4000).replace(/é/g, "e").length`, "4000"},
		{"a backreference replace", `"aa-bb".replace(/(\w)\1/g, "[$1]")`, "[a]-[b]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vm := guarded(t, jsguard.Options{MaxAllocBytes: opts})
			v, err := vm.RunString(c.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// Each match of this replace takes a large part of a second on regexp2
// (under its one-second limit), 400 of them a minute in one native call
// (15 s before a 2 s wall budget ended a program). Match by match, an
// interrupt ends the call within one match.
func TestAnInterruptEndsAGlobalReplaceOfSlowMatchesWithinAMatch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs matches of a third of a second")
	}
	vm := guarded(t, jsguard.Options{})
	const deadline = time.Second
	timer := time.AfterFunc(deadline, func() { vm.Interrupt("deadline") })
	defer timer.Stop()
	began := time.Now()
	_, err := vm.RunString(`("x".repeat(17) + "z").repeat(400).replace(/(x+)+\1y|z/g, "!")`)
	elapsed := time.Since(began)
	var ie *goja.InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("got %v, want the interrupt", err)
	}
	if elapsed < deadline || elapsed > deadline+2*time.Second {
		t.Errorf("ended after %v, want between %v and %v", elapsed, deadline, deadline+2*time.Second)
	}
}
