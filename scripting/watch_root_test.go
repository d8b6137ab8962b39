package scripting

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestTheWatcherWatchesARootAgainOnceItComesBack deletes (or moves away) the
// watched directory and makes it again: the watcher reports the root when it
// goes, again when it is back, and then sees changes inside it as before.
func TestTheWatcherWatchesARootAgainOnceItComesBack(t *testing.T) {
	for _, tc := range []struct {
		name   string
		remove func(t *testing.T, dir string)
	}{
		{"a root deleted and made again is watched again", func(t *testing.T, dir string) {
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
		}},
		{"a root moved away and made again is watched again, not its old self", func(t *testing.T, dir string) {
			if err := os.Rename(dir, dir+".old"); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "scripts")
			write(t, filepath.Join(dir, "a.js"), "1")
			b := startWatcher(t, dir)

			tc.remove(t, dir)
			b.waitFor(t, dir)

			p := filepath.Join(dir, "a.js")
			write(t, p, "2") // makes dir again
			b.waitFor(t, dir)

			// Watched again: a later save is seen on its own.
			write(t, p, "3")
			b.waitFor(t, p)

			// The directory moved away is not watched under the old names.
			if old := dir + ".old"; fileExists(old) {
				write(t, filepath.Join(old, "b.js"), "x")
				write(t, filepath.Join(dir, "c.js"), "x")
				seen := b.waitFor(t, filepath.Join(dir, "c.js"))
				if slices.Contains(seen, filepath.Join(dir, "b.js")) {
					t.Errorf("a write in the moved-away directory was reported under the root: %v", seen)
				}
			}
		})
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
