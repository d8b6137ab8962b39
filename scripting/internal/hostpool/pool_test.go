package hostpool_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is an instance whose goroutines exit when the test says so; the
// pool's logic does not depend on an interpreter (the hosts' own tests and
// package hosttest run it with real ones).
type fake struct {
	id        int
	effects   int
	broken    atomic.Bool
	abandoned atomic.Bool
	exit      chan struct{} // closed when its "goroutines" have exited
	exitOnce  sync.Once
}

func (f *fake) Broken() bool { return f.broken.Load() }
func (f *fake) Abandon() <-chan struct{} {
	f.abandoned.Store(true)
	return f.exit
}
func (f *fake) Effects() int { return f.effects }
func (f *fake) stop()        { f.exitOnce.Do(func() { close(f.exit) }) }

// starter makes fakes: started counts Start calls, gate (when set) holds
// each Start until it is closed or ctx ends, fail makes them fail.
type starter struct {
	mu      sync.Mutex
	n       int
	all     []*fake
	effects int
	gate    chan struct{}
	fail    error
	stuck   bool // new fakes never exit until the test's cleanup
}

func (s *starter) start(ctx context.Context) (*fake, error) {
	s.mu.Lock()
	gate, fail := s.gate, s.fail
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	f := &fake{id: s.n, effects: s.effects, exit: make(chan struct{})}
	if !s.stuck {
		f.stop()
	}
	s.all = append(s.all, f)
	return f, nil
}

func (s *starter) started() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *starter) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.all {
		f.stop()
	}
}

// newPool is a pool of n fakes (the first made by the test).
func newPool(t *testing.T, s *starter, n int) (*hostpool.Pool[*fake], *fake) {
	t.Helper()
	p := hostpool.New(hostpool.Options[*fake]{Start: s.start, CloseWait: 20 * time.Millisecond, ReapWait: time.Second})
	first := &fake{id: 0, effects: s.effects, exit: make(chan struct{})}
	if !s.stuck {
		first.stop()
	}
	s.mu.Lock()
	s.all = append(s.all, first)
	s.mu.Unlock()
	if err := p.Fill(context.Background(), first, n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		s.stopAll()
	})
	return p, first
}

func get(t *testing.T, p *hostpool.Pool[*fake], key int) (*fake, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, release, err := p.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return f, release
}

// eventually polls cond for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("never: %s", what)
}

func TestACallGoesToTheLeastBusyInstance(t *testing.T) {
	s := &starter{}
	p, _ := newPool(t, s, 3)
	a, ra := get(t, p, 0)
	b, rb := get(t, p, 0)
	c, rc := get(t, p, 0)
	if a == b || b == c || a == c {
		t.Fatalf("three calls in flight share an instance: %d %d %d", a.id, b.id, c.id)
	}
	rb()
	if d, rd := get(t, p, 0); d != b {
		t.Errorf("the call went to instance %d, not the idle %d", d.id, b.id)
	} else {
		rd()
	}
	ra()
	rc()
}

func TestABrokenInstanceIsReplacedWithoutWaitingForIt(t *testing.T) {
	s := &starter{stuck: true}
	p, first := newPool(t, s, 1)
	first.broken.Store(true) // and its goroutine is stuck: Abandon's channel stays open
	start := time.Now()
	f, release := get(t, p, 0)
	defer release()
	if f == first || !first.abandoned.Load() {
		t.Errorf("got instance %d; the broken one abandoned: %v", f.id, first.abandoned.Load())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the replacement took %v", d)
	}
}

func TestACallThatFindsNoHealthyInstanceWaitsUnderItsOwnContext(t *testing.T) {
	s := &starter{}
	p, first := newPool(t, s, 1)
	s.gate = make(chan struct{}) // replacements hang until the gate opens
	first.broken.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, _, err := p.Get(ctx, 0)
	if err == nil || err.Error() != "waiting for a fresh instance of the plugin: context deadline exceeded" || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the call ended after %v", d)
	}
	t.Run("and one replacement per slot is under way however many calls wait", func(t *testing.T) {
		var wg sync.WaitGroup
		got := make(chan *fake, 8)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f, release, err := p.Get(context.Background(), 0)
				if err != nil {
					t.Error(err)
					return
				}
				release()
				got <- f
			}()
		}
		time.Sleep(20 * time.Millisecond)
		close(s.gate)
		wg.Wait()
		close(got)
		for f := range got {
			if f.id != 1 {
				t.Errorf("a call was served by instance %d", f.id)
			}
		}
		if n := s.started(); n != 1 {
			t.Errorf("%d instances were started", n)
		}
	})
}

func TestACallUsesAHealthySlotWhileAnotherIsReplaced(t *testing.T) {
	s := &starter{}
	p, first := newPool(t, s, 2)
	s.gate = make(chan struct{})
	defer close(s.gate)
	first.broken.Store(true)
	for range 3 {
		f, release := get(t, p, 0)
		if f == first {
			t.Fatal("a call went to the broken instance")
		}
		release()
	}
}

