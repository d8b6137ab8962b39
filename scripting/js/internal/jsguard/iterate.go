package jsguard

import (
	"strings"
	"time"

	"github.com/dop251/goja"
)

// Iterators stepped from Go: a spread ([...a], f(...a)), Array.from of an
// iterable, new Set(iterable), Promise.all and destructuring run an
// iterator's next in a loop inside one instruction or builtin, which
// Interrupt does not reach. [...a] of a sparse array of length 2^25 took
// 2 min 39 s (2^32-1: days, and 64 GiB). The next methods of the builtin
// iterators (array, string, map, set and regular expression string
// iterators) are jsguard's counted wrappers; every stepProbeEvery steps
// they look at the clock, and at most every probeEvery they look for a
// pending interrupt (the deadline, the memory limit's), which ends the
// loop with it.

// stepProbeEvery is how many iterator steps pass between two looks at the
// clock.
const stepProbeEvery = 1024

// iteratorChecked wraps the next method of a builtin iterator with the
// interrupt probe, or returns nil for other builtins.
func (g *guard) iteratorChecked(path string, impl func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	if !strings.HasPrefix(path, "%") || !strings.HasSuffix(path, "IteratorPrototype%.next") {
		return nil
	}
	return func(c goja.FunctionCall) goja.Value {
		g.re.steps++
		if g.re.steps%stepProbeEvery == 0 {
			if now := time.Now(); now.Sub(g.re.probed) >= probeEvery {
				g.re.probed = now
				g.checkInterrupt()
			}
		}
		return impl(c)
	}
}
