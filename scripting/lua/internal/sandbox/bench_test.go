package sandbox

import (
	"context"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// BenchmarkNew measures a fresh sandboxed state, ready to load a plugin.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		L, err := New(Options{})
		if err != nil {
			b.Fatal(err)
		}
		L.Close()
	}
}

// BenchmarkContextCheck measures the per-instruction context check of
// gopher-lua on a tight loop of 100,000 iterations, without a context and
// with one that can be cancelled; ns/iteration is the figure to compare.
func BenchmarkContextCheck(b *testing.B) {
	for _, bc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"none", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 1<<40)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			L, err := New(Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer L.Close()
			fn, err := Load(L, `local n = 0 for i = 1, 100000 do n = n + i end return n`, "loop", 0)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := bc.ctx()
			defer cancel()
			defer Interruptible(L, ctx)()
			b.ResetTimer()
			for b.Loop() {
				L.Push(fn)
				if err := Call(L, 0, 1); err != nil {
					b.Fatal(err)
				}
				L.Pop(1)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/iteration")
		})
	}
}

// BenchmarkGsub measures the sandbox's matcher on a typical substitution.
func BenchmarkGsub(b *testing.B) {
	L, err := New(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer L.Close()
	fn, err := Load(L, `local s = ... return (s:gsub("%s+", " "))`, "gsub", 0)
	if err != nil {
		b.Fatal(err)
	}
	subject := lua.LString("the  quick\tbrown   fox jumps over the lazy dog, again and again and again ")
	b.ReportAllocs()
	for b.Loop() {
		L.Push(fn)
		L.Push(subject)
		if err := L.PCall(1, 1, nil); err != nil {
			b.Fatal(err)
		}
		L.Pop(1)
	}
}
