// Package luavalue moves values across the boundary between a gopher-lua
// state and Go, as lossless JSON (docs/behaviour.md, docs/plugins.md),
// without ever running script code.
//
// That is its one job. [Converter.ToGo] turns a Lua value into the Go form of
// package dsl (nil, bool, float64, string, []any, *dsl.Object) or refuses it
// with a *dsl.SnapshotError naming the path of the offending value;
// [Converter.ToLua] turns the Go form into fresh Lua tables.
//
// # Lua values as JSON
//
//   - dsh.null ([Converter.Null]) is JSON null. Lua nil is absence: a field
//     holding nil is simply not in the table, while nil at the root, or a
//     hole in an array, is refused.
//   - A table whose keys are exactly 1..n (n ≥ 1) is an array; a table with
//     only string keys is an object, its members in sorted key order (Lua
//     tables have none).
//   - An empty table is an object, unless it is marked as an array (by
//     [Converter.MarkArray], which dsh.array{} calls, or because ToLua made it
//     from a JSON array), or it is unmarked and the JSON Schema at its place
//     admits arrays but not objects.
//   - A table marked as an object ([Converter.MarkObject], dsh.object{}, or
//     made from a JSON object) is an object whatever its keys: integer keys
//     within ±2^53 become their decimal strings ({"a"} is {"1":"a"}). A table
//     marked as an array must have the keys 1..n and no others.
//   - Refused: mixed string and number keys (unless marked as an object),
//     holes, number keys that are not 1..n, keys of other types, NaN, ±inf,
//     -0 (as §1.8 refuses it everywhere), functions, userdata other than
//     dsh.null, threads, channels, strings or keys that are not valid UTF-8,
//     tables with a metatable other than the converter's marks, tables that
//     contain themselves, and values beyond [Limits].
//
// # Marks live with the table
//
// The array/object mark is one of two metatables private to the converter,
// shared by every table it marks. The mark is collected with the table (no
// Go-side registry grows across calls), survives the script storing the
// table anywhere, and costs one pointer comparison to read. Each mark has a
// __metatable field ("dsh.array", "dsh.object"), so getmetatable returns that
// string and never the metatable, and setmetatable on a marked table fails
// ("cannot change a protected metatable"): scripts can neither read, change
// nor forge a mark. The marks define no metamethod, so marked tables behave
// as plain tables in Lua.
//
// # No script code runs
//
// ToGo reads a table once, with LTable.ForEach, which walks the table's Go
// slice and maps and never consults a metatable (gopher-lua's own pairs and
// next do not honour __pairs either). A table with any metatable
// other than the two marks is refused before it is read, so __index, __pairs,
// __len, __eq or __tostring are never called; neither is the metatable of
// strings. Both directions are iterative: the Go stack does not grow with the
// depth of the value.
//
// # Limits
//
// Both directions refuse, with a *dsl.SnapshotError wrapping dsl.ErrLimit, a
// value nested deeper, with more values or larger in bytes than dsl.Limits
// allows (by default 100,000 levels, a million values and 64 MiB), as the
// JavaScript host does, in the same words, before copying it. Error paths
// are cut in the middle (dsl.WritePath), so a message stays a few hundred
// characters however deep the value.
//
// A Converter belongs to one *lua.LState and, like it, to one goroutine at a
// time.
package luavalue
