package eventloop

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/testtime"
)

func TestTimersFireInOrderOfDueTimeThenID(t *testing.T) {
	// The delays are far apart (scaled on a slow machine): the zero-delay
	// timers made after "ten" must still be due before "five" when the
	// machine pauses the script between two setTimeout calls.
	ms := func(n int64) int64 { return testtime.Ms(n) }
	l := newLoop(t, Options{Setup: setupHelpers})
	got := mustRun(t, l, fmt.Sprintf(`new Promise(done => {
		setTimeout(() => log.push('late'), %d);
		setTimeout(() => log.push('ten'), %d);
		setTimeout(() => log.push('five'), %d);
		setTimeout(() => log.push('zero-a'), 0);
		setTimeout(() => log.push('zero-b'));
		setTimeout(() => log.push('negative'), -5);
		setTimeout(() => log.push('nan'), NaN);
		setTimeout(() => log.push('string-0'), 'x');
		setTimeout(() => done(log.join()), %d);
	})`, ms(300), ms(200), ms(100), ms(400)))
	if got != "zero-a,zero-b,negative,nan,string-0,five,ten,late" {
		t.Fatalf("order %v", got)
	}
}

func TestTheTimerHeapBreaksTiesOfDueTimeByID(t *testing.T) {
	due := time.Now()
	var h timerHeap
	for _, id := range []int64{5, 3, 9, 1, 7} {
		heap.Push(&h, &timer{id: id, due: due})
	}
	heap.Push(&h, &timer{id: 2, due: due.Add(time.Millisecond)})
	heap.Push(&h, &timer{id: 8, due: due.Add(-time.Millisecond)})
	var got []int64
	for h.Len() > 0 {
		got = append(got, heap.Pop(&h).(*timer).id)
	}
	if fmt.Sprint(got) != "[8 1 3 5 7 9 2]" {
		t.Fatalf("order %v", got)
	}
}

func TestATimerCreatedByACallbackWaitsForTheNextPass(t *testing.T) {
	l := newLoop(t, Options{Setup: setupHelpers})
	got := mustRun(t, l, `new Promise(done => {
		setTimeout(() => { log.push(1); setTimeout(() => { log.push(3); done(log.join()) }, 0) }, 0);
		setTimeout(() => log.push(2), 0);
	})`)
	if got != "1,2,3" {
		t.Fatalf("order %v", got)
	}
}

func TestMicrotasksDrainBetweenTimerCallbacks(t *testing.T) {
	l := newLoop(t, Options{Setup: setupHelpers})
	got := mustRun(t, l, `new Promise(done => {
		setTimeout(() => { log.push('t1'); Promise.resolve().then(() => log.push('m1')) }, 0);
		setTimeout(() => { log.push('t2'); done(log.join()) }, 0);
	})`)
	if got != "t1,m1,t2" {
		t.Fatalf("order %v", got)
	}
}

func TestSetTimeoutReturnsNumericIDsAndClearTimeoutCancels(t *testing.T) {
	l := newLoop(t, Options{Setup: setupHelpers})
	got := mustRun(t, l, `new Promise(done => {
		const a = setTimeout(() => log.push('a'), 1);
		const b = setTimeout(() => log.push('b'), 1);
		const c = setTimeout(() => log.push('c'), 1);
		clearTimeout(b);
		clearTimeout(b);          // twice: no-op
		clearTimeout(12345);      // unknown id
		clearTimeout('nope');
		clearTimeout(undefined);
		clearTimeout(Symbol('s'));
		clearTimeout({ valueOf() { throw new Error('valueOf called') } });
		setTimeout(() => done([typeof a, b - a, c - b, log.join()].join(' ')), 10);
	})`)
	if got != "number 1 1 a,c" {
		t.Fatalf("got %v", got)
	}
}

func TestSetTimeoutPassesExtraArguments(t *testing.T) {
	l := newLoop(t, Options{})
	got := mustRun(t, l, "new Promise(done => setTimeout((a, b, c) => done([a, b, c].join('/')), 1, 'x', 2, true))")
	if got != "x/2/true" {
		t.Fatalf("got %v", got)
	}
}

func TestSetTimeoutAndQueueMicrotaskRejectANonFunction(t *testing.T) {
	l := newLoop(t, Options{})
	for _, src := range []string{"setTimeout('code', 1)", "queueMicrotask(42)"} {
		_, err := runJS(l, context.Background(), src)
		var je *JSError
		if !errors.As(err, &je) || je.Name != "TypeError" {
			t.Fatalf("%s: got %v", src, err)
		}
	}
}