func TestFailedReplacements(t *testing.T) {
	t.Run("a call fails when every replacement it waited for failed", func(t *testing.T) {
		s := &starter{}
		p, first := newPool(t, s, 1)
		s.fail = errors.New("boom")
		first.broken.Store(true)
		_, _, err := p.Get(context.Background(), 0)
		if !errors.Is(err, hostpool.ErrNoInstance) || err.Error() != "the plugin has no instance able to serve (its fresh instances failed to start)" {
			t.Errorf("err %v", err)
		}
		s.mu.Lock()
		s.fail = nil
		s.mu.Unlock()
		if f, release := get(t, p, 0); f.id != 1 {
			t.Errorf("the next call got instance %d", f.id)
		} else {
			release()
		}
	})
	t.Run("a replay that makes other registrations than the first fails the load", func(t *testing.T) {
		s := &starter{effects: 2}
		p := hostpool.New(hostpool.Options[*fake]{Start: s.start})
		first := &fake{effects: 3, exit: make(chan struct{})}
		first.stop()
		err := p.Fill(context.Background(), first, 2)
		if err == nil || err.Error() != "instance 2 of 2: the instance made 2 registrations at top level, not 3 as the first did" {
			t.Errorf("err %v", err)
		}
		if !first.abandoned.Load() {
			t.Error("the first instance of a failed load was not stopped")
		}
		if _, _, err := p.Get(context.Background(), 0); !errors.Is(err, scripting.ErrDisposed) {
			t.Errorf("a call after a failed load: %v", err)
		}
	})
}

func TestPins(t *testing.T) {
	s := &starter{}
	p, first := newPool(t, s, 2)
	other := p.Instances()[1]
	k := p.Pin(other)
	if k < hostpool.FirstDynamicKey {
		t.Fatalf("key %d", k)
	}
	for range 3 {
		f, release := get(t, p, k)
		if f != other {
			t.Fatalf("the pinned key went to instance %d", f.id)
		}
		release()
	}
	t.Run("a pinned key is gone once its instance was replaced", func(t *testing.T) {
		other.broken.Store(true)
		if f, release := get(t, p, 0); f != first {
			t.Errorf("got %d", f.id)
		} else {
			release()
		}
		if _, _, err := p.Get(context.Background(), k); err == nil || err.Error() != "the script callback is gone (it was registered from a call on an instance that was since replaced)" {
			t.Errorf("err %v", err)
		}
		if n := p.Pins(); n != 0 {
			t.Errorf("%d pins kept", n)
		}
	})
	t.Run("Unpin forgets a key", func(t *testing.T) {
		k := p.Pin(first)
		p.Unpin(k)
		if _, _, err := p.Get(context.Background(), k); !errors.Is(err, hostpool.ErrGone) {
			t.Errorf("err %v", err)
		}
	})
}

func TestClose(t *testing.T) {
	t.Run("Close does not wait for an instance stuck in Go code beyond CloseWait", func(t *testing.T) {
		s := &starter{stuck: true}
		p, _ := newPool(t, s, 3)
		f, release := get(t, p, 0)
		defer release()
		start := time.Now()
		p.Close()
		if d := time.Since(start); d > time.Second {
			t.Errorf("Close took %v", d)
		}
		if !f.abandoned.Load() {
			t.Error("an instance in use was not abandoned")
		}
		if _, _, err := p.Get(context.Background(), 0); !errors.Is(err, scripting.ErrDisposed) || err.Error() != "the plugin has been disposed" {
			t.Errorf("err %v", err)
		}
	})
	t.Run("Close wakes the calls that wait for a replacement", func(t *testing.T) {
		s := &starter{}
		p, first := newPool(t, s, 1)
		s.gate = make(chan struct{})
		first.broken.Store(true)
		errc := make(chan error, 1)
		go func() {
			_, _, err := p.Get(context.Background(), 0)
			errc <- err
		}()
		time.Sleep(20 * time.Millisecond)
		p.Close()
		select {
		case err := <-errc:
			if !errors.Is(err, scripting.ErrDisposed) {
				t.Errorf("err %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the waiting call was not woken")
		}
	})
	t.Run("a call ending on a broken instance starts its replacement", func(t *testing.T) {
		s := &starter{}
		p, first := newPool(t, s, 1)
		f, release := get(t, p, 0)
		if f != first {
			t.Fatal("not the first")
		}
		first.broken.Store(true)
		release()
		eventually(t, "a fresh instance is started", func() bool { return s.started() == 1 })
		if !first.abandoned.Load() {
			t.Error("the broken instance was not abandoned")
		}
		if f, release := get(t, p, 0); f.id != 1 {
			t.Errorf("the next call got instance %d", f.id)
		} else {
			release()
		}
	})
}

// breaking is a fake that says when it breaks (hostpool.Breaker).
type breaking struct {
	fake
	breaks chan struct{}
}

func (b *breaking) Breaks() <-chan struct{} { return b.breaks }

func newBreaking(id int) *breaking {
	b := &breaking{fake: fake{id: id, exit: make(chan struct{})}, breaks: make(chan struct{})}
	b.stop()
	return b
}

func TestAnInstanceThatBreaksWhileIdleIsRetiredAtOnce(t *testing.T) {
	var started atomic.Int32
	p := hostpool.New(hostpool.Options[*breaking]{
		Start: func(context.Context) (*breaking, error) {
			return newBreaking(int(started.Add(1))), nil
		},
		CloseWait: 20 * time.Millisecond,
	})
	first := newBreaking(0)
	if err := p.Fill(context.Background(), first, 1); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	first.broken.Store(true)
	close(first.breaks) // no call is made: the pool must notice by itself
	eventually(t, "the broken instance is abandoned and replaced", func() bool {
		return first.abandoned.Load() && started.Load() == 1 && len(p.Instances()) == 1 && p.Instances()[0] != first
	})
}
