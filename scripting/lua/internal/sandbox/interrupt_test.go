package sandbox

import (
	"context"
	"errors"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// callWith compiles src and runs it with sandbox.Call under ctx.
func callWith(t *testing.T, L *lua.LState, ctx context.Context, src string) error {
	t.Helper()
	fn, err := Load(L, src, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Interruptible(L, ctx)()
	L.Push(fn)
	return Call(L, 0, lua.MultRet)
}

func deadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	t.Cleanup(cancel)
	return ctx
}

func TestAContextStopsScriptsUncatchably(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"a bare loop", `while true do end`},
		{"a loop inside pcall inside a loop", `while true do pcall(function() while true do end end) end`},
		{"pcall in tail position", `return pcall(function() while true do end end)`},
		{"xpcall with a handler", `return xpcall(function() while true do end end, function(e) return "handled" end)`},
		{"a swallowed error", `local ok, err = pcall(function() while true do end end) return "survived", ok, err`},
		{"error handling that loops", `while true do local ok = pcall(error, "x") end`},
		{"coroutine.resume in tail position", `return coroutine.resume(coroutine.create(function() while true do end end))`},
		{"a coroutine.wrap function", `coroutine.wrap(function() while true do end end)()`},
		{"a coroutine inside a coroutine", `return coroutine.resume(coroutine.create(function() return coroutine.resume(coroutine.create(function() while true do end end)) end))`},
		{"a sort comparator inside pcall", `return pcall(table.sort, {3, 2, 1}, function(a, b) while true do end end)`},
		{"a gsub callback", `return pcall(string.gsub, "abc", ".", function() while true do end end)`},
		{"a catastrophic pattern", `return pcall(string.find, string.rep("a", 40), string.rep("a*", 40) .. "b")`},
		{"a gmatch iterator", `for _ in string.rep("a", 40):gmatch(string.rep("a*", 40) .. "b") do end`},
		{"load of a looping chunk", `return pcall(load("while true do end"))`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			L := newState(t, Options{MaxPatternSteps: 1 << 62})
			err := callWith(t, L, deadline(t), tc.src)
			var ie *InterruptedError
			if !errors.As(err, &ie) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Call = %v, want an *InterruptedError for the deadline", err)
			}
			if L.GetTop() != 0 {
				t.Fatalf("%d values left on the stack", L.GetTop())
			}
			if err := callWith(t, L, context.Background(), `assert(1 + 1 == 2)`); err != nil {
				t.Fatalf("the state after the interruption: %v", err)
			}
		})
	}
}

func TestPcallReraisesEvenWithoutCall(t *testing.T) {
	// The host may use L.PCall directly: the script's own pcall in tail
	// position must not turn the interruption into a success.
	L := newState(t, Options{})
	fn, err := Load(L, `return pcall(function() while true do end end)`, "test", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer Interruptible(L, deadline(t))()
	L.Push(fn)
	err = L.PCall(0, lua.MultRet, nil)
	if err == nil {
		t.Fatalf("PCall succeeded with %d results", L.GetTop())
	}
}

func TestCoroutinesGetTheCurrentContext(t *testing.T) {
	t.Run("a coroutine made before any context is interrupted", func(t *testing.T) {
		L := newState(t, Options{})
		if err := callWith(t, L, context.Background(), `co = coroutine.create(function() while true do end end) w = coroutine.wrap(function() while true do end end)`); err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{`return coroutine.resume(co)`, `w()`} {
			if err := callWith(t, L, deadline(t), src); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("%s: Call = %v", src, err)
			}
		}
	})
	t.Run("a coroutine made under an earlier call's context runs under the next one", func(t *testing.T) {
		L := newState(t, Options{})
		first, cancel := context.WithCancel(context.Background())
		if err := callWith(t, L, first, `co = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end end) assert(co() == 1)`); err != nil {
			t.Fatal(err)
		}
		cancel()
		second, cancel2 := context.WithTimeout(context.Background(), time.Minute)
		defer cancel2()
		if err := callWith(t, L, second, `assert(co() == 2)`); err != nil {
			t.Fatalf("resuming under a live context: %v", err)
		}
		if err := callWith(t, L, context.Background(), `assert(co() == 3)`); err != nil {
			t.Fatalf("resuming without a context: %v", err)
		}
	})
}

func TestInterruptibleSetsAndRestoresTheContext(t *testing.T) {
	L := newState(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	restore := Interruptible(L, ctx)
	if L.Context() != ctx {
		t.Fatal("the context is not set")
	}
	inner := Interruptible(L, context.Background())
	if L.Context() != nil {
		t.Fatal("a context that is never done should be removed, to skip the per-instruction check")
	}
	inner()
	if L.Context() != ctx {
		t.Fatal("the outer context is not restored")
	}
	restore()
	if L.Context() != nil {
		t.Fatal("the state still has a context")
	}
}

func TestCallPassesOrdinaryErrorsThrough(t *testing.T) {
	L := newState(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := callWith(t, L, ctx, `error("plain")`)
	var ie *InterruptedError
	var ae *lua.ApiError
	if errors.As(err, &ie) || !errors.As(err, &ae) || lua.LVAsString(ae.Object) != "test:1: plain" {
		t.Fatalf("Call = %#v", err)
	}
	if err := callWith(t, L, ctx, `return 1, 2`); err != nil || L.GetTop() != 2 {
		t.Fatalf("Call = %v with %d results", err, L.GetTop())
	}
	L.SetTop(0)
}

// TestGopherLuaAloneLetsPcallSwallowTheInterruption shows why the sandbox
// replaces pcall: with gopher-lua's own, a pcall in tail position turns the
// interruption into a successful call. If this fails, gopher-lua changed
// and the replacement may no longer be needed.
func TestGopherLuaAloneLetsPcallSwallowTheInterruption(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	L.SetContext(deadline(t))
	if err := L.DoString(`return pcall(function() while true do end end)`); err != nil {
		t.Fatalf("gopher-lua reported the interruption itself: %v", err)
	}
	if ok, msg := L.Get(-2), L.Get(-1).String(); ok != lua.LFalse || msg != "<string>:1: context deadline exceeded" {
		t.Fatalf("pcall returned %v, %q", ok, msg)
	}
}
