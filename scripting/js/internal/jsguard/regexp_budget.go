package jsguard

import (
	"fmt"
	"reflect"
	"time"

	"github.com/dop251/goja"
)

// goja runs a global match, replace or split in one native call: on its
// fast path it finds every match first (a [][]int of them: 40 bytes or
// more a match), then builds the result; a match on regexp2 may take up to
// RegexpMatchTimeout, and the call as many times that as it has matches (a
// 2 s tool call took 33 s). Interrupt reaches neither. So:
//
//   - A global match or replace that goja runs on regexp2 runs match by
//     match instead, through the watched exec (goja's generic algorithm),
//     and the watched exec, after each match, looks for a pending
//     interrupt (at most every probeEvery): a call whose deadline passed
//     ends within one match of it, with the deadline's own error. It also
//     charges the call's match budget, MaxAllocBytes / perMatchBytes
//     matches (1,048,576 by default), past which the call throws
//     RangeError("RegExp.prototype[Symbol.replace]: more than 1048576
//     matches").
//   - A call goja runs on RE2 (an ASCII string) on a string long enough
//     to hold more matches than the budget has its matches counted first,
//     on RE2 in linear time, and is refused the same way when they are
//     too many.
//
// Not bounded: a split that goja runs on regexp2 (its sticky splitter
// tries every position; going match by match there costs a confirmed
// no-match per position, far too slow): its matches are each bounded by
// RegexpMatchTimeout, not the call.

// perMatchBytes is what one match costs in goja's generic algorithms: its
// exec result, kept until the call ends.
const perMatchBytes = 256

// probeEvery is how often the watched exec looks for an interrupt.
const probeEvery = 5 * time.Millisecond

// matchBudget is what one call running match by match may still find.
type matchBudget struct {
	name string
	left int64
}

func (g *guard) maxMatches() int64 { return g.maxBytes / perMatchBytes }

// manyMatches reports whether a call on s could find more matches than
// the budget.
func (g *guard) manyMatches(s goja.String) bool { return int64(s.Length())+1 > g.maxMatches() }

// countMatches refuses a call goja runs on RE2 over s that finds more
// matches than the budget, counting them first when s could hold that
// many.
func (g *guard) countMatches(name string, info *regexpInfo, s goja.String) {
	if !g.manyMatches(s) || reflect.TypeOf(s) != g.re.asciiType {
		return
	}
	m, err := info.matcherOf()
	if err != nil {
		return
	}
	limit := g.maxMatches()
	if n, ok := m.CountRE2(s.String(), int(limit)); ok && int64(n) > limit {
		panic(g.rangeErr(fmt.Sprintf("RegExp.prototype[%s]: more than %d matches", name, limit)))
	}
}

// goesStepwise reports whether a match or replace of RegExp.prototype
// (name is its symbol's description) runs match by match.
func (g *guard) goesStepwise(name string, info *regexpInfo, onRegexp2 bool) bool {
	if name != "Symbol.match" && name != "Symbol.replace" || !info.global {
		return false
	}
	return onRegexp2
}

// stepwise runs f, a call that goes through the watched exec match by
// match, with a match budget of its own.
func (g *guard) stepwise(name string, f func() goja.Value) goja.Value {
	prev := g.re.budget
	g.re.budget = &matchBudget{name: "RegExp.prototype[" + name + "]", left: g.maxMatches()}
	defer func() { g.re.budget = prev }()
	return f()
}

// afterMatch is what the watched exec does after each match: charge the
// budget for a match found, and look for a pending interrupt.
func (g *guard) afterMatch(found bool) {
	if b := g.re.budget; found && b != nil {
		b.left--
		if b.left < 0 {
			panic(g.rangeErr(fmt.Sprintf("%s: more than %d matches", b.name, g.maxMatches())))
		}
	}
	if now := time.Now(); now.Sub(g.re.probed) >= probeEvery {
		g.re.probed = now
		g.checkInterrupt()
	}
}
