// Package jsvalue moves values across the boundary between a goja JavaScript
// runtime and Go, as lossless JSON (docs/behaviour.md), without ever running
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
//
// # The fast path
//
// Asking for a descriptor object per property is slow, so ToGo first tries
// a fast path that reads an object's or array's own property table directly,
// by reflection and unsafe pointer arithmetic on goja's unexported Go
// structures: the same table the built-ins read, without entering the
// runtime or allocating (about four times cheaper on tool-sized values).
// It takes only the shapes it knows exactly (goja's ordinary object of class
// "Object" with Object.prototype or null as prototype and no symbol key;
// goja's dense array with Array.prototype, no hole and no extra property),
// and it fails closed: a table entry is read as a value only when its Go
// type is on an allow-list (goja's integer, float, boolean and null, its
// three string representations, and *goja.Object, which is then classified
// like any other object), directly or as the value of an enumerable data
// property's record. Anything else (an accessor, a non-enumerable property,
// undefined, a symbol, a BigInt, a hole, a type the allow-list does not
// know) sends the whole container to the built-in path, which refuses it or
// reads it as before.
//
// Field offsets and types are discovered when a Realm is first made, once
// per process, then verified on probe values against what the built-ins
// report of them; if anything differs (a goja upgrade changed its
// structures) the fast path stays off for the process and ToGo is only
// slower. TestFastPathLayout fails in that case. [Realm.SetFastPath] turns
// the fast path off for one realm, for example to rule it out when
// investigating a conversion.
//
// [TextBlocks] reads, through the fast path, the content a tool's
// renderer usually returns (text blocks only) as its blocks, without the
// value ToGo would build; it answers only when ToGo would read the same
// (TestTextBlocksAgreesWithToGo, FuzzTextBlocks), and leaves everything else
// to ToGo.
//
// # Limits
//
// Both directions refuse, with a *dsl.SnapshotError wrapping dsl.ErrLimit, a
// value nested deeper, with more values or larger in bytes than dsl.Limits
// allows (by default 100,000 levels, a million values and 64 MiB), as the
// Lua host does, in the same words. Sizes are checked before copying: a
// string is measured before it is converted from UTF-16 (from its length in
// code units, a lower bound on its UTF-8 size), so one far beyond the limit
// is refused without being copied; so are an ordinary object's keys, unless
// the fast path is off (the built-in path lists keys, converting them, then
// measures them). Error paths are cut in
// the middle (dsl.WritePath), so a message stays a few hundred characters
// however deep the value.
package jsvalue
