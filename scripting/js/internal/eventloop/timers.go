package eventloop

import (
	"container/heap"
	"fmt"
	"math"
	"time"

	"github.com/dop251/goja"
)

// maxTimeout is the largest delay honoured, in ms (2^31−1, as in Node and
// browsers); a larger one counts as 1 ms, as in Node.
const maxTimeout = math.MaxInt32

type timer struct {
	id    int64
	due   time.Time
	fn    goja.Callable
	args  []goja.Value
	index int  // in the heap
	owner *run // the Run that set it (see Loop.CallContext)
}

// timerHeap orders timers by due time, then id (creation order).
type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].due.Equal(h[j].due) {
		return h[i].due.Before(h[j].due)
	}
	return h[i].id < h[j].id
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// installTimers defines setTimeout, clearTimeout and queueMicrotask as
// writable, configurable, non-enumerable globals, like built-ins.
func (l *Loop) installTimers() error {
	vm := l.vm
	global := vm.GlobalObject()
	def := func(name string, length int, f func(goja.FunctionCall) goja.Value) error {
		return global.DefineDataProperty(name, l.native(name, length, f), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	}
	if err := def("setTimeout", 2, func(call goja.FunctionCall) goja.Value {
		cb, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(vm.NewTypeError("setTimeout: the callback must be a function"))
		}
		d := timerDelay(call.Argument(1))
		var args []goja.Value
		if len(call.Arguments) > 2 {
			args = append([]goja.Value(nil), call.Arguments[2:]...)
		}
		l.timerN++
		t := &timer{id: l.timerN, due: time.Now().Add(d), fn: cb, args: args, owner: l.owner}
		heap.Push(&l.timers, t)
		l.byID[t.id] = t
		if l.timers[0] == t {
			l.armTimer()
		}
		return vm.ToValue(t.id)
	}); err != nil {
		return err
	}
	if err := def("clearTimeout", 1, func(call goja.FunctionCall) goja.Value {
		if id, ok := timerID(call.Argument(0)); ok {
			if t := l.byID[id]; t != nil {
				delete(l.byID, id)
				heap.Remove(&l.timers, t.index)
				t.fn, t.args = nil, nil
			}
		}
		return goja.Undefined()
	}); err != nil {
		return err
	}
	return def("queueMicrotask", 1, func(call goja.FunctionCall) goja.Value {
		cb := call.Argument(0)
		if _, ok := goja.AssertFunction(cb); !ok {
			panic(vm.NewTypeError("queueMicrotask: the callback must be a function"))
		}
		if _, err := l.microtask(goja.Undefined(), l.resolved, cb); err != nil {
			panic(err) // rethrows an exception, propagates an interrupt
		}
		return goja.Undefined()
	})
}

// timerDelay is ms as a duration: negative or NaN is 0, above 2^31−1 is 1 ms.
// A non-number is converted with ToNumber, as in browsers and Node.
func timerDelay(v goja.Value) time.Duration {
	ms := v.ToFloat()
	switch {
	case math.IsNaN(ms) || ms < 0:
		ms = 0
	case ms > maxTimeout:
		ms = 1
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// timerID reads clearTimeout's argument without running script code: objects
// (and symbols, null, undefined) are not ids.
func timerID(v goja.Value) (int64, bool) {
	switch v.(type) {
	case *goja.Object, *goja.Symbol:
		return 0, false
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return 0, false
	}
	f := v.ToFloat()
	id := int64(f)
	if float64(id) != f || id <= 0 {
		return 0, false
	}
	return id, true
}

// runTimers fires the timers due now, earliest first, each in its own entry.
// Timers created during this pass wait for the next one, even if already due.
func (l *Loop) runTimers() {
	if len(l.timers) == 0 {
		return
	}
	now, limit := time.Now(), l.timerN
	for len(l.timers) > 0 && !l.stopped.Load() {
		t := l.timers[0]
		if t.due.After(now) || t.id > limit {
			break
		}
		heap.Pop(&l.timers)
		delete(l.byID, t.id)
		l.cur, l.owner = func() { l.fire(t) }, t.owner
		t.owner = nil
		l.enter()
		l.afterEnter()
		l.owner = nil
	}
	if !l.stopped.Load() {
		l.armTimer()
	}
}

func (l *Loop) fire(t *timer) {
	fn, args := t.fn, t.args
	t.fn, t.args = nil, nil
	if _, err := fn(goja.Undefined(), args...); err != nil {
		err = l.convert(err)
		if !l.stopped.Load() {
			l.report(fmt.Errorf("eventloop: setTimeout callback: %w", err))
		}
	}
}

// armTimer points the loop's single time.Timer at the earliest due timer.
func (l *Loop) armTimer() {
	if len(l.timers) == 0 {
		l.tmr.Stop()
		return
	}
	l.tmr.Reset(time.Until(l.timers[0].due))
}

func (l *Loop) dropTimers() {
	if l.tmr != nil {
		l.tmr.Stop()
	}
	for _, t := range l.timers {
		t.fn, t.args = nil, nil
	}
	l.timers = nil
	clear(l.byID)
}
