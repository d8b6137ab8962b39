package hostapi

import (
	"context"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
)

// Fill loads a plugin (at rel) into its pool: start starts the first
// instance, which runs the top level and makes its effects; the pool then
// gets the instances the top level asked for (want), replaying it, and is
// closed with p. When the first instance fails the pool is closed and its
// error returned; when a replay fails the error is the plugin's diagnostic.
func Fill[I hostpool.Instance](ctx context.Context, p *scripting.Plugin, rel string, pool *hostpool.Pool[I], start func(context.Context) (I, error), want func(I) int) error {
	first, err := start(ctx)
	if err != nil {
		pool.Close()
		return err
	}
	if err := pool.Fill(ctx, first, want(first)); err != nil {
		return &scripting.Diagnostic{File: rel, Message: err.Error(), Err: err}
	}
	p.OnClose(pool.Close)
	return nil
}

// Key records the script callback cb of an instance in callbacks under the
// next effect key, and returns the key.
//
// Effects of the top level get keys in order (0, 1, …; seq counts them),
// the same on every instance, which replays the top level. Effects made
// later (topDone), from a call (a registration inside a body), get a key
// unique in the pool from pin, which pins it to the instance that made
// them: the others do not have them.
func Key[V any](callbacks map[int]V, seq *int, topDone bool, pin func() int, cb V) int {
	var k int
	if topDone {
		k = pin()
	} else {
		k = *seq
		*seq++
	}
	callbacks[k] = cb
	return k
}

// Unkey takes back key, the last one [Key] gave, for an effect that was
// not made: a key of the top level is not counted, a dynamic key is
// unpinned.
func Unkey[V any](callbacks map[int]V, seq *int, key int, unpin func(int)) {
	if key < hostpool.FirstDynamicKey {
		*seq-- // not an effect
	} else {
		unpin(key)
	}
	delete(callbacks, key)
}

// Forget drops the callbacks of disposed effects made after the top level
// (the top level's stay, as replays count them) and unpins their keys.
func Forget[V any](callbacks map[int]V, unpin func(int), keys ...int) {
	for _, k := range keys {
		if k >= hostpool.FirstDynamicKey {
			delete(callbacks, k)
			unpin(k)
		}
	}
}
