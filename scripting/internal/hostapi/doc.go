// Package hostapi holds what the JavaScript and Lua hosts share of the
// script API's Go side, so both behave the same by construction: the
// listener events and how a listener registers through its plugin, the
// hosts' option defaults, how a plugin's pool is filled, the effect keys of
// script callbacks, the timed-out error, the weak maps of script objects,
// and the JSON values scripts receive or give (changes, agents, result
// summaries, deferred messages, tools.restrict filters) with their errors.
//
// Texts a script hands to Go are bounded the same in both languages: an
// error's message (and a coded error's name and code) at MaxErrorText, a
// logged line at MaxLogMessage, both 16 KiB, cut and marked "… (truncated)".
//
// What depends on the language (converting values, calling functions,
// the names scripts use) stays in the hosts.
package hostapi