func TestTheTimerGlobalsLookBuiltIn(t *testing.T) {
	l := newLoop(t, Options{})
	got := mustRun(t, l, `[setTimeout.name, setTimeout.length, clearTimeout.name, queueMicrotask.name,
		Object.keys(globalThis).filter(k => /Timeout|Microtask/.test(k)).length].join()`)
	if got != "setTimeout,2,clearTimeout,queueMicrotask,0" {
		t.Fatalf("got %v", got)
	}
}

func TestAHugeDelayCountsAsOneMillisecondAsInNode(t *testing.T) {
	l := newLoop(t, Options{})
	start := time.Now()
	got := mustRun(t, l, "new Promise(done => setTimeout(() => done('fired'), 2 ** 40))")
	if got != "fired" || time.Since(start) > time.Second {
		t.Fatalf("got %v after %v", got, time.Since(start))
	}
}

func TestATimerCallbackThatThrowsIsReportedAndTheLoopGoesOn(t *testing.T) {
	sink := newErrSink()
	l := newLoop(t, Options{OnError: sink.onError, Setup: setupHelpers})
	got := mustRun(t, l, `new Promise(done => {
		setTimeout(() => { throw new Error('tick') }, 0);
		setTimeout(() => done('next timer ran'), 1);
	})`)
	if got != "next timer ran" {
		t.Fatalf("got %v", got)
	}
	err := sink.next(t)
	var je *JSError
	if !errors.As(err, &je) || je.Message != "tick" || !strings.Contains(err.Error(), "setTimeout callback") {
		t.Fatalf("reported %v", err)
	}
	if l.Broken() {
		t.Fatal("broken")
	}
}

func TestATimerCallbackThatRecursesWithoutBoundIsReportedAndTheLoopGoesOn(t *testing.T) {
	sink := newErrSink()
	l := newLoop(t, Options{OnError: sink.onError})
	mustRun(t, l, "setTimeout(function f(){ return f() }, 0); 0")
	var je *JSError
	if err := sink.next(t); !errors.As(err, &je) || je.Name != "RangeError" {
		t.Fatalf("reported %v", err)
	}
	if v := mustRun(t, l, "2"); v != int64(2) || l.Broken() {
		t.Fatal("loop unusable")
	}
}

func TestQueueMicrotaskRunsInOrderWithPromiseJobsBeforeTimers(t *testing.T) {
	l := newLoop(t, Options{Setup: setupHelpers})
	got := mustRun(t, l, `new Promise(done => {
		setTimeout(() => done(log.join()), 0);
		Promise.resolve().then(() => log.push('p1'));
		queueMicrotask(() => { log.push('m'); queueMicrotask(() => log.push('m2')) });
		Promise.resolve().then(() => log.push('p2'));
		log.push('sync');
	})`)
	if got != "sync,p1,m,p2,m2" {
		t.Fatalf("order %v", got)
	}
}

func TestAMicrotaskThatThrowsIsReported(t *testing.T) {
	sink := newErrSink()
	l := newLoop(t, Options{OnError: sink.onError})
	mustRun(t, l, "queueMicrotask(() => { throw new TypeError('micro') }); 0")
	err := sink.next(t)
	var je *JSError
	if !errors.As(err, &je) || je.Name != "TypeError" || je.Message != "micro" {
		t.Fatalf("reported %v", err)
	}
	mustRun(t, l, "0")
}

func TestAnUnhandledRejectionIsReportedOnceTheMicrotasksDrain(t *testing.T) {
	sink := newErrSink()
	l := newLoop(t, Options{OnError: sink.onError})
	mustRun(t, l, `
		Promise.reject(new Error('lost'));
		const p = Promise.reject(new Error('handled later in the same drain'));
		Promise.resolve().then(() => p.catch(() => {}));
		0`)
	err := sink.next(t)
	if !strings.Contains(err.Error(), "unhandled promise rejection: Error: lost") {
		t.Fatalf("reported %v", err)
	}
	mustRun(t, l, "0")
	time.Sleep(10 * time.Millisecond)
	if errs := sink.all(); len(errs) != 1 {
		t.Fatalf("reported %v", errs)
	}
}
