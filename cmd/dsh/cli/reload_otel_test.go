package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/syncbuf"
)

// TestWatchTracesEachReload runs dsh watch with the console exporter: the
// initial load and a broken edit are each a root dsh.reload span on stderr,
// naming the plugin and the outcome.
func TestWatchTracesEachReload(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	t.Setenv("OTEL_SERVICE_NAME", "")
	scripts := writePlugin(t, "greet.js", greetPlugin)
	inR, inW := io.Pipe()
	defer inW.Close()
	var stdout, stderr syncbuf.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"--scripts", scripts, "--memory-limit", "0", "watch", "--debounce", "20ms"}, inR, &stdout, &stderr)
	}()
	waitForText := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(stderr.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("stderr never said %q:\n%s", want, stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitForText("dsh: watching")
	if err := os.WriteFile(filepath.Join(scripts, "greet.js"), []byte("const x = {;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForText("reload failed")
	inW.Close()
	if c := <-code; c != exitOK {
		t.Fatalf("status %d, stderr:\n%s", c, stderr.String())
	}
	var got []string
	for _, s := range spanLines(t, stderr.String()) {
		if s.Name != "dsh.reload" {
			continue
		}
		if s.Parent.SpanID != "0000000000000000" {
			t.Errorf("a reload span has the parent %s, want none", s.Parent.SpanID)
		}
		var attrs []string
		for _, a := range s.Attributes {
			attrs = append(attrs, a.Key+"="+a.Value.Value.(string))
		}
		got = append(got, strings.Join(attrs, " "))
	}
	want := []string{
		"dsh.plugin=greet.js dsh.reload.outcome=loaded",
		"dsh.plugin=greet.js dsh.reload.outcome=failed error.type=load",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reload spans\n got %q\nwant %q", got, want)
	}
}
