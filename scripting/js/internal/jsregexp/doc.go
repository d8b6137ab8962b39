// Package jsregexp knows how goja runs a regular expression, so that the
// rest of dsh can refuse what goja gets wrong and notice what it hides.
//
// goja compiles a JavaScript pattern for one of two engines: Go's regexp
// (RE2, linear time) when its translator accepts the pattern, else
// github.com/dlclark/regexp2, a backtracking engine that can take
// exponential time and gives up past its match timeout. goja drops that
// timeout error and reports "no match".
//
//   - [Check] refuses syntax this goja accepts but runs wrong: named capture
//     groups and \k<name> (no .groups, and regexp2's numbering), Unicode
//     property escapes (read as a literal "p{L}" by one engine and as a
//     category by the other), the escapes \a and \e (a bell and an escape
//     character on regexp2, the letters a and e in JavaScript), \A, \G, \Z
//     and \z (anchors on regexp2, letters in JavaScript), and the flags d
//     and v.
//   - [Backtracking] tells whether goja runs a pattern on regexp2 always,
//     as it does for lookaround, backreferences and large repeat counts.
//     goja also runs patterns RE2 accepts on regexp2 for some calls: a match
//     from a lastIndex other than 0, and a global search of a string that is
//     not ASCII (unless the u flag is set and the string is well-formed
//     UTF-16); callers decide that per call.
//   - [Compile] and [Matcher] rerun a match the way goja runs it on regexp2
//     ([Matcher.MatchAt] for exec, [Matcher.SearchFrom] for the search of
//     split and of global match and replace), with their own timeout, and
//     report the timeout as an error: the only way to tell goja's "no match"
//     from a match that ran out of time. [Matcher.SearchRE2] looks on RE2
//     instead, in linear time, for a pattern goja also has for RE2.
//
// Patterns are JavaScript source text as Go strings; a pattern with lone
// surrogates (which UTF-8 cannot hold) comes through [PatternFromUTF16].
package jsregexp
