package hostapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
	"github.com/dsh-go/dsh/scripting/internal/hostpool"
)

// obj parses a JSON object for a test.
func obj(t *testing.T, s string) *dsl.Object {
	t.Helper()
	v, err := dsl.Unmarshal([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := v.(*dsl.Object)
	if !ok {
		t.Fatalf("%s is not an object", s)
	}
	return o
}

// jsonOf marshals a test's value.
func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := dsl.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOptionDefaults(t *testing.T) {
	t.Run("a zero listener timeout and grace take the defaults", func(t *testing.T) {
		if got := hostapi.ListenerTimeout(0); got != 5*time.Second {
			t.Errorf("ListenerTimeout(0) = %v", got)
		}
		if got := hostapi.Grace(-time.Second); got != 100*time.Millisecond {
			t.Errorf("Grace(-1s) = %v", got)
		}
	})
	t.Run("set values are kept", func(t *testing.T) {
		if got := hostapi.ListenerTimeout(time.Second); got != time.Second {
			t.Errorf("ListenerTimeout(1s) = %v", got)
		}
		if got := hostapi.Grace(time.Millisecond); got != time.Millisecond {
			t.Errorf("Grace(1ms) = %v", got)
		}
	})
	t.Run("a nil logger discards and a set one is kept", func(t *testing.T) {
		hostapi.Logger(nil).Info("dropped")
		var buf bytes.Buffer
		l := slog.New(slog.NewTextHandler(&buf, nil))
		if hostapi.Logger(l) != l {
			t.Error("Logger(l) is not l")
		}
	})
}

func TestTimedOutNamesTheCallAndItsDeadline(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{5 * time.Second, "a tools/result observer timed out after 5000ms"},
		{1500 * time.Microsecond, "a tools/result observer timed out after 1.5ms"},
	} {
		t.Run(c.want, func(t *testing.T) {
			var err error = &hostapi.TimedOut{What: "a tools/result observer", D: c.d}
			if err.Error() != c.want {
				t.Errorf("got %q", err.Error())
			}
		})
	}
}

func TestInstanceCount(t *testing.T) {
	const bad = "instances must be an integer from 1 to 64"
	for _, c := range []struct {
		name string
		f    float64
		ok   bool
		want int
		err  string
	}{
		{"one is accepted", 1, true, 1, ""},
		{"the bound is accepted", 64, true, 64, ""},
		{"zero is refused", 0, true, 0, bad},
		{"over the bound is refused", 65, true, 0, bad},
		{"a fraction is refused", 1.5, true, 0, bad},
		{"a non-number is refused", 2, false, 0, bad},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := hostapi.InstanceCount(c.f, c.ok)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || n != c.want {
				t.Fatalf("= %d, %v; want %d", n, err, c.want)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	for _, c := range []struct {
		name, in    string
		allow, deny []string
		err         string
	}{
		{name: "both lists are read", in: `{"allow":["a","b"],"deny":["c"]}`, allow: []string{"a", "b"}, deny: []string{"c"}},
		{name: "an empty object filters nothing", in: `{}`},
		{name: "an allow that is not an array is refused", in: `{"allow":"a"}`, err: "tools.restrict(): allow must be an array of tool names"},
		{name: "a deny holding a number is refused", in: `{"deny":["a",1]}`, err: "tools.restrict(): deny must be an array of tool names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := hostapi.Filter(obj(t, c.in))
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(f.Allow, ",") != strings.Join(c.allow, ",") || strings.Join(f.Deny, ",") != strings.Join(c.deny, ",") {
				t.Errorf("got %+v", f)
			}
		})
	}
	t.Run("a nil object filters nothing", func(t *testing.T) {
		f, err := hostapi.Filter(nil)
		if err != nil || f.Allow != nil || f.Deny != nil {
			t.Errorf("got %+v, %v", f, err)
		}
	})
}

func TestDeferredMessage(t *testing.T) {
	t.Run("a message without a source comes from the plugin", func(t *testing.T) {
		m, err := hostapi.DeferredMessage(obj(t, `{"content":[{"type":"text","text":"hi"}]}`), "p.js")
		if err != nil {
			t.Fatal(err)
		}
		if m.Role != "user" || jsonOf(t, m.Source) != `{"kind":"plugin","plugin":"p.js"}` || len(m.Content) != 1 {
			t.Errorf("got %+v", m)
		}
	})
	t.Run("a whole message that is not the user's is refused", func(t *testing.T) {
		_, err := hostapi.DeferredMessage(obj(t, `{"id":"m1","role":"assistant","content":[],"source":{"kind":"user"}}`), "p.js")
		if err == nil || err.Error() != "a deferred context message must have the user role" {
			t.Errorf("err = %v", err)
		}
	})
}

func TestListenerValues(t *testing.T) {
	root := engine.NewAgent("root", nil)
	child := engine.NewAgent("child", root)
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"a change names its kind, agent and tool", hostapi.ChangeJSON(engine.Change{Kind: engine.ChangeRegister, Agent: child, Name: "greet"}), `{"kind":"register","agent":"child","name":"greet"}`},
		{"a global change has no agent", hostapi.ChangeJSON(engine.Change{Kind: engine.ChangeLift}), `{"kind":"lift"}`},
		{"an agent carries its parents", hostapi.AgentJSON(child), `{"id":"child","parent":{"id":"root"}}`},
		{"no agent is null", hostapi.AgentJSON(nil), `null`},
		{"a summary with metadata has meta", hostapi.SummaryJSON(engine.ResultSummary{IsError: true, HasMeta: true, Meta: "m"}), `{"content":[],"isError":true,"meta":"m"}`},
		{"a summary without metadata has none", hostapi.SummaryJSON(engine.ResultSummary{}), `{"content":[],"isError":false}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := jsonOf(t, c.v); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestErrorsOfScriptValues(t *testing.T) {
	why := errors.New("why")
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"an invalid result names the wrapper", hostapi.InvalidResult(why), "tools/execute wrapper returned an invalid result: why"},
		{"an invalid decision names the event", hostapi.InvalidDecision(hostapi.PreExecute, why), "tools/pre-execute listener returned an invalid decision: why"},
		{"a schema error says it is not lossless", hostapi.SchemaError(why), "unsupported JSON schema: schema is not lossless JSON data: why"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.err.Error() != c.want {
				t.Errorf("got %q", c.err.Error())
			}
		})
	}
}

func TestBodyValue(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	t.Run("a value over a limit is a snapshot failure", func(t *testing.T) {
		err := dsl.DepthError("value", 3)
		v := hostapi.BodyValue(log, "greet", err)
		f, ok := v.(engine.SnapshotFailure)
		if !ok || !errors.Is(f.Err, dsl.ErrLimit) {
			t.Errorf("got %#v", v)
		}
	})
	t.Run("any other failure is a non-lossless value, logged", func(t *testing.T) {
		buf.Reset()
		if v := hostapi.BodyValue(log, "greet", errors.New("a function")); v != (hostapi.NonLossless{}) {
			t.Errorf("got %#v", v)
		}
		if !strings.Contains(buf.String(), `tool \"greet\" returned a value that is not lossless JSON: a function`) {
			t.Errorf("logged %s", buf.String())
		}
	})
}

