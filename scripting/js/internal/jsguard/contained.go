package jsguard

// A contained runtime (Options.Contained) runs in a process that is its own
// guard: a run_code child under process isolation, with a memory cap, a
// CPU backstop, a kill, and its Go stack capped low, so that a Go stack
// overflow there is a quick crash of that child alone (the run fails as
// worker-exit) rather than of the agent. What jsguard is for there is what
// a program sees, not the host's survival:
//
//   - Kept: every builtin jsguard has its own implementation of or a check
//     in (JSON.parse and JSON.stringify, join, flat, bind, apply, the
//     regular-expression methods and their match time limit, the
//     allocation caps, the sparse-array and iterator checks, the BigInt
//     caps and operator helpers), the constructor proxies, eval's and
//     Function's source checks. A program gets the same values and the
//     same errors (their kinds and messages) as in process, where those
//     are the result of a correct program or a catchable RangeError.
//   - Left as goja's own: the native methods whose wrapper would only count
//     one level of native re-entry. A cycle through them (o.toString =
//     String.prototype.trim; String(o)) then overflows the Go stack
//     instead of throwing RangeError("...: nesting deeper than 10000
//     levels"): the child dies and the run fails as worker-exit.
//
// Those wrappers are most of Install's cost (goja building each wrapped
// builtin and the object holding it): a contained runtime replaces 103 of
// the 390 builtins, from 21 of the 65 holders, for about 4,000 allocations
// against 10,200.

// markCountedOnly marks the native methods of items whose wrapper would
// only count re-entry: those with no implementation or check of jsguard's
// own. The checks are chosen by name alone, so a scratch guard asks.
func markCountedOnly(items []planned) {
	var g guard
	for i := range items {
		p := &items[i]
		if p.ctor != "" {
			continue
		}
		p.countedOnly = g.special(p.name, nil) == nil && g.nativeLoopCheck(p.name, nil) == nil &&
			g.bigintCheck(p.name, nil) == nil
	}
}
