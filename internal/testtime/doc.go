// Package testtime is the one knob for the wall-clock budgets of dsh's
// tests, so that a busy machine (a laptop building something else, a shared
// CI runner, the race detector) can stretch them without editing a test.
//
// A test whose subject is not a budget uses a generous one (seconds, or the
// production default) and does not need this package. A test about a budget
// (a listener deadline, a tool's timeoutMs, a program's compute budget or
// wall-clock ceiling, a grace period) sets it to [D] of the value it was
// written with, and expects the scaled value wherever the budget shows (in a
// message such as "timed out after 250ms", through [Ms]). Such a test then
// asserts order and bounds: the work that must beat the deadline finished,
// the work that must not was stopped no earlier than the budget, and no
// later than the budget plus a generous slack.
//
// The scale is the environment variable DSH_TEST_TIMESCALE, a positive
// number (DSH_TEST_TIMESCALE=3 triples every scaled budget). Unset, it is 1,
// or [RaceScale] when the tests run with the race detector, which makes
// interpreted code several times slower ([ScaleWithoutRace] for the budgets
// of a program built without it). The txtar runners of package tests read it
// too, so their fixtures keep the budgets they were written with.
package testtime