func TestKeys(t *testing.T) {
	pins := map[int]bool{}
	next := hostpool.FirstDynamicKey
	pin := func() int { k := next; next++; pins[k] = true; return k }
	unpin := func(k int) { delete(pins, k) }
	callbacks := map[int]string{}
	seq := 0

	t.Run("the top level's keys count up from zero", func(t *testing.T) {
		a := hostapi.Key(callbacks, &seq, false, pin, "a")
		b := hostapi.Key(callbacks, &seq, false, pin, "b")
		if a != 0 || b != 1 || seq != 2 || callbacks[1] != "b" {
			t.Fatalf("keys %d, %d, seq %d", a, b, seq)
		}
	})
	t.Run("a key taken back is not counted", func(t *testing.T) {
		c := hostapi.Key(callbacks, &seq, false, pin, "c")
		hostapi.Unkey(callbacks, &seq, c, unpin)
		if seq != 2 || len(callbacks) != 2 {
			t.Fatalf("seq %d, callbacks %v", seq, callbacks)
		}
	})
	t.Run("later keys are pinned, and forgotten with their callbacks", func(t *testing.T) {
		d := hostapi.Key(callbacks, &seq, true, pin, "d")
		if !pins[d] || seq != 2 || callbacks[d] != "d" {
			t.Fatalf("key %d, pins %v, seq %d", d, pins, seq)
		}
		hostapi.Forget(callbacks, unpin, 0, d)
		if pins[d] || len(callbacks) != 2 || callbacks[0] != "a" {
			t.Fatalf("after Forget: pins %v, callbacks %v", pins, callbacks)
		}
	})
	t.Run("a pinned key taken back is unpinned", func(t *testing.T) {
		e := hostapi.Key(callbacks, &seq, true, pin, "e")
		hostapi.Unkey(callbacks, &seq, e, unpin)
		if pins[e] || seq != 2 || len(callbacks) != 2 {
			t.Fatalf("pins %v, seq %d, callbacks %v", pins, seq, callbacks)
		}
	})
}

