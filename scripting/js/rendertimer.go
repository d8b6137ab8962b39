package js

import (
	"sync/atomic"
	"time"
)

// renderTimer is an instance's deadline timer for a body's prerender (see
// prerender), reused from one prerender to the next while each stops it
// before it fires: a prerender then allocates no timer. It is used on the
// instance's loop only, where one prerender runs at a time.
type renderTimer struct {
	t *time.Timer
	// The call whose prerender the timer is armed for; each timer has its
	// own, so a callback that fired late reads only its own call.
	cur *atomic.Pointer[callState]
}

// arm starts st's prerender deadline d: when it passes, st is cancelled
// with the deadline of the callback running (st.rendering's cur).
func (rt *renderTimer) arm(st *callState, d time.Duration) {
	if rt.t != nil {
		rt.cur.Store(st)
		rt.t.Reset(d)
		return
	}
	cur := new(atomic.Pointer[callState])
	cur.Store(st)
	rt.cur = cur
	rt.t = time.AfterFunc(d, func() {
		if st := cur.Load(); st != nil {
			if r := st.rendering.Load(); r != nil {
				st.cancel(r.cur.Load())
			}
		}
	})
}

// disarm stops the deadline arm started. A timer that already fired (its
// callback may be running yet, for its own call) is left to it, and the
// next prerender makes another.
func (rt *renderTimer) disarm() {
	if rt.t.Stop() {
		rt.cur.Store(nil)
		return
	}
	*rt = renderTimer{}
}
