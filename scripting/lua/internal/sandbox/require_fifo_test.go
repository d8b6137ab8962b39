//go:build unix

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// threads counts the OS threads of the test process.
func threads(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip("no /proc/self/task")
	}
	return len(ents)
}

// TestRequireOfAFifoFailsWithoutBlocking: a FIFO (or another file that is
// not regular) in the scripts directory is refused at once: opening it
// must not wait for a writer, which would hold an OS thread per require.
func TestRequireOfAFifoFailsWithoutBlocking(t *testing.T) {
	root := filepath.Join(t.TempDir(), "scripts")
	if err := os.MkdirAll(filepath.Join(root, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, "lib", "fifo.lua"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	L := newState(t, Options{Root: root})
	// The state runs on one goroutine at a time: each require runs here,
	// bounded by a timer so that a blocking open fails the test instead of
	// hanging it.
	require := func() (string, bool) {
		fn, err := Load(L, `require("lib.fifo")`, "test", 0)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 1)
		go func() {
			L.Push(fn)
			err := L.PCall(0, 0, nil)
			if ae, ok := err.(*lua.ApiError); ok {
				got <- lua.LVAsString(ae.Object)
				return
			}
			got <- fmt.Sprint(err)
		}()
		select {
		case msg := <-got:
			return msg, true
		case <-time.After(10 * time.Second):
			return "", false
		}
	}
	want := "test:1: cannot load module 'lib.fifo': lib/fifo.lua is not a regular file"
	t.Run("a FIFO required fails at once, naming the module", func(t *testing.T) {
		msg, ok := require()
		if !ok {
			t.Fatal("require of a FIFO blocked")
		}
		if msg != want {
			t.Errorf("error = %q, want %q", msg, want)
		}
	})
	t.Run("the thread count stays flat over 60 requires", func(t *testing.T) {
		before := threads(t)
		for i := range 60 {
			msg, ok := require()
			if !ok {
				t.Fatalf("require %d blocked", i)
			}
			if !strings.HasSuffix(msg, "is not a regular file") {
				t.Fatalf("require %d: %q", i, msg)
			}
		}
		// The runtime may start a thread or two of its own meanwhile; a
		// leak is one thread per require.
		if after := threads(t); after > before+4 {
			t.Errorf("threads: %d before, %d after 60 requires", before, after)
		}
	})
}
