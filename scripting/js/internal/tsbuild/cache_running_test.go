package tsbuild

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentMissesOnOneInputCompileOnce: a load abandoned at its
// deadline leaves esbuild running; a retry of the same file (a reload)
// waits for that compile instead of starting a second one.
func TestConcurrentMissesOnOneInputCompileOnce(t *testing.T) {
	c := newCache(8)
	var compiles atomic.Int32
	started := make(chan struct{})
	release := make(chan struct{})
	c.compile = func(path string, src []byte) (*Output, error) {
		compiles.Add(1)
		if path == "same.ts" {
			close(started) // once: a second compile of same.ts panics here
			<-release
		}
		return compile(path, src)
	}
	src := []byte("export const n: number = 1;\n")
	var wg sync.WaitGroup
	outs := make([]*Output, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		outs[0], _ = c.transform("same.ts", src)
	}()
	<-started
	for i := 1; i < len(outs); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], _ = c.transform("same.ts", src)
		}()
	}
	other, err := c.transform("other.ts", []byte("export const m = 2;\n")) // another input does not wait
	close(release)
	wg.Wait()
	if err != nil || other == nil {
		t.Fatalf("another input: %v", err)
	}
	if n := compiles.Load(); n != 2 {
		t.Errorf("%d compiles, want 2 (one per input)", n)
	}
	for i, out := range outs {
		if out == nil || out != outs[0] {
			t.Fatalf("transform %d returned %p, want the first's %p", i, out, outs[0])
		}
	}
}
