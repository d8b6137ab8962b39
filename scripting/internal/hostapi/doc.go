// Package hostapi holds what the JavaScript and Lua hosts share of the
// script API's Go side, so both behave the same by construction: the
// listener events and how a listener registers through its plugin.
package hostapi
