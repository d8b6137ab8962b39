// Package hostpool keeps a plugin's interpreter instances for the script
// hosts (JavaScript and Lua), the way database/sql keeps connection pooling
// out of its drivers: a host supplies how to start an instance and how to
// tell and stop a broken one; the pool does the rest.
//
// # Slots and keys
//
// A plugin has one or more slots, each holding an instance that ran the
// plugin's top level (the first one loaded it; the others replayed it). The
// callbacks the top level registered have keys 0, 1, … that are the same on
// every instance, so a call for such a key goes to the least busy healthy
// instance. Callbacks registered later, from a call, exist on the instance
// that made them only: [Pool.Pin] gives them a key from [FirstDynamicKey]
// on, served by that instance alone, and [ErrGone] once it was replaced.
//
// # Replacement
//
// An instance that broke (a deadline interrupted it, a fault stopped it) is
// replaced, and replacing never blocks other calls and never waits on the
// broken instance:
//   - the broken instance is abandoned ([Instance.Abandon]), which stops it
//     without waiting; a background reaper waits a bounded time for its
//     goroutines to exit and logs one that does not (a script stuck in Go
//     code, a host function ignoring its context);
//   - the fresh instance replays the top level on a goroutine of its own,
//     outside the pool's lock, one replacement per slot at a time;
//   - a call that finds no healthy instance waits for a replacement under
//     its own context, so its deadline still fires, while calls that find a
//     healthy instance in another slot go there at once.
//
// [Pool.Close] (the plugin's disposal) abandons every instance and waits for
// them a bounded time only, so it cannot deadlock when it runs on one of the
// instance's own goroutines (the last call of a disposed plugin returning
// from a nested tools.call).
package hostpool
