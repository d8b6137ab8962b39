package hostapi

import (
	"runtime"
	"sync"
	"weak"

	"github.com/dsh-go/dsh/engine"
)

// Tokens maps the engine's tokens to the script values standing for them,
// one per token. Entries are keyed weakly: once the engine drops a token
// (its call is long settled), a cleanup forgets its value, so the map does
// not grow with every call ever made. The zero value is ready to use; it
// is safe for concurrent use, as the cleanups run on other goroutines.
type Tokens[V any] struct {
	mu sync.Mutex
	m  map[weak.Pointer[engine.Token]]V
}

// Get returns t's value, made by newV (called without the lock held) the
// first time.
func (ts *Tokens[V]) Get(t *engine.Token, newV func() V) V {
	key := weak.Make(t)
	ts.mu.Lock()
	v, ok := ts.m[key]
	ts.mu.Unlock()
	if ok {
		return v
	}
	v = newV()
	ts.mu.Lock()
	if ts.m == nil {
		ts.m = map[weak.Pointer[engine.Token]]V{}
	}
	ts.m[key] = v
	ts.mu.Unlock()
	runtime.AddCleanup(t, func(k weak.Pointer[engine.Token]) {
		ts.mu.Lock()
		delete(ts.m, k)
		ts.mu.Unlock()
	}, key)
	return v
}

// Len is the number of tokens remembered.
func (ts *Tokens[V]) Len() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.m)
}
