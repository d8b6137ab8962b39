// Package jsvalue moves values across the boundary between a goja JavaScript
// runtime and Go, as lossless JSON (pipeline.md §1.8), without ever running
// script code.
//
// That is its one job. [ToGo] turns a script's value into the Go form of
// package dsl (nil, bool, float64, string, []any, *dsl.Object) or refuses it
// with a *dsl.SnapshotError naming the path of the first offending value.
// [ToJS] turns the Go form into plain, frozen JavaScript objects and arrays.
// Neither calls a getter, setter, toJSON, valueOf, Symbol.toPrimitive, Proxy
// trap, or any global a script could have replaced.
//
// Everything is read through goja's Go API and through built-ins of the
// Object constructor (getOwnPropertyDescriptor, getOwnPropertySymbols, hasOwn,
// getOwnPropertyNames, freeze and preventExtensions) that [Prepare] captures
// before any script runs, checks are goja's own, and that are then called as
// the Go functions implementing them. Call Prepare once per runtime, first
// thing; the [Realm] it returns has the same methods as the package functions.
//
// Reading a property without invoking it is the crux. goja exports no Go
// method that tells a data property from an accessor (and has no
// __lookupGetter__), so ToGo asks the captured
// Object.getOwnPropertyDescriptor, key by key, which is implemented in Go and,
// on an ordinary object or array, runs no script; only once the descriptor
// shows an enumerable data property is its value used. ToGo never hands the
// built-ins anything else: Proxies, functions and exotic objects are refused
// first, from facts goja keeps in Go fields (ExportType, ClassName,
// Prototype). See [Realm.ToGo] for the one environment in which even the
// built-in would run script code, and how that case fails closed.
package jsvalue