func TestTokens(t *testing.T) {
	var ts hostapi.Tokens[*int]
	made := 0
	newV := func() *int { made++; return new(int) }

	t.Run("a token gets one value", func(t *testing.T) {
		tok := &engine.Token{}
		first, again := ts.Get(tok, newV), ts.Get(tok, newV)
		if first != again || made != 1 {
			t.Fatalf("made %d values for one token", made)
		}
		if ts.Get(&engine.Token{}, newV) == ts.Get(tok, newV) {
			t.Fatal("two tokens share a value")
		}
		runtime.KeepAlive(tok)
	})
	t.Run("dropped tokens are forgotten", func(t *testing.T) {
		for n := 0; n < 100 && ts.Len() > 0; n++ {
			runtime.GC()
			time.Sleep(time.Millisecond) // let the cleanups run
		}
		if n := ts.Len(); n != 0 {
			t.Fatalf("%d tokens still remembered", n)
		}
	})
}

func TestSetWeakSweepsCollectedKeys(t *testing.T) {
	type key [64]byte // not tiny-allocated, so collected alone
	m := map[weak.Pointer[key]]string{}
	swept := 0
	kept := new(key)
	hostapi.SetWeak(m, &swept, kept, "kept")
	for n := range 200 {
		hostapi.SetWeak(m, &swept, new(key), "dropped")
		if n%16 == 0 {
			runtime.GC()
		}
	}
	if len(m) >= 200 {
		t.Fatalf("%d entries after 201 sets: collected keys were not swept", len(m))
	}
	if m[weak.Make(kept)] != "kept" {
		t.Fatal("a live key was swept")
	}
	runtime.KeepAlive(kept)
}

func TestLogLevels(t *testing.T) {
	for _, c := range []struct{ level, want string }{
		{"debug", "level=DEBUG"}, {"warn", "level=WARN"}, {"error", "level=ERROR"}, {"info", "level=INFO"}, {"loud", "level=INFO"},
	} {
		t.Run(c.level+" logs at "+c.want, func(t *testing.T) {
			var buf bytes.Buffer
			l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			hostapi.Log(context.Background(), l, c.level, "hello", []any{"k", 1})
			if got := buf.String(); !strings.Contains(got, c.want+" msg=hello k=1") {
				t.Errorf("logged %q", got)
			}
		})
	}
}

// ctxHandler records the value its records' ctx holds under ctxKey.
type ctxHandler struct {
	slog.Handler
	seen *[]any
}

type ctxKey struct{}

func (h ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	*h.seen = append(*h.seen, ctx.Value(ctxKey{}))
	return nil
}

func TestLogPassesItsContextToTheHandler(t *testing.T) {
	for _, level := range []string{"debug", "info", "warn", "error"} {
		t.Run("a "+level+" line reaches the handler with the ctx it was logged under", func(t *testing.T) {
			var seen []any
			l := slog.New(ctxHandler{Handler: slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelDebug}), seen: &seen})
			hostapi.Log(context.WithValue(context.Background(), ctxKey{}, "call"), l, level, "hello", nil)
			if len(seen) != 1 || seen[0] != "call" {
				t.Errorf("the handler saw %v", seen)
			}
		})
	}
}

func TestView(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	t.Run("a view is returned as it is", func(t *testing.T) {
		want := &engine.CallView{}
		if got := hostapi.View[engine.CallView](log, "greet", "presentCall", want, nil); got != want {
			t.Errorf("got %p, want %p", got, want)
		}
	})
	t.Run("a failed hook shows no view and is logged", func(t *testing.T) {
		if got := hostapi.View[engine.CallView](log, "greet", "presentCall", nil, errors.New("boom")); got != nil {
			t.Errorf("got %v", got)
		}
		if !strings.Contains(buf.String(), `level=WARN msg="tool \"greet\" presentCall failed: boom"`) {
			t.Errorf("logged %s", buf.String())
		}
	})
}
