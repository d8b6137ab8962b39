package warmpool

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter builds increasing ints and records what was disposed.
type counter struct {
	built    atomic.Int64
	disposed atomic.Int64
	fail     atomic.Bool
}

func (c *counter) build() (int, error) {
	if c.fail.Load() {
		return 0, errors.New("cannot build")
	}
	return int(c.built.Add(1)), nil
}

func (c *counter) dispose(int) { c.disposed.Add(1) }

func waitIdle(t *testing.T, p *Pool[int], n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(p.Idle()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("the pool holds %d idle values, want %d", len(p.Idle()), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPool(t *testing.T) {
	t.Run("the builder fills the pool ahead of need and a value is handed out once", func(t *testing.T) {
		c := &counter{}
		p := New(2, c.build, c.dispose, nil)
		defer p.Close()
		waitIdle(t, p, 2)
		seen := map[int]bool{}
		for range 5 {
			v, err := p.Take()
			if err != nil {
				t.Fatal(err)
			}
			if seen[v] {
				t.Fatalf("value %d handed out twice", v)
			}
			seen[v] = true
			p.Refill()
		}
	})
	t.Run("without a size every Take builds", func(t *testing.T) {
		c := &counter{}
		p := New(0, c.build, c.dispose, nil)
		defer p.Close()
		if v, err := p.Take(); err != nil || v != 1 {
			t.Fatalf("got %d, %v", v, err)
		}
		if n := len(p.Idle()); n != 0 {
			t.Fatalf("%d idle values, want none", n)
		}
	})
	t.Run("an idle value that is no longer usable is disposed of, and another built", func(t *testing.T) {
		c := &counter{}
		p := New(1, c.build, c.dispose, func(v int) bool { return v != 1 })
		defer p.Close()
		waitIdle(t, p, 1)
		v, err := p.Take()
		if err != nil || v == 1 {
			t.Fatalf("got %d, %v", v, err)
		}
		if c.disposed.Load() != 1 {
			t.Fatalf("%d disposed, want 1", c.disposed.Load())
		}
	})
	t.Run("a build that fails is Take's error", func(t *testing.T) {
		c := &counter{}
		c.fail.Store(true)
		p := New(1, c.build, c.dispose, nil)
		defer p.Close()
		if _, err := p.Take(); err == nil || err.Error() != "cannot build" {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("Close stops the builder, disposes of the idle values, and may be called again", func(t *testing.T) {
		c := &counter{}
		p := New(3, c.build, c.dispose, nil)
		waitIdle(t, p, 3)
		p.Close()
		p.Close()
		select {
		case <-p.Done():
		default:
			t.Fatal("the builder runs after Close")
		}
		if c.disposed.Load() != 3 {
			t.Fatalf("%d disposed, want 3", c.disposed.Load())
		}
	})
}
