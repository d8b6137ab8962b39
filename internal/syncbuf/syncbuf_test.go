package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestConcurrentWritesAreAllKept(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 800) {
		t.Fatalf("got %d bytes, want 800", len(got))
	}
}

func TestTakeReturnsWhatWasWrittenAndEmptiesTheBuffer(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("one\n"))
	if got := b.Take(); got != "one\n" {
		t.Fatalf("Take = %q, want %q", got, "one\n")
	}
	_, _ = b.Write([]byte("two\n"))
	if got := b.String(); got != "two\n" {
		t.Fatalf("after Take, String = %q, want only what came after", got)
	}
}
