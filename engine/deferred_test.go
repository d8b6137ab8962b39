package engine

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

func TestDeferContextIsBounded(t *testing.T) {
	source := dsl.NewObject(dsl.Member{Key: "kind", Value: "user"})
	note := func(text string) Message { return NewUserMessage([]Block{Text(text)}, source) }
	t.Run("the message after the thousandth fails and is not attached", func(t *testing.T) {
		r := &Run{}
		for i := range MaxDeferredMessages {
			if err := r.DeferContext(note("n")); err != nil {
				t.Fatalf("message %d: %v", i+1, err)
			}
		}
		err := r.DeferContext(note("one too many"))
		if err == nil || err.Error() != "deferred context: a call may defer at most 1000 messages" {
			t.Errorf("got %v", err)
		}
		if got, _ := r.state(); len(got) != MaxDeferredMessages {
			t.Errorf("%d messages attached", len(got))
		}
	})
	t.Run("messages passing 64 MiB in all fail at the one that passes it", func(t *testing.T) {
		r := &Run{}
		big := strings.Repeat("x", 40<<20)
		if err := r.DeferContext(note(big)); err != nil {
			t.Fatal(err)
		}
		err := r.DeferContext(note(big[:30<<20]))
		if err == nil || err.Error() != "deferred context: a call may defer at most 67108864 bytes of messages" {
			t.Errorf("got %v", err)
		}
		if err := r.DeferContext(note("a small one still fits")); err != nil {
			t.Errorf("a small message after the refused one: %v", err)
		}
		if got, _ := r.state(); len(got) != 2 {
			t.Errorf("%d messages attached, want 2", len(got))
		}
	})
	t.Run("a message is counted by its strings and values", func(t *testing.T) {
		m := note("abc")
		// id and role, then six values: the content array, its block
		// {type: "text", text: "abc"} and two strings, the source
		// {kind: "user"} and its string; and the keys.
		want := len(m.ID) + len("user") + 6*dsl.ValueBytes + len("type") + len("text") + len("text") + len("abc") + len("kind") + len("user")
		if got := deferredBytes(m, MaxDeferredBytes); got != want {
			t.Errorf("deferredBytes = %d, want %d", got, want)
		}
	})
}
