package tests

import "testing"

// ordinaryPolicies are the four example policies that only look at a call
// and decide or rewrite (issue 29's "four ordinary JS policies"): the two
// left out of the example set are audit_log, which writes a log line per
// call through the host, and repeat_reminder, which keeps state across
// calls and builds a canonical JSON text and a UUID per reminder.
var ordinaryPolicies = []string{"ask_before_write", "deny_shell", "protect_secrets", "redact_tokens"}

// BenchmarkExamplePolicyOrdinary is BenchmarkExamplePolicySet with the four
// ordinary policies together, in each language; less tool_alone, it is what
// they cost a call.
func BenchmarkExamplePolicyOrdinary(b *testing.B) {
	b.Cleanup(func() { awaitRegexpClock(b) })
	for _, lang := range []string{"js", "lua"} {
		b.Run(lang, func(b *testing.B) {
			benchWordCount(b, policySetDir(b, lang, ordinaryPolicies...), len(ordinaryPolicies))
		})
	}
}
